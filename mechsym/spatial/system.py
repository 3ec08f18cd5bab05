"""A derived tree: its numeric entry points, evaluated by generated C (or numpy), one state or N states.

Arrays in, arrays out: q is (nq,) for one state or (N, nq) for N states (v, a and tau likewise with nv),
and every result has the leading N axis exactly when q has it.

  mass_matrix(q)            H (nv, nv)                      bias(q, v)        C(q, v) v + g(q)  (nonLinearEffects)
  gravity(q)                g(q)                            inverse(q, v, a)  H a + bias  (rnea)
  forward(q, v, tau)        H^-1 (tau - bias), Cholesky     coriolis(q, v)    C with C v + g = bias, dH/dt - 2C skew
  frame_position(q, f)      origin (3,) in the world        frame_rotation(q, f)  (3, 3) frame-to-world
  frame_jacobian(q, f)      (6, nv) world-aligned at the frame origin, linear rows first
  frame_bias(q, v, f)       (6,) classical linear acceleration of the origin at zero accelerations, then angular
  com(q), com_jacobian(q)   (3,), (3, nv)                   kinetic_energy(q, v), potential_energy(q)
  contact_terms(q, v)       H, bias and the Jacobians and biases of the contact frames, in one generated call
  prepare(batched=True)     the library of the dynamics on SIMD lanes built now, not on the first call of 8 states

Every entry point takes params= (name -> value overrides, or the vector params() returned). On C, finite
float64 C-contiguous arrays are read in place by each function's entry (mechsym.codegen.entries; N
states with the GIL released); any other input is converted, or refused with a one-line error naming the
tree, the entry point and the argument.
A floating base's quaternion must have unit norm to 1e-6 (a state further off is refused, naming the
sample): the generated code uses the rotation of q/|q|, so round-off off the unit sphere does not matter.
"""
from __future__ import annotations

import math

import numpy as np

from mechsym.codegen.keys import cache_key, package_source
from mechsym.codegen.backend import resolve
from mechsym.codegen.entries import Entries
from mechsym.core.errors import InputError
from mechsym.core.parameters import ParametersInUse
from mechsym.spatial import run
from mechsym.spatial.declare import Tree, check_size
from mechsym.spatial.derive import Derivation, merge
from mechsym.spatial.elements import element_terms

__all__ = ["TreeSystem"]

QUAT_TOL = 1e-6
# the functions whose batched entry points run 8 states per block on SIMD lanes (mechsym.codegen.c_lanes): the
# dynamics; the frames, poses, centre of mass, energies and Coriolis matrix keep the per-state loop alone. The
# lanes' code costs the compiler about as much again (UR5: 0.9 s of compiler time without lanes, 2.3 s with),
# so it is a second library, built on the first call of 8 states or more, or by prepare(batched=True)
# (mechsym.codegen.callables.compile_spec)
LANES = ("mass", "bias", "gravity", "inverse", "forward", "contact")
_METHODS = {"mass": "mass_matrix", "elements": "element_columns", "poses": "frame_position/frame_rotation",
            "contact": "contact_terms", "energy": "kinetic_energy/potential_energy", "com": "com/com_jacobian"}


