"""The C route of hard contact: mechsym/codegen/runtime/hard_contact.c, compiled through mechsym.codegen.c_backend's
cache and bound to a tree's generated contact terms (ms_contact, ms_poses) by function pointer.

`CRoute(contacts)` serves HardContacts whose model is a derived tree on the C backend with every contact on
one of its contact frames (`available` says whether it does). `forces` and `impulse` are
mechsym.contact.hard's contact_forces and impulse over N states in one call; `held` is the right-hand side of
mechsym.contact.hard_run with the contact states held, the PD hold computed in C, and the guards' per-contact
values; `kin` the gaps and contact rows of a configuration. A state the C route does not decide (a Lemke ray,
a failed check, a non-unique support where the Python route takes its minimum-norm solution, a singular held
system) is reported by its status, and the caller solves that state by the Python route, which also words the
errors.
"""
from __future__ import annotations

import ctypes
import functools
import numpy as np

from mechsym.codegen import c_backend, c_runtime
from mechsym.codegen.keys import cache_key, package_source
from mechsym.codegen.constants import Status

__all__ = ["CRoute", "available", "library"]

SOURCE = "hard_contact.c"  # beside the C runtime (mechsym/codegen/runtime)

_P = ctypes.c_void_p


class _Model(ctypes.Structure):
    """mc_model of hard_contact.c (field for field)."""

    _fields_ = [("contact", _P), ("poses", _P), ("p", _P), ("nq", ctypes.c_int), ("nv", ctypes.c_int),
                ("nframes", ctypes.c_int), ("n", ctypes.c_int), ("k", ctypes.c_int), ("ntan", ctypes.c_int),
                ("floating", ctypes.c_int), ("index", _P), ("pose", _P), ("radius", _P), ("D", _P),
                ("facets", _P), ("facet_dist", ctypes.c_double), ("B", ctypes.c_double * 9),
                ("nx", ctypes.c_double * 9), ("p0", ctypes.c_double * 3)]


@functools.lru_cache(maxsize=1)
def library():
    """The compiled hard_contact.c (cached; its lookup key covers the file through package_source)."""
    text = c_runtime.amalgamate(c_runtime.source(SOURCE))
    key = cache_key(package_source(), "hard-contact")
    dll = c_backend.build_source("hard-contact", key, lambda: (text, {"kind": "hard-contact"})).dll
    dll.mc_forces.argtypes = [_P, ctypes.c_int, _P, _P, _P, _P, _P, ctypes.c_double, _P, ctypes.c_double, _P, _P,
                              _P, _P, _P, _P, _P, _P, _P, _P, _P]
    dll.mc_forces.restype = ctypes.c_int
    dll.mc_impulse.argtypes = [_P, ctypes.c_int, _P, _P, _P, _P, _P, ctypes.c_double, _P, _P, _P, _P, _P, _P, _P, _P]
    dll.mc_impulse.restype = ctypes.c_int
    dll.mc_held_many.argtypes = [_P, ctypes.c_int, _P, _P, _P, _P, _P, ctypes.c_int, _P, _P, ctypes.c_double,
                                 ctypes.c_double, _P, ctypes.c_double, _P, _P, _P, _P]
    dll.mc_held_many.restype = ctypes.c_int
    dll.mc_kin.argtypes = [_P, _P, _P, _P, _P]
    dll.mc_kin.restype = ctypes.c_int
    dll.mc_forces_one.argtypes = [_P, _P, ctypes.c_double, ctypes.c_int, ctypes.c_double]
    dll.mc_forces_one.restype = ctypes.c_int
    dll.mc_held_one.argtypes = [_P, _P, ctypes.c_int, ctypes.c_double, ctypes.c_double, ctypes.c_int, ctypes.c_int,
                                ctypes.c_double]
    dll.mc_held_one.restype = ctypes.c_int
    return dll


def available(contacts) -> bool:
    """Whether the C route serves these HardContacts: a tree on the C backend, every contact on one of the
    frames of its generated contact terms, and a C compiler."""
    system = getattr(contacts.model, "system", None)
    if system is None or contacts._ct_index is None or not hasattr(contacts.model, "normalise"):
        return False
    return system.backend.route(compiled=_built, python=lambda: False)()


