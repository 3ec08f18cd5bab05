"""Hard contact's forces: the contact LCP at the acceleration level for the contacts touching the plane
(mechsym.contact.hard's module docstring), on the Python route or the compiled one of
mechsym.contact.c_contact."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_solve

from mechsym.contact.hard import HardContacts
from mechsym.contact.hard_problem import (check_state, check_states, factor, friction_problem, min_norm_forces,
                                          sliding_directions, solve, unpack)
from mechsym.contact.spatial_v2 import NO_CONTACT, SLIP, STICK
from mechsym.core.errors import InputError

__all__ = ["ContactSolution", "contact_forces"]


@dataclass
class ContactSolution:
    """Result of `contact_forces`: lam (nc x 3: fn, ft1, ft2 in the plane's frame, N), qdd, the normal gap
    accelerations zeta'' (nc), the state per contact (0 lift-off, 1 stick, 2 slip) and the solver's info."""

    lam: np.ndarray
    qdd: np.ndarray
    accel: np.ndarray
    state: np.ndarray
    info: dict

    def __iter__(self):
        return iter((self.lam, self.qdd))


def contact_forces(q, v, tau, contacts: HardContacts, mu=0.0, active=None, slip_tol=1e-9, guess=None,
                   t=None, route="auto") -> ContactSolution:
    """Contact forces lam and accelerations qdd for the contacts in `active` (names or mask; all by
    default), each treated as touching the plane: the LCP of the module docstring (frictionless for mu = 0).

    q, v, tau: one state (nq, nv, nv), or N states as rows (then every field gets a leading N axis).
    A contact with tangential speed above slip_tol slides (kinetic friction); the others may stick or start
    to slip. guess: the previous solution's positive unknowns (warm start, a boolean mask as `info['z']`).
    route: 'auto' (the compiled route of mechsym.contact.c_contact where the model has one: a derived tree
    on the C backend; N states in one call), 'c' (that route, an InputError where there is none) or
    'python'. Both give the same solution; a state the C route does not decide (no solution, or several
    where the minimum-norm one is taken) is solved by the Python route.
    Raises ContactError (naming t if given, and the contacts) when the LCP has no solution."""
    q, v, tau = (np.asarray(a, float) for a in (q, v, tau))
    if route not in ("auto", "c", "python"):
        raise InputError(f"route must be 'auto', 'c' or 'python', got {route!r}")
    if route != "python":
        c = contacts.c_route() if isinstance(contacts, HardContacts) else None
        if c is not None:
            return _c_forces(c, q, v, tau, contacts, mu, active, slip_tol, guess, t)
        if route == "c":
            raise InputError("the C route of contact_forces needs a derived tree on the C backend whose "
                             "contact frames carry every contact")
    if q.ndim == 2:
        sols = [contact_forces(q[i], v[i], tau[i], contacts, mu, active, slip_tol, None, t, "python")
                for i in range(len(q))]
        return ContactSolution(np.array([s.lam for s in sols]), np.array([s.qdd for s in sols]),
                               np.array([s.accel for s in sols]), np.array([s.state for s in sols]),
                               {"solutions": [s.info for s in sols]})
    hc = contacts
    mu = hc.mu_array(mu)
    mask = hc._select(active)
    model = hc.model
    check_state(model, q, v, tau)
    H, C, Jc, bc = hc.terms(q, v)
    Hf = factor(H)
    free = cho_solve(Hf, tau - C)
    rate = Jc @ v
    base = Jc @ free + bc                                     # (nc, 3): accelerations at zero force
    sliding, sdir = sliding_directions(rate, slip_tol, hc)
    act = list(np.flatnonzero(mask))
    M, qv, G, fr = friction_problem(hc, Hf, Jc, act, mu, sliding, sdir, base)
    z, w, info = solve(M, qv, G, guess, t, hc, act)
    if fr:
        z, w = min_norm_forces(hc, Jc, M, qv, G, z, w, act, fr)
    lam = unpack(hc, z, act, fr, mu, sliding, sdir)
    qdd = free + cho_solve(Hf, G @ z)
    accel = Jc[:, 0, :] @ qdd + bc[:, 0]
    state = _states(lam, rate, mu, sliding, hc, slip_tol)
    info.update(z=z, w=w, M=M, qv=qv)
    sol = ContactSolution(lam, qdd, accel, state, info)
    sol.tangential_accel = np.einsum("nak,k->na", Jc[:, 1:, :], qdd) + bc[:, 1:]
    return sol


def _c_forces(c, q, v, tau, hc, mu, active, slip_tol, guess, t):
    """contact_forces by the C route (one state or N as rows, one compiled call); the states it does not
    decide by the Python route."""
    mu = hc.mu_array(mu)
    mask = hc._select(active)
    single = q.ndim == 1
    model = hc.model
    if single:
        if q.shape != (model.nq,) or v.shape != (model.nv,) or tau.shape != (model.nv,):
            check_state(model, q, v, tau)          # names the shape; finite values are checked in C
        b = c.forces_one(q, v, tau, mu, mask, slip_tol, None if guess is None else np.asarray(guess, bool))
        if b["info"][0] == 0:
            m = int(b["info"][3])
            info = {"route": "c", "warm": bool(b["info"][1]), "pivots": int(b["info"][2]),
                    "violation": float(b["violation"][0]), "z": b["z"][:m].copy(), "w": b["w"][:m].copy(),
                    "status": 0}
            sol = ContactSolution(b["lam"].copy(), b["qdd"].copy(), b["accel"].copy(), b["state"].copy(), info)
            sol.tangential_accel = b["taccel"].copy()
            return sol
    else:
        check_states(model, q, v, tau)
    Q, V, TAU = (np.atleast_2d(a) for a in (q, v, tau))
    g = None
    if guess is not None:
        g = np.zeros((len(Q), c.mmax), np.int32)
        gs = np.atleast_2d(np.asarray(guess, bool))
        g[:, :min(gs.shape[1], c.mmax)] = gs[:, :c.mmax]
    out = c.forces(Q, V, TAU, mu, mask, slip_tol, g)
    for i in np.flatnonzero(out["status"] != 0):         # undecided states (rare): the Python route
        sol = contact_forces(Q[i], V[i], TAU[i], hc, mu, mask, slip_tol, None if guess is None else g[i] > 0, t,
                             "python")
        out["lam"][i], out["qdd"][i], out["accel"][i], out["state"][i] = sol.lam, sol.qdd, sol.accel, sol.state
        out["taccel"][i] = sol.tangential_accel
        m = len(sol.info["z"])
        out["z"][i, :m], out["w"][i, :m], out["size"][i] = sol.info["z"], sol.info["w"], m
    if single:
        m = int(out["size"][0])
        info = {"route": "c", "warm": bool(out["warm"][0]), "pivots": int(out["pivots"][0]),
                "violation": float(out["violation"][0]), "z": out["z"][0, :m], "w": out["w"][0, :m],
                "status": int(out["status"][0])}
        sol = ContactSolution(out["lam"][0], out["qdd"][0], out["accel"][0], out["state"][0], info)
        sol.tangential_accel = out["taccel"][0]
        return sol
    info = {"route": "c", **{k: out[k] for k in ("warm", "pivots", "violation", "z", "w", "size", "status")}}
    sol = ContactSolution(out["lam"], out["qdd"], out["accel"], out["state"], info)
    sol.tangential_accel = out["taccel"]
    return sol


def _states(lam, rate, mu, sliding, hc, slip_tol):
    """0 lift-off (no normal force); in contact 2 slip (sliding, or friction on a facet of the pyramid) or
    1 stick (at rest with friction inside the pyramid; frictionless contacts at rest count as stick)."""
    state = np.full(hc.n, NO_CONTACT)
    on = lam[:, 0] > 0
    reach = (hc.facets.T @ lam[:, 1:].T).max(axis=0)          # largest facet-normal component of ft
    at_cone = (mu > 0) & (reach >= (1 - 1e-9) * mu * hc.facet_dist * lam[:, 0])
    state[on] = np.where(sliding[on] | at_cone[on], SLIP, STICK)
    return state
