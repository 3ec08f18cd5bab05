"""Hard contact's impulses at contact gain: the block system, or the impact LCP with restitution and
friction (mechsym.contact.hard's module docstring), on the Python route or the compiled one of
mechsym.contact.c_contact."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_solve

from mechsym.contact.hard import HardContacts
from mechsym.contact.hard_problem import (check_state, check_states, factor, friction_problem, min_norm_forces, solve,
                                          unpack)
from mechsym.contact.spatial_v2 import NO_CONTACT, SLIP, STICK
from mechsym.core.errors import InputError

__all__ = ["ImpulseSolution", "impulse"]


@dataclass
class ImpulseSolution:
    """Result of `impulse`: v_plus, Lam (nc x 3, N s), the normal gap rates before and after, the state."""

    v_plus: np.ndarray
    Lam: np.ndarray
    rate_before: np.ndarray
    rate_after: np.ndarray
    state: np.ndarray
    info: dict

    def __iter__(self):
        return iter((self.v_plus, self.Lam))


def impulse(q, v, contacts: HardContacts, e=0.0, mu=0.0, active=None, t=None, route="auto") -> ImpulseSolution:
    """Impulses at contact gain for the contacts in `active` (all by default) and the velocity after.

    Frictionless, the block system [H -J^T; J 0][v+; Lam] = [H v-; -e J v-] (J the normal rows); when it
    gives a negative Lam (a contact leaving while another lands), the impact LCP
    0 <= Lam _|_ zeta'+ + e zeta'- >= 0. With mu > 0 the velocity-level friction LCP (Stewart-Trinkle) with
    the same normal law. Singular W (redundant contacts): the minimum-norm Lam. e: per contact or one value.
    q, v may hold N states as rows. route: as contact_forces' (the C route takes N states in one call)."""
    q, v = np.asarray(q, float), np.asarray(v, float)
    if route not in ("auto", "c", "python"):
        raise InputError(f"route must be 'auto', 'c' or 'python', got {route!r}")
    if route != "python":
        c = contacts.c_route() if isinstance(contacts, HardContacts) else None
        if c is not None:
            return _c_impulse(c, q, v, contacts, e, mu, active, t)
        if route == "c":
            raise InputError("the C route of impulse needs a derived tree on the C backend whose contact frames "
                             "carry every contact")
    if q.ndim == 2:
        sols = [impulse(q[i], v[i], contacts, e, mu, active, t, "python") for i in range(len(q))]
        return ImpulseSolution(*(np.array([getattr(s, f) for s in sols]) for f in
                                 ("v_plus", "Lam", "rate_before", "rate_after", "state")),
                               {"solutions": [s.info for s in sols]})
    hc = contacts
    mu, e = hc.mu_array(mu), hc.e_array(e)
    mask = hc._select(active)
    model = hc.model
    check_state(model, q, v, np.zeros_like(v))
    H = np.asarray(model.mass_matrix(q), float)
    Hf = factor(H)
    Jc = hc.jacobian(q)
    rate = Jc @ v
    act = list(np.flatnonzero(mask))
    info = {"block": False}
    if act and not np.any(mu[act] > 0):
        Jn = Jc[act, 0, :]
        W = Jn @ cho_solve(Hf, Jn.T)
        rhs = -(1 + e[act]) * rate[act, 0]
        Lam_n = np.linalg.lstsq(W, rhs, rcond=1e-10)[0]        # block system by its Schur complement
        if np.all(Lam_n >= -1e-12 * max(1.0, np.max(np.abs(Lam_n)))) and np.allclose(W @ Lam_n, rhs, rtol=1e-9,
                                                                                       atol=1e-12 * (1 + np.max(np.abs(rhs)))):
            Lam = np.zeros((hc.n, 3))
            Lam[act, 0] = np.maximum(Lam_n, 0.0)
            info["block"] = True
            v_plus = v + cho_solve(Hf, Jn.T @ Lam[act, 0])
            after = Jc @ v_plus
            return ImpulseSolution(v_plus, Lam, rate[:, 0], after[:, 0], _impact_states(Lam, after, mu, hc), info)
    base = rate.copy()
    base[:, 0] = (1 + e) * rate[:, 0]                          # zeta'+ + e zeta'- = W Lam + (1 + e) zeta'-
    no_slide = np.zeros(hc.n, bool)
    M, qv, G, fr = friction_problem(hc, Hf, Jc, act, mu, no_slide, np.zeros((hc.n, 2)), base)
    z, w, sinfo = solve(M, qv, G, None, t, hc, act, "impact LCP")
    if fr:
        z, w = min_norm_forces(hc, Jc, M, qv, G, z, w, act, fr)
    info.update(sinfo)
    Lam = unpack(hc, z, act, fr, mu, no_slide, None)
    v_plus = v + cho_solve(Hf, G @ z)
    after = Jc @ v_plus
    return ImpulseSolution(v_plus, Lam, rate[:, 0], after[:, 0], _impact_states(Lam, after, mu, hc), info)


def _c_impulse(c, q, v, hc, e, mu, active, t):
    """impulse by the C route (one state or N as rows, one compiled call); the states it does not decide by
    the Python route."""
    mu, e = hc.mu_array(mu), hc.e_array(e)
    mask = hc._select(active)
    single = q.ndim == 1
    if single:
        check_state(hc.model, q, v, np.zeros_like(v))
    else:
        check_states(hc.model, q, v, np.zeros_like(v))
    Q, V = np.atleast_2d(q), np.atleast_2d(v)
    out = c.impulse(Q, V, mu, e, mask)
    fields = ("v_plus", "Lam", "rate_before", "rate_after", "state")
    for i in np.flatnonzero(out["status"] != 0):         # undecided states (rare): the Python route
        sol = impulse(Q[i], V[i], hc, e, mu, mask, t, "python")
        for f in fields:
            out[f][i] = getattr(sol, f)
        out["block"][i] = sol.info.get("block", False)
    if single:
        return ImpulseSolution(*(out[f][0] for f in fields), {"route": "c", "block": bool(out["block"][0]),
                                                              "status": int(out["status"][0])})
    return ImpulseSolution(*(out[f] for f in fields),
                           {"route": "c", "block": out["block"], "status": out["status"]})


def _impact_states(Lam, after, mu, hc):
    """After an impulse: 0 no impulse, 1 the contact point at rest tangentially, 2 sliding."""
    speed = np.linalg.norm(after[:, 1:], axis=1)
    state = np.full(hc.n, NO_CONTACT)
    on = Lam[:, 0] > 0
    scale = 1e-9 * (1.0 + np.abs(after[:, 0]) + np.linalg.norm(after, axis=1))
    state[on] = np.where(speed[on] <= scale[on], STICK, SLIP)
    return state
