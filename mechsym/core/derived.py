"""What every derived system answers, whatever its kind: the one model interface.

`mechsym.derive(declaration)` returns a planar `System` (a Mechanism), a `FloatingSystem` (a FloatingBody)
or a `TreeSystem` (a Tree); each follows `DerivedSystem`, and code that runs or studies any of them
(runners, sweeps, contact, the command line) relies on these members only (the parameters, the names, the
backend; `RunnableSystem` adds a simulation from a state), reaching for a kind's own entry points (a
tree's mass matrix, a mechanism's kinematics) where the job is that kind's.
"""
from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from mechsym.core.errors import InputError
from mechsym.core.parameters import Declaration

__all__ = ["DerivedSystem", "RunnableSystem", "derive"]


@runtime_checkable
class DerivedSystem(Protocol):
    """A declaration carried through derivation and bound to generated code on one backend.

    declaration: the Mechanism, FloatingBody or Tree it was derived from. backend: the
    mechsym.codegen.backend.Backend its generated code runs on (chosen once, at derive)."""

    declaration: Any
    backend: Any

    @property
    def param_names(self) -> list[str]:
        """The run-time parameters' names, in the order of every parameter vector."""

    @property
    def coordinate_names(self) -> list[str]:
        """The names of the coordinates of its state."""

    def params(self, overrides=None) -> np.ndarray:
        """The parameter vector: the values in use with `overrides` (name -> value) applied, checked."""

    def set_params(self, overrides=None) -> None:
        """The defaults with `overrides` in use from now on by every entry point called without parameters
        (None: the defaults again); a set that fails its check changes nothing."""

    @property
    def param_values(self) -> np.ndarray:
        """The parameter vector in use."""

    @property
    def flops(self) -> dict:
        """Arithmetic operations per sample of generated functions, name -> count (as the codegen spec
        prints them: the same on every backend)."""


@runtime_checkable
class RunnableSystem(DerivedSystem, Protocol):
    """A derived system that runs forward in time: the runner entry point a study needs besides the
    parameters and names (a planar System, a FloatingSystem, a TreeSystem; a spatial LoopSystem not yet)."""

    @property
    def state_names(self) -> list[str]:
        """The names of the state `simulate` integrates, in the order of `state0`."""

    def simulate(self, state0, t_end, dt=None, rtol=1e-9, atol=None, params=None, method="DOP853", **options):
        """A RunResult: the motion from `state0` over [0, t_end] on the uniform grid of step dt (default
        t_end/1000), integrated by the runner skeleton (mechsym.core.runner) with scipy's `method` to the
        tolerances rtol and atol; `options` are the kind's own (a planar model's forces, a body's load, a
        tree's torque)."""


def derive(declaration, backend=None, *, contact_frames=()):
    """Check a declaration, derive everything symbolic and bind the generated code: the one entry point for
    every kind of model, each returning a system that follows DerivedSystem.

    A `Mechanism` gives its planar `System`; a `mechsym.spatial.floating.FloatingBody` its `FloatingSystem` (a free
    3-D rigid body); a `mechsym.spatial.Tree` (or a URDF read by `mechsym.read_urdf`) its
    `mechsym.spatial.TreeSystem`, with the Jacobians and biases of `contact_frames` among its contact
    terms. backend: "c" (generated C, compiled once into the cache), "numpy", a
    mechsym.codegen.backend.Backend, or None: C where a compiler is present, numpy otherwise; "c" without
    a compiler falls back to numpy with a warning. Each declaration knows its own system
    (`Declaration.derived`), so this layer names none of them."""
    if not isinstance(declaration, Declaration):
        raise InputError(f"cannot derive a {type(declaration).__name__}: a Mechanism, a FloatingBody or a Tree "
                         "(mechsym.read_urdf reads one)")
    return declaration.derived(backend, contact_frames)
