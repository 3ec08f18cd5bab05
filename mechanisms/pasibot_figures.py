"""The chapter's PASIBOT figures (11-14 and 17-19) as PNG with a CSV beside each, and one step as an
animation, from the analyses of mechanisms/pasibot_study.py.

    figures(out_dir, which=["11", "13"])    # name -> Table of the plotted data
    animate("gait.gif")
"""
from __future__ import annotations

import math
import os
import warnings

import numpy as np

from mechanisms import pasibot as pb
from mechanisms.pasibot_study import SlipModel, forward_run, period
from mechsym.core.errors import InputError
from mechsym.core.output import announce, save_animation, save_figure
from mechsym.core.progress import bar
from mechsym.core.results import Table
from mechsym.core.timegrid import uniform_grid


def _plot(path, x, series, xlabel, ylabel, title):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    for k, (label, (xs, ys)) in enumerate(series.items()):  # styles too, so that coincident curves show
        ax.plot(xs if xs is not None else x, ys, ("-", "--", "-.", ":")[k % 4], label=label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title)
    fig.tight_layout()
    save_figure(fig, path, dpi=120)


def _save(out_dir, name, table):
    path = os.path.join(out_dir, f"{name}.csv")
    table.to_csv(path)
    return path


def step_inverse(theta8, omega, params=None, backend=None):
    """Inverse dynamics over step 0 (unprimed support) on the closed interval [pi/2, 3pi/2]: the end
    point belongs to this step, before the support changes (where the torque jumps with M')."""
    return pb.system("foot", "unprimed", backend).inverse(theta8, omega, params=params)


def figure11(out_dir, params=None, omegas=(1, 2, 3, 4, 5), samples=361, backend=None):
    """Motor torque against t/T over one step for several crank speeds (no slip)."""
    theta = np.linspace(math.pi / 2, 1.5 * math.pi, samples)
    table = step_inverse(theta, list(omegas), params, backend)
    cols = {"t/T": (theta - theta[0]) / math.pi, "theta8": theta}
    for i, w in enumerate(omegas):
        cols[f"T8_omega{w:g}"] = table["T8"][i * samples:(i + 1) * samples]
    out = Table(cols, {"theta8": "rad"}, "Figure 11")
    _plot(os.path.join(out_dir, "fig11.png"), cols["t/T"], {f"ω8 = {w:g} rad/s": (None, cols[f"T8_omega{w:g}"]) for w in omegas},
          "t / T", "T8 [N m]", "Fig. 11: motor torque over one step, several crank speeds")
    _save(out_dir, "fig11", out)
    return out


def figure12(out_dir, params=None, omega=3.0, loads=(0, 5, 10, 15), samples=361, backend=None):
    """Motor torque against t/T at 3 rad/s for several loads added to the hip (no slip)."""
    theta = np.linspace(math.pi / 2, 1.5 * math.pi, samples)
    cols = {"t/T": (theta - theta[0]) / math.pi, "theta8": theta}
    for load in loads:
        p = dict(params or {}, m_load=load)
        cols[f"T8_load{load:g}kg"] = step_inverse(theta, omega, p, backend)["T8"]
    out = Table(cols, {"theta8": "rad"}, "Figure 12")
    _plot(os.path.join(out_dir, "fig12.png"), cols["t/T"], {f"+{l:g} kg": (None, cols[f"T8_load{l:g}kg"]) for l in loads},
          "t / T", "T8 [N m]", f"Fig. 12: motor torque at {omega:g} rad/s, loads added to the hip")
    _save(out_dir, "fig12", out)
    return out


def _forward_figure(out_dir, name, runs, t_end, dt, title, label):
    grid = uniform_grid(t_end, dt)
    cols, series = {"t": grid}, {}
    for key, run in runs.items():
        y = np.full(len(grid), np.nan)
        inside = grid <= run.t_end
        y[inside] = run.sample(grid[inside])[0][:, 0]
        cols[f"theta8_{key}"] = y
        series[label(key)] = (None, y)
    out = Table(cols, {"t": "s"}, title)
    _plot(os.path.join(out_dir, f"{name}.png"), grid, series, "t [s]", "θ8 [rad]", title)
    _save(out_dir, name, out)
    return out