def _built() -> bool:
    """Whether hard contact's C library is at hand (cached, or compiled now)."""
    try:
        library()
    except c_backend.CompilerMissing:
        return False
    return True


def _addr(a):
    return a.ctypes.data


def _interrupted(ret):
    """A call over many states that SIGINT stopped (MS_INTERRUPTED) ends as Python's Ctrl-C does; one that
    could not allocate its work arrays (MS_NO_MEMORY) raises MemoryError. Each state's own outcome is its
    status (mechsym.codegen.constants.HardStatus)."""
    if ret == Status.INTERRUPTED:
        raise KeyboardInterrupt
    if ret == Status.NO_MEMORY:
        raise MemoryError("the hard-contact call on C could not allocate its work arrays")


def _addresses(arrays):
    """The arrays' addresses as one C array (void *[]), passed by its own address."""
    arrays = list(arrays)
    table = (ctypes.c_void_p * len(arrays))(*(_addr(a) for a in arrays))
    return _Table(table)


class _Table(int):
    """The address of a ctypes pointer table that keeps the table alive."""

    def __new__(cls, table):
        obj = super().__new__(cls, ctypes.addressof(table))
        obj.table = table
        return obj


class CRoute:
    """The C entry points bound to one HardContacts (see the module docstring)."""

    def __init__(self, contacts):
        hc, model = contacts, contacts.model
        system = model.system
        self.hc, self.system = hc, system
        self.dll = library()
        self.nq, self.nv, self.n, self.k = model.nq, model.nv, hc.n, hc.k
        self.mmax = self.n + (self.k + 1) * self.n
        fns = [system.entries.function(name)[0] for name in ("contact", "poses")]
        self._keep = fns
        self._index = np.ascontiguousarray(hc._ct_index, np.int32)
        self._pose = np.array([system.frame_names.index(c.frame) for c in hc.contacts], np.int32)
        self._radius = np.ascontiguousarray(hc.radius, float)
        self._D = np.ascontiguousarray(hc.D, float)
        self._facets = np.ascontiguousarray(hc.facets, float)
        m = _Model()
        m.contact, m.poses = (ctypes.cast(f, _P).value for f in fns)
        m.nq, m.nv, m.nframes, m.n, m.k = self.nq, self.nv, len(system.contact_frames), self.n, self.k
        m.ntan, m.floating = (1 if hc.planar else 2), int(bool(getattr(model, "floating", False)))
        m.index, m.pose, m.radius = _addr(self._index), _addr(self._pose), _addr(self._radius)
        m.D, m.facets, m.facet_dist = _addr(self._D), _addr(self._facets), float(hc.facet_dist)
        m.B[:] = list(np.ravel(hc.B))
        m.nx[:] = list(np.ravel(hc._nx))
        m.p0[:] = list(hc.plane.point)
        self._m = m
        self._mp = ctypes.addressof(m)
        nv, n, nq, mx = self.nv, self.n, self.nq, max(self.mmax, 3 * self.n)
        size = (nv * nv + nv + m.nframes * (6 * nv + 6) + 12 * len(system.frame_names) + nq + 2 * nv * nv
                + 16 * nv + 32 * n + 4 * nv * mx + 4 * mx * mx + mx * (2 * mx + 2) + 8 * mx + 64)
        self._work = np.zeros(size)
        self._iwork = np.zeros(8 * mx + 64, np.int32)
        self._work_a, self._iwork_a = _addr(self._work), _addr(self._iwork)
        self._one = self._kin = None
        # the held right-hand side's buffers (the hot path passes their addresses)
        self.y = np.zeros(nq + nv)
        # every output of `held` in one buffer (one copy keeps them): y', lam, rates, gap, loss, slip, stick, accn
        sizes = {"ydot": nq + nv, "lam": 3 * n, "rates": 3 * n, "gap": n, "loss": n, "slip": n, "stick": n, "accn": n}
        self.out = np.zeros(sum(sizes.values()))
        self.slices, start = {}, 0
        for name, size in sizes.items():
            self.slices[name] = slice(start, start + size)
            start += size
        views = {name: self.out[sl] for name, sl in self.slices.items()}
        views["lam"], views["rates"] = views["lam"].reshape(n, 3), views["rates"].reshape(n, 3)
        for name, view in views.items():
            setattr(self, name, view)
        self.state = np.zeros(n, np.int32)
        self.mu = np.zeros(n)
        self.fast = np.zeros(n, np.int32)
        self.sdir = np.zeros((n, 2))
        self._tau = np.zeros(nv)
        self.set_controller(None)

    def _params(self):
        self._m.p = self.system.entries.p_address

    # ------------------------------------------------------------ the force LCP over N states

    def forces(self, q, v, tau, mu, active, slip_tol, guess=None, check_tol=1e-9):
        """contact_forces of N states (rows of q, v, tau): a dict of lam (N, n, 3), qdd, accel (N, n), taccel
        (N, n, 2), state (N, n), z and w (N, mmax; the first size[i] entries used), status (N,), warm,
        pivots, size, violation."""
        self._params()
        q, v, tau = (np.ascontiguousarray(a, float) for a in (q, v, tau))
        N, n, mmax = len(q), self.n, self.mmax
        mu = np.ascontiguousarray(mu, float)
        act = np.ascontiguousarray(active, np.int32)
        g = None if guess is None else np.ascontiguousarray(guess, np.int32)
        out = {"lam": np.zeros((N, n, 3)), "qdd": np.zeros((N, self.nv)), "accel": np.zeros((N, n)),
               "taccel": np.zeros((N, n, 2)), "state": np.zeros((N, n), np.int32), "z": np.zeros((N, mmax)),
               "w": np.zeros((N, mmax)), "info": np.zeros((N, 4), np.int32), "violation": np.zeros(N)}
        outputs = (_addr(out[k]) for k in ("lam", "qdd", "accel", "taccel", "state", "z", "w", "info", "violation"))
        _interrupted(self.dll.mc_forces(self._mp, N, _addr(q), _addr(v), _addr(tau), _addr(mu), _addr(act),
                                        float(slip_tol), None if g is None else _addr(g), float(check_tol),
                                        self._work_a, self._iwork_a, *outputs))
        info = out.pop("info")
        out.update(status=info[:, 0], warm=info[:, 1].astype(bool), pivots=info[:, 2], size=info[:, 3])
        return out

    def impulse(self, q, v, mu, e, active, check_tol=1e-9):
        """impulse of N states (rows of q, v): a dict of v_plus (N, nv), Lam (N, n, 3), rate_before and
        rate_after (N, n), state (N, n), status, block (N,)."""
        self._params()
        q, v = (np.ascontiguousarray(a, float) for a in (q, v))
        N, n = len(q), self.n
        mu, e = np.ascontiguousarray(mu, float), np.ascontiguousarray(e, float)
        act = np.ascontiguousarray(active, np.int32)
        out = {"v_plus": np.zeros((N, self.nv)), "Lam": np.zeros((N, n, 3)), "rate_before": np.zeros((N, n)),
               "rate_after": np.zeros((N, n)), "state": np.zeros((N, n), np.int32), "info": np.zeros((N, 4), np.int32)}
        outputs = (_addr(out[k]) for k in ("v_plus", "Lam", "rate_before", "rate_after", "state", "info"))
        _interrupted(self.dll.mc_impulse(self._mp, N, _addr(q), _addr(v), _addr(mu), _addr(e), _addr(act),
                                         float(check_tol), self._work_a, self._iwork_a, *outputs))
        info = out.pop("info")
        out.update(status=info[:, 0], block=info[:, 1].astype(bool), pivots=info[:, 2])
        return out

    def forces_one(self, q, v, tau, mu, active, slip_tol, guess=None, check_tol=1e-9):
        """`forces` of one state through preallocated buffers (a ctypes call with array arguments costs more
        than the solve): a dict of the same fields without the leading axis, views of this object's buffers
        (valid until the next call)."""
        if self._one is None:
            n, nv, mmax = self.n, self.nv, self.mmax
            b = {"q": np.zeros(self.nq), "v": np.zeros(nv), "tau": np.zeros(nv), "mu": np.zeros(n),
                 "act": np.zeros(n, np.int32), "guess": np.zeros(mmax, np.int32), "work": self._work,
                 "iwork": self._iwork, "lam": np.zeros((n, 3)), "qdd": np.zeros(nv), "accel": np.zeros(n),
                 "taccel": np.zeros((n, 2)), "state": np.zeros(n, np.int32), "z": np.zeros(mmax),
                 "w": np.zeros(mmax), "info": np.zeros(4, np.int32), "violation": np.zeros(1)}
            self._one = (b, _addresses(b.values()))
        b, a = self._one
        b["q"][:], b["v"][:], b["tau"][:], b["mu"][:], b["act"][:] = q, v, tau, mu, active
        if guess is not None:
            b["guess"][:] = 0
            m = min(len(guess), self.mmax)
            b["guess"][:m] = guess[:m]
        self._params()
        self.dll.mc_forces_one(self._mp, a, slip_tol, guess is not None, check_tol)
        return b

    # ------------------------------------------------------------ the held states

    def set_controller(self, pd):
        """The PD hold computed in C (an object with idx, q_ref, kp, kd, as mechsym.contact.hard_modes.PDHold),
        or None for tau = 0."""
        self._held = None
        if pd is None:
            self._act, self._qref, self._kp, self._kd = np.zeros(1, np.int32), np.zeros(1), 0.0, 0.0
            self._nact = 0
        else:
            self._act = np.ascontiguousarray(pd.idx, np.int32)
            self._qref = np.ascontiguousarray(pd.q_ref, float)
            self._kp, self._kd, self._nact = float(pd.kp), float(pd.kd), len(pd.idx)

    def kin(self, q):
        """(gaps (n,), rows Jc (n, 3, nv)) at one configuration, or None where q is not finite."""
        if self._kin is None:
            self._kin = (np.zeros(self.nq), np.zeros(self.n), np.zeros((self.n, 3, self.nv)))
            self._kin_a = [_addr(a) for a in self._kin]
        qb, gap, Jc = self._kin
        qb[:] = q
        if not np.isfinite(qb).all():
            return None
        self._params()
        self.dll.mc_kin(self._mp, self._kin_a[0], self._work_a, self._kin_a[1], self._kin_a[2])
        return gap.copy(), Jc.copy()

    def held_forces(self, Y, states, fast, sdir, slow, tau=None):
        """The held states' forces at N states (rows of Y), each with its own states (N, n), slide flags
        (N, n) and directions (N, n, 2), and added tau (N, nv) or None: (lam (N, n, 3), status (N,))."""
        self._params()
        Y = np.ascontiguousarray(Y, float)
        N = len(Y)
        states, fast = (np.ascontiguousarray(a, np.int32) for a in (states, fast))
        sdir = np.ascontiguousarray(sdir, float)
        tau = None if tau is None else np.ascontiguousarray(tau, float)
        lam, status = np.zeros((N, self.n, 3)), np.zeros(N, np.int32)
        _interrupted(self.dll.mc_held_many(self._mp, N, _addr(Y), _addr(states), _addr(fast), _addr(sdir),
                                           _addr(self.mu), self._nact, _addr(self._act), _addr(self._qref),
                                           self._kp, self._kd, None if tau is None else _addr(tau), float(slow),
                                           self._work_a, self._iwork_a, _addr(lam), _addr(status)))
        return lam, status

    def held(self, y, need_gap, slow, tau=None):
        """The held right-hand side at y (into self.ydot, lam, rates, gap, loss, slip, stick, accn) with the
        contact states, mu, fast and sdir set on this object; tau: the generalised force added to the PD
        hold's (None: none). Returns the status."""
        if self._held is None:
            self._held = _addresses((self.y, self.state, self.mu, self.fast, self.sdir, self._act, self._qref,
                                     self._tau, self._work, self._iwork, self.ydot, self.lam, self.rates, self.gap,
                                     self.loss, self.slip, self.stick, self.accn))
        self._params()
        self.y[:] = y
        if tau is not None:
            self._tau[:] = tau
        return self.dll.mc_held_one(self._mp, self._held, self._nact, self._kp, self._kd, tau is not None, need_gap,
                                    slow)