class TreeSystem(ParametersInUse):
    """The entry points of a tree (see the module docstring). `contact_frames` are the frames whose
    Jacobians and biases `contact_terms` returns together with H and the bias."""

    def __init__(self, tree: Tree, contact_frames=(), backend=None):
        self.backend = backend = resolve(backend)
        backend.route(compiled=check_size, python=_nothing)(tree)   # (before a compilation: the derivation's size)
        self.tree = tree
        links, frames, self.nq, self.nv = merge(tree, inertia=False)
        self.links = links
        self.frame_names = list(frames)
        # frames at one placement (a link and the joint that moves it) share their generated function
        self._placement = {}
        first = {}
        for name, f in frames.items():
            sig = (f.link, str(f.R), str(f.p))
            self._placement[name] = first.setdefault(sig, len(first))
        self._placement_frames = {k: n for n, k in reversed(list(self._placement.items()))}
        self.floating = tree.floating
        for f in contact_frames:
            self._frame_index(f)
        self.contact_frames = tuple(contact_frames)
        self._derivation = None
        self._libs = {}
        self._specs = {}
        self._zero1 = np.zeros(self.nv)
        # each function's call at the parameters in use (on numpy the rendering of the same spec, built on
        # first use: a structure-only TreeSystem derives nothing)
        self.entries = Entries(backend, self._library_of, self._general, self.nq, self.nv,
                               3 if self.floating else -1, QUAT_TOL, square=("mass", "coriolis"), solves=("forward",))
        self.entries.p = self.params()
        backend.route(compiled=self._library, python=_nothing)("main")

    def _library(self, group):
        """The functions of `group` ("main", or "coriolis": large, built on first use) loaded from the spec
        on the tree's backend (compiled C through the cache, or the numpy rendering)."""
        if group not in self._libs:
            # the lookup key of the cache's index, by construction: the whole declaration walked generically
            # and the source of every mechsym module (the entry itself is named by the source it holds)
            key = cache_key(self.tree, package_source(), group, "contacts " + " ".join(self.contact_frames))
            suffix = "" if group == "main" else f"-{group}"
            self._libs[group] = self.backend.load(f"tree-{self.tree.name}{suffix}", key, lambda: self.spec(group))
        return self._libs[group]

    def _library_of(self, name):
        """The library holding function `name`."""
        return self._library("coriolis" if name == "coriolis" else "main")

    def prepare(self, batched=False):
        """The compiled code ready now: the per-state library (built when the system is made) and, with
        `batched`, the library of the batched entry points on SIMD lanes, which is otherwise built on the
        first call of 8 states or more (before it exists such calls run the per-state loop)."""
        self.backend.route(compiled=lambda: self._library("main").prepare() if batched else None,
                           python=_nothing)()
        return self

    # -- names ---------------------------------------------------------------------------------------
    @property
    def derivation(self) -> Derivation:
        """A symbolic derivation of the tree, for symbolic use (made on first use: a warm C load never needs
        it); the generated code is derived apart, one program per group of functions (`spec`)."""
        if self._derivation is None:
            check_size(self.tree)
            self._derivation = Derivation(self.tree)
        return self._derivation

    @property
    def coordinate_names(self):
        """The names of q, each joint's in turn (base.x ... base.qw for a floating base, a joint's name for
        its one coordinate)."""
        return [n for link in self.links for n in link.joint.coordinate_names()]

    @property
    def speed_names(self):
        """The names of v, each joint's in turn (base.vx ... base.wz for a floating base)."""
        return [n for link in self.links for n in link.joint.speed_names()]

    @property
    def joint_names(self):
        """The joints with coordinates, in the order of q (the free base first; mimic joints have none)."""
        return [link.joint.name for link in self.links if link.joint.nv]

    @property
    def state_names(self) -> list:
        """The state `simulate` integrates: the coordinates, then the speeds."""
        return [*self.coordinate_names, *self.speed_names]

    def simulate(self, state0, t_end, dt=None, rtol=1e-9, atol=None, params=None, method="DOP853", torque=None):
        """Motion from state0 = [q, v] under torque(t, q, v) (zero if None), a RunResult; see mechsym.spatial.run."""
        q0, v0 = np.split(np.atleast_1d(np.asarray(state0, float)), [self.nq])
        return run.simulate(self, q0, v0, t_end, dt, rtol, atol, torque, params, method)

    def check_integrable(self, what):
        """An InputError naming the joint when one has coordinates whose rates are not its speeds (a planar
        joint): `what` (a simulation) integrates q by mechsym.spatial.manifold, which supports the free base
        and joints with dq/dt = v."""
        for link in self.links:
            if not link.joint.rates_are_speeds:
                raise InputError(f"tree '{self.tree.name}': {what} does not support joint '{link.joint.name}' "
                                 f"({type(link.joint).__name__.lower()}: its coordinates' rates are not its speeds)")

    @property
    def declaration(self) -> Tree:
        """The Tree this system was derived from."""
        return self.tree

    def function_sizes(self, group="main") -> dict:
        """name -> values per state of a group's generated functions."""
        return {name: f.size for name, f in self.spec(group).functions.items()}

    def set_params(self, overrides=None):
        """Use the defaults with these overrides from now on (every entry point also takes params=)."""
        super().set_params(overrides)
        self.entries.p = self.params()

    # -- generation ------------------------------------------------------------------------------------
    def spec(self, group="main"):
        """The codegen spec (mechsym.codegen.spec) of `group`: "main" (mass, bias, gravity, inverse, forward,
        com, energy, poses, frameK, contact), "coriolis", or "all" (both, for an export). Every function takes
        the input groups q, v, a (accelerations or torques) and p (the parameters). Each group is derived
        into a straight-line program of its own (spec.shared_program), so its code is a function of the
        declaration alone, whatever else was derived before."""
        if group not in self._specs:
            from mechsym.codegen.spec import Spec, shared_program

            if group == "all":
                functions = {**self.spec("main").functions, **self.spec("coriolis").functions}
            elif group in ("main", "coriolis"):
                check_size(self.tree)
                d = Derivation(self.tree)
                if group == "main":
                    items = self._main_items(d)
                else:
                    items = [("coriolis", [e for row in d.coriolis() for e in row], "C(q, v): C v + g = bias", 0)]
                inputs = [("q", tuple(d.q)), ("v", tuple(d.v)), ("a", tuple(d.a)), ("p", tuple(d.p.values()))]
                functions = shared_program([(n, inputs, out, doc, solve) for n, out, doc, solve in items],
                                           d.s.assignments, "x" if group == "main" else "y", d.s.pieces)
            else:
                raise ValueError(f"tree '{self.tree.name}': no function group {group!r} (main, coriolis, all)")
            self._specs[group] = Spec(f"tree {self.tree.name} {group}", {"nq": self.nq, "nv": self.nv,
                                                                         "npar": len(self.param_names)}, functions, None,
                                      lanes=LANES)
        return self._specs[group]

    def _main_items(self, d):
        """(name, outputs, doc, solve) of the main group's functions."""
        H = [e for row in d.mass_matrix() for e in row]
        loads, values = element_terms(d)             # the force elements' generalised forces join the bias
        bias = [b - f for b, f in zip(d.rnea(d.v, [0] * self.nv), loads)]
        items = [("mass", H, "H (nv x nv, row-major)", 0), ("bias", bias, "C(q, v) v + g(q) - Q_elements", 0),
                 ("gravity", d.rnea([0] * self.nv, [0] * self.nv), "g(q)", 0),
                 ("inverse", [b - f for b, f in zip(d.rnea(d.v, d.a), loads)], "H a + bias (RNEA)", 0),
                 ("forward", H + [a - b for a, b in zip(d.a, bias)], "H^-1 (tau - bias)", self.nv)]
        com, jcom = d.com()
        items.append(("com", com + [e for row in jcom for e in row], "the centre of mass and its Jacobian", 0))
        items.append(("energy", d.energies(), "kinetic and potential energy", 0))
        if values:
            items.append(("elements", values, "each force element's measure, rate and force", 0))
        poses = []
        for name in self.frame_names:
            R, o = d.frame_pose(name)
            poses += list(o) + [e for row in R for e in row]
        items.append(("poses", poses, "each frame's origin and rotation", 0))
        for k, name in sorted(self._placement_frames.items()):
            J = d.frame_jacobian(name)
            items.append((f"frame{k}", [e for row in J for e in row] + d.frame_bias(name),
                          "a frame's Jacobian and bias", 0))
        contact = list(H) + list(bias)
        for name in self.contact_frames:
            contact += [e for row in d.frame_jacobian(name) for e in row] + d.frame_bias(name)
        items.append(("contact", contact, "H, the bias, and the contact frames' Jacobians and biases", 0))
        return items

    # -- evaluation ------------------------------------------------------------------------------------
    def _frame_index(self, frame) -> int:
        try:
            return self.frame_names.index(frame)
        except ValueError:
            raise InputError(f"tree '{self.tree.name}': unknown frame '{frame}' (frames: "
                             f"{', '.join(self.frame_names)})") from None

    def _states(self, x, size, what, where):
        x = np.asarray(x, dtype=float)
        if x.ndim not in (1, 2) or x.shape[-1] != size:
            raise InputError(f"{where}: {what} must have shape ({size},) or (N, {size}), got {x.shape}")
        if not math.isfinite(x.sum()):                 # one reduction; the search only on failure
            bad = np.argwhere(~np.isfinite(np.atleast_2d(x)))
            if len(bad):
                raise InputError(f"{where}: {what} is not finite (sample {bad[0][0]}, entry {bad[0][1]})")
        single = x.ndim == 1
        return (x if x.flags.c_contiguous else np.ascontiguousarray(x)), single

    def _q(self, q, where):
        qs, single = self._states(q, self.nq, "q", where)
        if self.floating:
            if single:
                quat = qs[3:7]
                if abs(math.sqrt(quat @ quat) - 1) <= QUAT_TOL:
                    return qs, single
            quat = np.atleast_2d(qs)[:, 3:7]
            n = np.sqrt(np.einsum("ij,ij->i", quat, quat))
            bad = np.abs(n - 1) > QUAT_TOL
            if bad.any():
                i = int(np.argmax(bad))
                raise InputError(f"{where}: the base quaternion of sample {i} has norm "
                                 f"{n[i]:.9g}, not 1 (to {QUAT_TOL:g}); normalise it "
                                 f"(mechsym.spatial.manifold.normalise)")
        return qs, single

    def _where(self, name):
        """The tree and the entry point (a method) that evaluates function `name`, for messages."""
        method = "frame_jacobian/frame_bias" if name.startswith("frame") else _METHODS.get(name, name)
        return f"tree '{self.tree.name}', {method}"

    def _call(self, name, q, v=None, a=None, params=None):
        """`name` at the states q (v, a): through its entry at the parameters in use, else the general route."""
        if params is None:
            return self.entries.call(name)(q, v, a)
        return self._general(name, q, v, a, params)

    def _general(self, name, q, v=None, a=None, params=None):
        """`name` at the states q (v, a) of any form: checked and converted (the one-line errors), then
        evaluated."""
        where = self._where(name)
        qs, single = self._q(q, where)
        n = 1 if single else len(qs)
        vs = as_ = None
        if v is not None:
            vs, s2 = self._states(v, self.nv, "v", where)
            if (1 if s2 else len(vs)) != n:
                raise InputError(f"{where}: {1 if s2 else len(vs)} velocities for {n} configurations")
        if a is not None:
            as_, s3 = self._states(a, self.nv, "a" if name == "inverse" else "tau", where)
            if (1 if s3 else len(as_)) != n:
                raise InputError(f"{where}: {1 if s3 else len(as_)} accelerations for {n} configurations")
        if params is None:
            p = self.entries.p
        elif isinstance(params, np.ndarray) and params.shape == (len(self.param_names),):
            p = np.ascontiguousarray(params, float)     # a vector from params(): already checked
        else:
            p = self.params(params)
        if vs is None:
            vs = self._zeros(n)
        if as_ is None:
            as_ = self._zeros(n)
        out = self.entries.evaluate(name, n, qs.reshape(n, self.nq), vs.reshape(n, self.nv), as_.reshape(n, self.nv), p)
        if single and name == "forward" and not np.isfinite(out).all():
            raise InputError(f"{where}: the mass matrix is not positive definite at q = {qs.tolist()}")
        if name in ("mass", "coriolis"):
            out = out.reshape((n, self.nv, self.nv))
        return out[0] if single else out

    def _zeros(self, n):
        if n == 1:
            return self._zero1
        return np.zeros((n, self.nv))

    def mass_matrix(self, q, params=None):
        """The joint-space mass matrix H (nv, nv)."""
        return self._call("mass", q, params=params)

    def bias(self, q, v, params=None):
        """C(q, v) v + g(q) (nv,): the nonlinear effects."""
        return self._call("bias", q, v, params=params)

    def gravity(self, q, params=None):
        """The generalised gravity g(q) (nv,)."""
        return self._call("gravity", q, params=params)

    def inverse(self, q, v, a, params=None):
        """The generalised forces H a + bias for accelerations a (recursive Newton-Euler)."""
        return self._call("inverse", q, v, a, params=params)

    def forward(self, q, v, tau, params=None):
        """The accelerations H^-1 (tau - bias) (Cholesky)."""
        return self._call("forward", q, v, tau, params=params)

    def coriolis(self, q, v, params=None):
        """C (nv, nv) with C v + g = bias and dH/dt - 2 C skew-symmetric."""
        return self._call("coriolis", q, v, params=params)

    def com(self, q, params=None):
        """The centre of mass (3,) in the world."""
        out = self._call("com", q, params=params)
        return out[..., :3]

    def com_jacobian(self, q, params=None):
        """The Jacobian (3, nv) of the centre of mass."""
        out = self._call("com", q, params=params)
        return out[..., 3:].reshape(out.shape[:-1] + (3, self.nv))

    def element_columns(self, q, v, params=None) -> dict:
        """The force elements' columns NAME.length, NAME.rate, NAME.force (a torsional one's NAME.angle,
        NAME.rate, NAME.torque; docs/force-elements.md) at states q, v: name -> value (or (N,) values)."""
        if not self.tree.elements:
            return {}
        out = self._call("elements", q, v, params=params)
        names = [f"{e.name}.{c}" for e in self.tree.elements for c in e.columns]
        return {n: out[..., i] for i, n in enumerate(names)}

    def kinetic_energy(self, q, v, params=None):
        """The kinetic energy 1/2 v^T H v (J)."""
        return self._call("energy", q, v, params=params)[..., 0]

    def potential_energy(self, q, params=None):
        """The potential energy of gravity (J)."""
        return self._call("energy", q, params=params)[..., 1]

    def frame_position(self, q, frame, params=None):
        """The origin (3,) of `frame` in the world."""
        k = self._frame_index(frame)
        return self._call("poses", q, params=params)[..., 12 * k:12 * k + 3]

    def frame_rotation(self, q, frame, params=None):
        """The frame-to-world rotation (3, 3) of `frame`."""
        k = self._frame_index(frame)
        out = self._call("poses", q, params=params)[..., 12 * k + 3:12 * k + 12]
        return out.reshape(out.shape[:-1] + (3, 3))

    def frame_jacobian(self, q, frame, params=None):
        """(6, nv) world-aligned Jacobian of `frame` at its origin, linear rows first."""
        k = self._placement[self.frame_names[self._frame_index(frame)]]
        out = self._call(f"frame{k}", q, params=params)[..., :6 * self.nv]
        return out.reshape(out.shape[:-1] + (6, self.nv))

    def frame_bias(self, q, v, frame, params=None):
        """(6,) classical linear acceleration of `frame`'s origin at zero accelerations, then angular."""
        k = self._placement[self.frame_names[self._frame_index(frame)]]
        return self._call(f"frame{k}", q, v, params=params)[..., 6 * self.nv:]

    def contact_terms(self, q, v, params=None):
        """(H, bias, J (.., nc, 6, nv), frame biases (.., nc, 6)) of the contact frames, one generated call."""
        out = self._call("contact", q, v, params=params)
        nv, nc = self.nv, len(self.contact_frames)
        lead = out.shape[:-1]
        H = out[..., :nv * nv].reshape(lead + (nv, nv))
        b = out[..., nv * nv:nv * nv + nv]
        rest = out[..., nv * nv + nv:].reshape(lead + (nc, 6 * nv + 6))
        return H, b, rest[..., :6 * nv].reshape(lead + (nc, 6, nv)), rest[..., 6 * nv:]

    def view(self, path=None, table=None, urdf=None, params=None, axes=False, frames=None):
        """An interactive 3-D view (a plotly Figure; also the self-contained HTML file `path` if given) of the
        tree through the run `table` (default the neutral pose), with the URDF `urdf`'s visual meshes and the
        run's contact forces as arrows (mechsym.core.view.tree_figure, docs/view.md)."""
        from mechsym.core.view import tree_figure, write_html

        fig = tree_figure(self, table, urdf, params, axes, frames)
        if path is not None:
            write_html(fig, path)
        return fig

    @property
    def flops(self) -> dict:
        """Arithmetic operations per state of the generated contact, mass and bias functions."""
        from mechsym.codegen.spec import flops

        counts = self.backend.route(compiled=lambda: {n: f["flops"] for n, f in self._library("main").meta["functions"].items()},
                                    python=lambda: flops(self.spec("main")))()
        return {n: counts[n] for n in ("contact", "mass", "bias")}


def _nothing(*args):
    """What a backend without that route does: nothing."""
    return None