def figure13(out_dir, params=None, torques=(0.5, 0.8, 0.84, 0.85, 0.9, 1.0), t_end=3.0, dt=0.005, backend=None):
    """Crank angle from rest at pi/2 for several constant torques (forward dynamics, no slip)."""
    runs = {f"T{T:g}": forward_run(T, math.pi / 2, 0.0, t_end, params, rtol=1e-9, backend=backend) for T in torques}
    return _forward_figure(out_dir, "fig13", runs, t_end, dt, "Fig. 13: crank angle from rest, constant torques",
                           lambda k: f"T8 = {k[1:]} N m")


def figure14(out_dir, params=None, scales=(0.5, 1.0, 1.5, 2.0), torque=1.0, t_end=3.0, dt=0.005, backend=None):
    """Crank angle from rest at pi/2 under T8 = 1 N m, the bar density scaled (total mass varied)."""
    base = pb.system("foot").mechanism.resolve_parameters(params)
    runs, masses = {}, {}
    for sc in scales:
        p = dict(params or {}, density=base["density"] * sc)
        runs[f"x{sc:g}"] = forward_run(torque, math.pi / 2, 0.0, t_end, p, rtol=1e-9, backend=backend)
        masses[f"x{sc:g}"] = total_mass(p)
    return _forward_figure(out_dir, "fig14", runs, t_end, dt, f"Fig. 14: crank angle under T8 = {torque:g} N m, total mass varied",
                           lambda k: f"density {k}, total {masses[k]:.2f} kg")


def total_mass(params=None):
    mech = pb.system("foot").mechanism
    p = mech.resolve_parameters(params)
    subs = {mech.parameters[n].symbol: v for n, v in p.items()}
    return float(sum(b.mass.subs(subs) for b in mech.bodies.values()))


def _slip_figure(out_dir, name, cases, steps, title, params=None, backend=None, samples_per_step=100):
    tt = np.linspace(0.0, steps, steps * samples_per_step + 1)
    cols, series, events = {"t/T": tt}, {}, {}
    for label, (mu_s, mu_k, omega) in cases.items():
        model = SlipModel(mu_s, mu_k, omega=omega, params=params, backend=backend)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run = model.run(steps=steps, samples_per_step=4)
            table = model.table(run.result, tt * period(omega), period(omega))
        cols[f"slip_{label}"] = table["slip"]
        series[_pretty(label, mu_s, mu_k, omega)] = (None, table["slip"] * 1000)
        events[label] = run.events
    out = Table(cols, {"slip_" + k: "m" for k in cases}, title)
    _plot(os.path.join(out_dir, f"{name}.png"), tt, series, "t / T", "cumulative foot slip [mm]", title)
    _save(out_dir, name, out)
    out.timelines = events
    return out


def _pretty(label, mu_s, mu_k, omega):
    if label.startswith("omega"):
        return f"ω8 = {omega:g} rad/s"
    if label.startswith("muk"):
        return f"μk = {mu_k:g}"
    return f"μ = {mu_s:g}"


def figure17(out_dir, params=None, mus=(0.03, 0.05, 0.07, 0.08, 0.1), omega=3.0, steps=4, backend=None):
    cases = {f"mu{m:g}": (m, m, omega) for m in mus}
    return _slip_figure(out_dir, "fig17", cases, steps, f"Fig. 17: supporting-foot slip at {omega:g} rad/s, μs = μk",
                        params, backend)


def figure18(out_dir, params=None, omegas=(3, 4, 5, 6), mu=0.1, steps=4, backend=None):
    cases = {f"omega{w:g}": (mu, mu, w) for w in omegas}
    return _slip_figure(out_dir, "fig18", cases, steps, f"Fig. 18: supporting-foot slip, μ = {mu:g}, several crank speeds",
                        params, backend)


