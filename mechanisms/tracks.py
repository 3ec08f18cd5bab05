"""The shipped track profiles, by name: the chapter's bump, a rounded step, a washboard and a ramp.

`load(spec)` finds them by name (mechsym.planar.track.load_track with this module's SHIPPED), and takes a CSV file
or an expression in x as well: what `--track` accepts on the command line.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from mechsym.core.errors import InputError
from mechsym.planar.track import X, Track, load_track


def bump(height=0.1, centre=4.0) -> Track:
    """The chapter's soft bump y = 0.1 exp(-(x - 4)^2)."""
    return Track.from_expr(height * sp.exp(-(X - centre) ** 2), "bump",
                           description=f"soft bump y = {height:g} exp(-(x - {centre:g})^2) (the chapter's)")


def washboard(amplitude=0.02, wavelength=1.0, start=2.0, end=6.0) -> Track:
    """A cosine washboard y = A (1 - cos(2 pi (x - start) / wavelength)) on [start, end], flat elsewhere
    (slope continuous at both ends; peak-to-peak 2A)."""
    n_waves = (end - start) / wavelength
    if abs(n_waves - round(n_waves)) > 1e-9:
        raise InputError(f"washboard: [{start}, {end}] must hold a whole number of wavelengths {wavelength}")
    wave = amplitude * (1 - sp.cos(2 * sp.pi * (X - start) / wavelength))
    expr = sp.Piecewise((0, X < start), (wave, X <= end), (0, True))
    return Track.from_expr(expr, "washboard", description=(
        f"washboard y = {amplitude:g} (1 - cos(2 pi (x - {start:g}) / {wavelength:g})) for {start:g} <= x <= {end:g}"))


def step(height=0.1, radius=0.5, at=4.0) -> Track:
    """A step of `height` at x = `at` whose two edges are rounded to `radius`: a concave arc then a convex
    arc, tangent to each other at (at, height/2) and to the flats (exact derivatives, a callable)."""
    if not 0 < height <= 2 * radius:
        raise InputError(f"step: height {height} must be in (0, 2 radius]")
    cos_a = 1 - height / (2 * radius)
    a = radius * math.sqrt(1 - cos_a * cos_a)  # half-width of the rounded riser

    def fn(x):
        x = np.asarray(x, float)
        f, d1, d2 = np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)
        low = (x >= at - a) & (x < at)
        u = x[low] - (at - a)
        root = np.sqrt(radius * radius - u * u)
        f[low], d1[low], d2[low] = radius - root, u / root, radius * radius / root**3
        high = (x >= at) & (x < at + a)
        v = x[high] - (at + a)
        root = np.sqrt(radius * radius - v * v)
        f[high], d1[high], d2[high] = height - radius + root, -v / root, -radius * radius / root**3
        f[x >= at + a] = height
        return f, d1, d2

    return Track.from_callable(fn, "step", description=(
        f"step of {height:g} m at x = {at:g}, edges rounded to {radius:g} m (riser from {at - a:.4f} to {at + a:.4f})"))


def ramp(grade=0.1, start=3.0, radius=1.0) -> Track:
    """A ramp of slope `grade` from x = `start` (y = grade (x - start) beyond), its concave corner rounded
    to `radius` so that a wheel can follow it (exact derivatives, a callable)."""
    alpha = math.atan(grade)
    d = radius * math.tan(alpha / 2)
    x1, x2 = start - d, start + d * math.cos(alpha)

    def fn(x):
        x = np.asarray(x, float)
        f, d1, d2 = np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)
        arc = (x >= x1) & (x < x2)
        u = x[arc] - x1
        root = np.sqrt(radius * radius - u * u)
        f[arc], d1[arc], d2[arc] = radius - root, u / root, radius * radius / root**3
        up = x >= x2
        f[up], d1[up] = grade * (x[up] - start), grade
        return f, d1, d2

    return Track.from_callable(fn, "ramp", description=(
        f"ramp of grade {grade:g} from x = {start:g}, corner rounded to {radius:g} m ({x1:.4f} to {x2:.4f})"))


SHIPPED = {"bump": bump, "step": step, "washboard": washboard, "ramp": ramp}


def load(spec) -> Track:
    """A Track from a Track, a shipped profile's name, a CSV path (*.csv) or an expression in x."""
    return load_track(spec, SHIPPED)
