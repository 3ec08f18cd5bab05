"""Hard (rigid, unilateral) contact: the contact LCP of forces, impulses at contact gain, Coulomb friction.

The contacts of a model against a plane (this module), the shared problem (`hard_problem`), the contact
forces (`hard_forces`: `contact_forces`) and the impulses (`hard_impulse`: `impulse`).

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

from mechsym.core.errors import InputError

__all__ = ["Plane", "Contact", "HardContacts", "ContactError"]


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