def figure19(out_dir, params=None, mu_s=0.2, mu_ks=(0.2, 0.1, 0.05), omega=5.0, steps=4, backend=None):
    cases = {f"muk{m:g}": (mu_s, m, omega) for m in mu_ks}
    return _slip_figure(out_dir, "fig19", cases, steps, f"Fig. 19: supporting-foot slip at {omega:g} rad/s, μs = {mu_s:g}",
                        params, backend)


FIGURES = {"11": figure11, "12": figure12, "13": figure13, "14": figure14, "17": figure17, "18": figure18,
           "19": figure19}


def figures(out_dir, which=None, params=None, log=announce, backend=None):
    """Regenerate the chapter's figures (PNG and CSV) into out_dir; returns name -> Table."""
    out = {}
    names = list(dict.fromkeys(which or FIGURES))  # each figure once, in the order asked
    for name in names:
        if name not in FIGURES:
            raise InputError(f"unknown figure '{name}' (choose from {', '.join(FIGURES)})")
    with bar(len(names), "pasibot figures", "figure") as progress:
        for name in names:
            out[name] = FIGURES[name](out_dir, params=params, backend=backend)
            progress.update(1)
            log(f"wrote {os.path.join(out_dir, f'fig{name}.png')} and fig{name}.csv")
    return out


# ------------------------------------------------------------------------------------------------------
# animation of one step
# ------------------------------------------------------------------------------------------------------
def animate(path, params=None, frames=48, fps=16, step=0, backend=None):
    """One step in the ground frame: every link as a line through its named points, the joints as dots,
    the ankle traces of both feet."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import animation

    lo, hi = pb.step_window(step)
    theta = np.linspace(lo, hi, frames)
    table = pb.kinematics_table(theta, params, frame="ground", backend=backend)
    fine = pb.kinematics_table(np.linspace(lo, hi, 200), params, frame="ground", backend=backend)
    mech = pb.system("foot").mechanism
    bodies = [b for b in mech.bodies]
    chains = {b: [p for p in mech.bodies[b].points] for b in bodies}
    fig, ax = plt.subplots(figsize=(6, 7))
    xs = np.concatenate([table[f"{p}.x"] for b in bodies for p in chains[b]])
    ys = np.concatenate([table[f"{p}.y"] for b in bodies for p in chains[b]])
    pad = 0.05 * np.ptp(ys)
    ax.set_xlim(xs.min() - pad, xs.max() + pad)
    ax.set_ylim(min(ys.min(), 0) - pad, ys.max() + pad)
    ax.set_aspect("equal")
    ax.axhline(0.0, color="0.4", lw=1)
    for p, style in (("E", "C0--"), ("E_f", "C1--")):
        ax.plot(fine[f"{p}.x"], fine[f"{p}.y"], style, lw=0.8, label=f"{p} path")
    lines = {b: ax.plot([], [], "-", lw=1.6 if b in ("13", "8") else 1.0, color="C1" if b.endswith("_f") else "C0",
                        label=b)[0] for b in bodies}
    joints = ax.plot([], [], "k.", ms=3, label="joints")[0]
    title = ax.set_title("")

    def order(b, k):
        pts = chains[b]
        xy = np.array([(table[f"{p}.x"][k], table[f"{p}.y"][k]) for p in pts])
        if b == "13":  # hip: A-B-D-A outline plus the slot point
            return xy
        d = xy - xy[0]
        return xy[np.argsort(d @ (xy[-1] - xy[0]) if len(xy) > 1 else [0])]

    def frame(k):
        pts = []
        for b in bodies:
            xy = order(b, k)
            lines[b].set_data(xy[:, 0], xy[:, 1])
            pts.append(xy)
        allp = np.vstack(pts)
        joints.set_data(allp[:, 0], allp[:, 1])
        title.set_text(f"PASIBOT, one step: θ8 = {table['theta8'][k]:.2f} rad")
        return list(lines.values()) + [joints, title]

    anim = animation.FuncAnimation(fig, frame, frames=frames, blit=False)
    try:
        save_animation(anim, path, fps)
    finally:
        plt.close(fig)
    return path
