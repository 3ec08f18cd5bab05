"""Hard (rigid, unilateral) contact: the contact LCP of forces, impulses at contact gain, Coulomb friction.

Works on any model that offers the tree protocol (planar models through an adapter; mechsym.contact.box
and mechanisms/chain3_hard.py are examples):

    nq, nv                      sizes of the configuration q and the velocity v
    frames                      names of the frames contacts may sit on
    mass_matrix(q)              H (nv x nv)
    bias(q, v)                  C(q, v) v + g (nv)
    frame_position(q, frame)    world position of the frame's origin (3)
    frame_jacobian(q, frame)    6 x nv, world-aligned, linear rows first
    frame_bias(q, v, frame)     classical acceleration of the frame at v' = 0 (linear then angular, 6)
    qdot(q, v), normalise(q)    optional: configuration rate and projection (identity / q' = v if absent)
    planar                      optional: True for a model moving in the world x-y plane
    actuated                    optional: indices of v driven by the default controller (mechsym.contact.hard_run)

A contact is a frame with an optional sphere radius r against a plane (a point p0 and a unit normal n;
tangents t1, t2 complete a right-handed frame; planar models use t1 = n x z only). With c the frame origin:

    gap  g = n . (c - p0) - r,   gap rate  n . c',   gap acceleration  n . c'' = J_n v' + b_n

Rows of the contact Jacobian (the transpose of the seed's T) are those of the sphere's lowest point moving
with the body: J = B (J_lin + r [n]x J_ang) with B = [n; t1; t2], and b = B (a_lin + r n x a_ang), the
rate of that velocity at v' = 0 (the normal part is exactly n . c'', since n x (.) has no normal component).

Frictionless LCP of the seed (Featherstone 2008, ch. 11): zeta'' = W lam + d, 0 <= lam _|_ zeta'' >= 0,
W = J H^-1 J^T, d = J H^-1 (tau - C) + b. Impulses: [H -J^T; J 0][v+; Lam] = [H v-; -e J v-] (block solution)
and, when a Lam would be negative, the impact LCP 0 <= Lam _|_ zeta'+ + e zeta'- >= 0.

Friction: a linearised cone, the polygon with k vertices mu fn d_j, d_j = cos(2 pi j/k) t1 + sin(2 pi j/k) t2
(k = 4 by default: |ft1| + |ft2| <= mu fn), in the LCP of Stewart and Trinkle: unknowns fn, beta (k per
contact, ft = sum beta_j d_j) and the slip rate gamma, with

    w_n = J_n v' + b_n  _|_ fn,   w_beta = D^T (J_t v' + b_t) + gamma  _|_ beta,   mu fn - sum beta  _|_ gamma

for contacts at rest on the plane (stick, or start of slip); a contact already sliding (tangential speed
above slip_tol) gets the kinetic force -mu fn rho(s) s on the pyramid's boundary (s the unit sliding direction,
rho(s) the polygon's radius along it: 1 at its vertices), folded into its normal column.
The same structure at the velocity level gives frictional impulses. Lemke's method solves all of them
(mechsym.contact.lcp); a ray (no solution, as in Painleve's paradox) raises ContactError naming the contacts.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from mechsym.contact.lcp import LCPError, solve_lcp
from mechsym.contact.spatial_v2 import NO_CONTACT, SLIP, STICK
from mechsym.core.errors import InputError

__all__ = ["Plane", "Contact", "HardContacts", "ContactError", "ContactSolution", "ImpulseSolution",
           "contact_forces", "impulse"]


class ContactError(InputError):
    """The contact problem has no solution (Lemke's ray: Painleve's paradox, inconsistent constraints)."""


def _unit(vec, what):
    vec = np.asarray(vec, float)
    if vec.shape != (3,) or not np.all(np.isfinite(vec)):
        raise InputError(f"{what} must be 3 finite numbers, got {vec!r}")
    norm = np.linalg.norm(vec)
    if norm == 0.0:
        raise InputError(f"{what} must not be zero")
    return vec / norm


@dataclass(frozen=True)
class Plane:
    """A contact plane through `point` with outward `normal` (ground z = 0 by default)."""

    point: tuple = (0.0, 0.0, 0.0)
    normal: tuple = (0.0, 0.0, 1.0)

    def __post_init__(self):
        point = np.asarray(self.point, float)
        if point.shape != (3,) or not np.all(np.isfinite(point)):
            raise InputError(f"plane point must be 3 finite numbers, got {self.point!r}")
        object.__setattr__(self, "point", tuple(point))
        object.__setattr__(self, "normal", tuple(_unit(self.normal, "plane normal")))

    @classmethod
    def tilted(cls, angle, axis="y", point=(0.0, 0.0, 0.0)):
        """The ground z = 0 turned by `angle` (rad) about the world `axis` ('x', 'y' or 'z', or a vector)."""
        from scipy.spatial.transform import Rotation

        vec = {"x": (1, 0, 0), "y": (0, 1, 0), "z": (0, 0, 1)}.get(axis, axis)
        rot = Rotation.from_rotvec(_unit(vec, "tilt axis") * float(angle))
        return cls(point, tuple(rot.apply([0.0, 0.0, 1.0])))

    def basis(self, planar=False):
        """Rows n, t1, t2 (right-handed). t1: world x projected onto the plane (y if n is along x); for a
        planar model t1 = n x z, the tangent in the plane of motion."""
        n = np.asarray(self.normal)
        if planar:
            if abs(n[2]) > 1e-12:
                raise InputError(f"a planar model needs a plane normal in the x-y plane, got {self.normal}")
            t1 = np.cross(n, [0.0, 0.0, 1.0])
        else:
            ref = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
            t1 = ref - n * (n @ ref)
        t1 /= np.linalg.norm(t1)
        return np.vstack([n, t1, np.cross(n, t1)])


@dataclass(frozen=True)
class Contact:
    """A contact: `frame` of the model (its origin is the sphere's centre), named `name`, radius in m."""

    name: str
    frame: str
    radius: float = 0.0


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


class HardContacts:
    """Contacts of a model against one plane: gaps, Jacobians and biases, the force LCP and impulses.

    model: an object of the tree protocol (module docstring); contacts: Contact objects, or a dict
    name -> frame or name -> (frame, radius); plane: a Plane (ground z = 0 by default); k: facets of the
    friction pyramid (>= 3 in 3-D; planar models always use 2, +-t1)."""

    def __init__(self, model, contacts, plane=None, k=4):
        self.model = model
        plane = Plane() if plane is None else plane
        if not isinstance(plane, Plane):
            raise InputError(f"plane must be a mechsym.contact.hard.Plane, got {type(plane).__name__}")
        if isinstance(contacts, dict):
            contacts = [Contact(n, *(f if isinstance(f, tuple) else (f,))) for n, f in contacts.items()]
        contacts = list(contacts)
        if not contacts:
            raise InputError("no contacts given")
        frames = list(getattr(model, "frames", []))
        names = set()
        for c in contacts:
            if not isinstance(c, Contact):
                raise InputError(f"contacts must be Contact(name, frame, radius), got {c!r}")
            if c.frame not in frames:
                raise InputError(f"contact '{c.name}': the model has no frame '{c.frame}' (frames: {', '.join(frames)})")
            if not (np.isfinite(c.radius) and c.radius >= 0):
                raise InputError(f"contact '{c.name}': radius must be >= 0, got {c.radius}")
            if c.name in names:
                raise InputError(f"contact name '{c.name}' given twice")
            names.add(c.name)
        self.contacts = contacts
        self._all = np.ones(len(contacts), bool)
        self._all.flags.writeable = False
        self._mu_cache = {}
        self.names = [c.name for c in contacts]
        self.n = len(contacts)
        self.plane = plane
        self.planar = bool(getattr(model, "planar", False))
        self.B = plane.basis(self.planar)
        self.radius = np.array([c.radius for c in contacts])
        k = 2 if self.planar else int(k)
        if k < 2 or (not self.planar and k < 3):
            raise InputError(f"friction pyramid needs at least 3 facets, got {k}")
        ang = 2 * np.pi * np.arange(k) / k
        self.k = k
        self.D = np.vstack([np.cos(ang), np.sin(ang)])        # 2 x k, in (t1, t2)
        # the polygon's facets: outward normals and their distance per unit mu fn (planar: +-t1 at 1)
        mid = ang if self.planar else ang + np.pi / k
        self.facets = np.vstack([np.cos(mid), np.sin(mid)])
        self.facet_dist = 1.0 if self.planar else float(np.cos(np.pi / k))
        frames = list(getattr(model, "contact_frames", ()))
        self._ct_index = ([frames.index(c.frame) for c in contacts]
                          if hasattr(model, "contact_terms") and all(c.frame in frames for c in contacts) else None)
        self._nx = np.array([[0, -self.B[0, 2], self.B[0, 1]], [self.B[0, 2], 0, -self.B[0, 0]],
                             [-self.B[0, 1], self.B[0, 0], 0]])   # [n]x

    def c_route(self):
        """The compiled route (mechsym.contact.c_contact.CRoute) for these contacts, or None where the model
        has none (it needs a derived tree on the C backend carrying every contact on its contact frames)."""
        if not hasattr(self, "_c_route"):
            from mechsym.contact import c_contact

            self._c_route = c_contact.CRoute(self) if c_contact.available(self) else None
        return self._c_route

    # ---------------------------------------------------------------- geometry

    def _kin(self, q):
        """(gaps, rows) of one configuration by the compiled route, or None (no route, N states, bad q)."""
        c = self.c_route()
        if c is None or np.ndim(q) != 1 or np.shape(q) != (self.model.nq,):
            return None
        return c.kin(q)

    def gaps(self, q):
        """Signed distances (m) of the spheres from the plane, along its normal."""
        kin = self._kin(q)
        if kin is not None:
            return kin[0]
        p0, n = np.asarray(self.plane.point), self.B[0]
        pos = np.array([self.model.frame_position(q, c.frame) for c in self.contacts])
        return (pos - p0) @ n - self.radius

    def jacobian_one(self, q, i):
        """(3, nv): rows n, t1, t2 of the velocity of contact i's lowest point (the sphere's, or the frame's)."""
        kin = self._kin(q)
        if kin is not None:
            return kin[1][i]
        c = self.contacts[i]
        J = np.asarray(self.model.frame_jacobian(q, c.frame), float)
        return self.B @ (J[:3] + c.radius * self._nx @ J[3:]) if c.radius else self.B @ J[:3]

    def bias_one(self, q, v, i):
        """(3,): the rate of jacobian_one(q, i) v at v' = 0 (normal: n . c'')."""
        c = self.contacts[i]
        a = np.asarray(self.model.frame_bias(q, v, c.frame), float)
        return self.B @ (a[:3] + c.radius * self._nx @ a[3:]) if c.radius else self.B @ a[:3]

    def reach(self, s):
        """Distance from the centre to the friction pyramid's boundary along unit tangential directions s
        (..., 2), per unit mu fn: the kinetic force of a sliding contact is -mu fn reach(s) s, on the same
        polygon as the sticking forces (1 on a planar model and at the pyramid's vertices)."""
        return self.facet_dist / np.max(np.asarray(s) @ self.facets, axis=-1)

    def terms(self, q, v):
        """(H, C v + g, Jc (nc, 3, nv), bc (nc, 3)): the dynamics and every contact's rows and biases, from the
        model's `contact_terms` in one call where it has one covering these frames."""
        model = self.model
        if self._ct_index is not None:
            H, C, J6, a6 = model.contact_terms(q, v)
            J6, a6 = J6[self._ct_index], a6[self._ct_index]
        else:
            H, C = model.mass_matrix(q), model.bias(q, v)
            J6 = np.array([model.frame_jacobian(q, c.frame) for c in self.contacts])
            a6 = np.array([model.frame_bias(q, v, c.frame) for c in self.contacts])
        r = self.radius
        Jc = np.einsum("ab,nbk->nak", self.B, J6[:, :3] + r[:, None, None] * np.einsum("ab,nbk->nak", self._nx, J6[:, 3:]))
        bc = (a6[:, :3] + r[:, None] * (a6[:, 3:] @ self._nx.T)) @ self.B.T
        return np.asarray(H, float), np.asarray(C, float), Jc, bc

    def speed_scale(self, q):
        """The model's own speed scale sqrt(a l) (m/s) at the configuration q: a the largest acceleration of a
        contact point with the model at rest under its weight alone (tau = 0, no contact force: g for a free
        body or a floating robot), l the largest distance between two contact points (for a single contact,
        its distance from the model's centre of mass). Thresholds of the event-driven run are given relative
        to it, so that they mean the same on a model a thousand times larger."""
        q = np.asarray(q, float)
        H, C, Jc, bc = self.terms(q, np.zeros(self.model.nv))
        a = float(np.max(np.linalg.norm(Jc @ np.linalg.solve(H, -C) + bc, axis=1)))
        pos = np.array([self.model.frame_position(q, c.frame) for c in self.contacts], float)
        if self.n == 1 and hasattr(self.model, "com"):
            pos = np.vstack([pos, np.asarray(self.model.com(q), float)[:pos.shape[1]]])
        length = float(np.max(np.linalg.norm(pos[:, None] - pos[None], axis=-1)))
        if not (np.isfinite(a * length) and a * length > 0):
            raise InputError(f"the model has no speed scale at its initial configuration (acceleration {a:.3g} "
                             f"m/s^2 under its weight, contact spread {length:.3g} m)")
        return float(np.sqrt(a * length))

    def jacobian(self, q):
        """(nc, 3, nv): `jacobian_one` of every contact."""
        kin = self._kin(q)
        if kin is not None:
            return kin[1]
        return np.array([self.jacobian_one(q, i) for i in range(self.n)])

    def bias(self, q, v):
        """(nc, 3): `bias_one` of every contact."""
        return np.array([self.bias_one(q, v, i) for i in range(self.n)])

    def rates_normal(self, q, v):
        """(nc,): the normal gap rates n . c' of the contact points."""
        return self.jacobian(q)[:, 0] @ v

    def rates(self, q, v):
        """(nc, 3): normal gap rate and tangential velocities of the contact points."""
        return self.jacobian(q) @ v

    # ---------------------------------------------------------------- checks

    def mu_array(self, mu):
        """Friction coefficients (n,) from one number or one per contact; each finite and >= 0, else an
        InputError naming the contact."""
        if type(mu) is float and mu >= 0 and math.isfinite(mu):   # the common case, without numpy's checks
            cached = self._mu_cache.get(mu)
            if cached is None:
                cached = self._mu_cache[mu] = np.full(self.n, mu)
                cached.flags.writeable = False
            return cached
        mu = np.broadcast_to(np.asarray(mu, float), (self.n,)).copy() if np.ndim(mu) == 0 or len(np.atleast_1d(mu)) == self.n \
            else None
        if mu is None:
            raise InputError(f"mu must be a number or one value per contact ({self.n})")
        bad = ~np.isfinite(mu) | (mu < 0)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(f"friction coefficient mu of contact '{self.names[i]}' must be >= 0, got {mu[i]}")
        return mu

    def e_array(self, e):
        """Restitution coefficients (n,) from one number or one per contact; each in [0, 1], else an
        InputError naming the contact."""
        e = np.asarray(e, float)
        if e.ndim and len(e) != self.n:
            raise InputError(f"restitution e must be a number or one value per contact ({self.n})")
        e = np.broadcast_to(e, (self.n,)).copy()
        bad = ~np.isfinite(e) | (e < 0) | (e > 1)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(f"restitution e of contact '{self.names[i]}' must be in [0, 1], got {e[i]}")
        return e

    def _select(self, active):
        if active is None:
            return self._all
        if isinstance(active, np.ndarray) and active.dtype == bool and active.shape == (self.n,):
            return active
        if isinstance(active, (list, tuple)) and active and isinstance(active[0], str):
            unknown = [a for a in active if a not in self.names]
            if unknown:
                raise InputError(f"unknown contact(s) {unknown} (contacts: {', '.join(self.names)})")
            return np.isin(self.names, active)
        mask = np.asarray(active, bool)
        if mask.shape != (self.n,):
            raise InputError(f"active must be contact names or a mask of {self.n} values")
        return mask

    # ---------------------------------------------------------------- assembly


def _factor(H):
    try:
        return cho_factor(H)
    except np.linalg.LinAlgError:
        raise InputError("the mass matrix is not positive definite at this configuration") from None


def _friction_problem(hc, Hf, Jc, act, mu, sliding, sdir, base_rate):
    """LCP (M, qv) and the map G (nv x m) from unknowns to generalised force/impulse.

    Jc: (nc, 3, nv) contact Jacobians; act: indices of the contacts in the problem; mu: per contact;
    sliding: per contact, True where a kinetic force -mu fn s applies (sdir: (nc, 2) unit directions in
    (t1, t2)); base_rate: (nc, 3) the normal/tangential rates at zero unknowns (d and b_t, or the
    restitution-shifted pre-impact rates). Unknown layout: fn (na), beta (k per frictional resting contact),
    gamma (one per frictional resting contact)."""
    k, D = hc.k, hc.D
    na = len(act)
    fr = [i for i in act if mu[i] > 0 and not sliding[i]]
    nf = len(fr)
    nv = Jc.shape[2]
    Jn = Jc[act, 0, :]                                        # na x nv
    Gn = Jn.T.copy()                                          # force of fn on the model
    for j, i in enumerate(act):
        if mu[i] > 0 and sliding[i]:
            Gn[:, j] -= mu[i] * hc.reach(sdir[i]) * (Jc[i, 1:, :].T @ sdir[i])
    Jd = np.zeros((k * nf, nv))
    for j, i in enumerate(fr):
        Jd[k * j:k * (j + 1)] = D.T @ Jc[i, 1:, :]
    G = np.hstack([Gn, Jd.T])                                 # nv x (na + k nf)
    HiG = cho_solve(Hf, G)
    rows = np.vstack([Jn, Jd])
    m = na + (k + 1) * nf
    M = np.zeros((m, m))
    M[:na + k * nf, :na + k * nf] = rows @ HiG
    qv = np.zeros(m)
    qv[:na] = base_rate[act, 0]
    for j, i in enumerate(fr):
        sl = slice(na + k * j, na + k * (j + 1))
        qv[sl] = D.T @ base_rate[i, 1:]
        M[sl, na + k * nf + j] = 1.0                          # + gamma
        g = na + k * nf + j
        M[g, act.index(i)] = mu[i]                            # mu fn - sum beta
        M[g, sl] = -1.0
    return M, qv, np.hstack([G, np.zeros((nv, nf))]), fr


def _min_norm_forces(hc, Jc, M, qv, G, z, w, act, fr, tol=1e-9):
    """With friction: among the contact forces of the frictional contacts in contact that give the same
    generalised force, the one of minimum norm (a symmetric body on redundant contacts gets symmetric loads),
    written back as pyramid weights and kept only if it still satisfies the LCP. A resting contact (zero
    slip rate) varies its fn and ft freely; a slipping one (positive slip rate: its force on the pyramid's
    boundary, opposite to a slip velocity that the same generalised force leaves unchanged) keeps its ratio
    ft = c fn (c from its pyramid weights, or from the pyramid's edges of least slip rate where fn = 0), so it
    varies fn alone, weighted by |(1, c)| so that the norm is that of its force."""
    from scipy.optimize import nnls

    na, k, nf = len(act), hc.k, len(fr)
    gamma = z[na + k * nf:]
    scale = tol * (np.max(np.abs(qv), initial=0.0) + np.max(np.abs(M), initial=0.0) * np.max(np.abs(z), initial=0.0))
    touching = [j for j, i in enumerate(fr) if w[act.index(i)] <= scale]
    free = [j for j in touching if gamma[j] <= scale]
    slid = [j for j in touching if gamma[j] > scale]
    if len(free) + len(slid) < 2:
        return z, w
    cols, x, weight = [], [], []
    for j in free:
        i = fr[j]
        cols.append(Jc[i].T)
        x += [z[act.index(i)], *(hc.D @ z[na + k * j:na + k * (j + 1)])]
        weight += [1.0, 1.0, 1.0]
    ratio = {}
    for j in slid:
        i = fr[j]
        fn = z[act.index(i)]
        if fn > scale:
            ratio[j] = hc.D @ z[na + k * j:na + k * (j + 1)] / fn
        else:   # no force yet: the pyramid's edges of least slip rate (w_beta = 0) carry any it gets
            edges = w[na + k * j:na + k * (j + 1)] <= scale
            ratio[j] = M[na + k * nf + j, act.index(i)] * hc.D[:, edges].mean(axis=1)
        cols.append((Jc[i, 0] + ratio[j] @ Jc[i, 1:])[:, None])
        x.append(fn)
        weight.append(float(np.sqrt(1.0 + ratio[j] @ ratio[j])))
    A, x, weight = np.hstack(cols), np.array(x), np.array(weight)
    x2 = np.linalg.lstsq(A / weight, A @ x, rcond=1e-10)[0] / weight
    z2 = z.copy()
    for n_, j in enumerate(free):
        i, row = fr[j], x2[3 * n_:3 * n_ + 3]
        z2[act.index(i)] = row[0]
        z2[na + k * j:na + k * (j + 1)] = nnls(hc.D, row[1:])[0]
    for n_, j in enumerate(slid):
        i, fn = fr[j], x2[3 * len(free) + n_]
        z2[act.index(i)] = fn
        z2[na + k * j:na + k * (j + 1)] = nnls(hc.D, ratio[j] * fn)[0]
    from mechsym.contact.lcp import lcp_residual

    w2, viol = lcp_residual(M, qv, z2)
    if viol <= tol and np.allclose(G @ z2, G @ z, rtol=1e-9, atol=1e-12 * (1 + np.max(np.abs(G @ z)))):
        return z2, w2
    return z, w


def _unpack(hc, z, act, fr, mu, sliding, sdir):
    """(nc, 3) forces (fn, ft1, ft2) from the LCP unknowns."""
    lam = np.zeros((hc.n, 3))
    na, k = len(act), hc.k
    for j, i in enumerate(act):
        lam[i, 0] = z[j]
        if mu[i] > 0 and sliding[i]:
            lam[i, 1:] = -mu[i] * hc.reach(sdir[i]) * z[j] * sdir[i]
    for j, i in enumerate(fr):
        lam[i, 1:] = hc.D @ z[na + k * j:na + k * (j + 1)]
    return lam


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
    _check_state(model, q, v, tau)
    H, C, Jc, bc = hc.terms(q, v)
    Hf = _factor(H)
    free = cho_solve(Hf, tau - C)
    rate = Jc @ v
    base = Jc @ free + bc                                     # (nc, 3): accelerations at zero force
    sliding, sdir = _sliding(rate, slip_tol, hc)
    act = list(np.flatnonzero(mask))
    M, qv, G, fr = _friction_problem(hc, Hf, Jc, act, mu, sliding, sdir, base)
    z, w, info = _solve(M, qv, G, guess, t, hc, act)
    if fr:
        z, w = _min_norm_forces(hc, Jc, M, qv, G, z, w, act, fr)
    lam = _unpack(hc, z, act, fr, mu, sliding, sdir)
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
            _check_state(model, q, v, tau)          # names the shape; finite values are checked in C
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
        _check_states(model, q, v, tau)
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
    _check_state(model, q, v, np.zeros_like(v))
    H = np.asarray(model.mass_matrix(q), float)
    Hf = _factor(H)
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
    M, qv, G, fr = _friction_problem(hc, Hf, Jc, act, mu, no_slide, np.zeros((hc.n, 2)), base)
    z, w, sinfo = _solve(M, qv, G, None, t, hc, act, "impact LCP")
    if fr:
        z, w = _min_norm_forces(hc, Jc, M, qv, G, z, w, act, fr)
    info.update(sinfo)
    Lam = _unpack(hc, z, act, fr, mu, no_slide, None)
    v_plus = v + cho_solve(Hf, G @ z)
    after = Jc @ v_plus
    return ImpulseSolution(v_plus, Lam, rate[:, 0], after[:, 0], _impact_states(Lam, after, mu, hc), info)


def _check_state(model, q, v, tau):
    if q.shape == (model.nq,) and v.shape == tau.shape == (model.nv,) and math.isfinite(q @ q + v @ v + tau @ tau):
        return
    for name, arr, size in (("q", q, model.nq), ("v", v, model.nv), ("tau", tau, model.nv)):
        if arr.shape != (size,):
            raise InputError(f"{name} must have {size} values, got shape {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise InputError(f"{name} must be finite, got {arr}")


def _c_impulse(c, q, v, hc, e, mu, active, t):
    """impulse by the C route (one state or N as rows, one compiled call); the states it does not decide by
    the Python route."""
    mu, e = hc.mu_array(mu), hc.e_array(e)
    mask = hc._select(active)
    single = q.ndim == 1
    if single:
        _check_state(hc.model, q, v, np.zeros_like(v))
    else:
        _check_states(hc.model, q, v, np.zeros_like(v))
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


def _check_states(model, q, v, tau):
    """N states as rows: shapes and finite values, the first bad sample named."""
    n = len(q) if q.ndim == 2 else None
    for name, arr, size in (("q", q, model.nq), ("v", v, model.nv), ("tau", tau, model.nv)):
        if arr.ndim != 2 or arr.shape != (n, size):
            raise InputError(f"{name} must have shape ({n}, {size}) for {n} states, got {arr.shape}")
        if not np.isfinite(arr).all():
            raise InputError(f"{name} of sample {int(np.argwhere(~np.isfinite(arr))[0][0])} is not finite")


def _sliding(rate, slip_tol, hc):
    speed = np.linalg.norm(rate[:, 1:], axis=1)
    sliding = speed > slip_tol
    sdir = np.where(sliding[:, None], rate[:, 1:] / np.where(sliding, speed, 1.0)[:, None], 0.0)
    return sliding, sdir


def _solve(M, qv, G, guess, t, hc, act, what="contact LCP"):
    """solve_lcp with the minimum-norm choice among solutions giving the same generalised force G z."""
    where = f" at t = {t:.9g} s" if t is not None else ""
    names = ", ".join(hc.names[i] for i in act)
    try:
        return solve_lcp(M, qv, guess=guess, what=what, keep=G)
    except LCPError as exc:
        raise ContactError(f"{exc}{where} (contacts: {names})") from None


def _states(lam, rate, mu, sliding, hc, slip_tol):
    """0 lift-off (no normal force); in contact 2 slip (sliding, or friction on a facet of the pyramid) or
    1 stick (at rest with friction inside the pyramid; frictionless contacts at rest count as stick)."""
    state = np.full(hc.n, NO_CONTACT)
    on = lam[:, 0] > 0
    reach = (hc.facets.T @ lam[:, 1:].T).max(axis=0)          # largest facet-normal component of ft
    at_cone = (mu > 0) & (reach >= (1 - 1e-9) * mu * hc.facet_dist * lam[:, 0])
    state[on] = np.where(sliding[on] | at_cone[on], SLIP, STICK)
    return state


def _impact_states(Lam, after, mu, hc):
    """After an impulse: 0 no impulse, 1 the contact point at rest tangentially, 2 sliding."""
    speed = np.linalg.norm(after[:, 1:], axis=1)
    state = np.full(hc.n, NO_CONTACT)
    on = Lam[:, 0] > 0
    scale = 1e-9 * (1.0 + np.abs(after[:, 0]) + np.linalg.norm(after, axis=1))
    state[on] = np.where(speed[on] <= scale[on], STICK, SLIP)
    return state
