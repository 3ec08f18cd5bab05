"""A spatial closed-loop mechanism through the command line's `equations [--latex]`, `sweep` and `export`, and
a model file declaring one: each checked against an independent value (the printed equations read back by
sympy and evaluated against the generated tree functions, a sweep's rows against the Python API and the
mechanism's scaling laws, the exported C against the numpy route and the closure it must satisfy)."""
import re
import shutil
import subprocess

import numpy as np
import pytest
import sympy as sp

from mechanisms import bricard, rssr
from mechsym.app.cli import main
from mechsym.core.results import read_csv
from mechsym.spatial import loop_dynamics as dyn
from mechsym.spatial import loop_tables
from mechsym.spatial.loop_kinematics import LoopSolver
from mechsym.spatial.loops import LoopSystem


def _read_back(text):
    """The equations' text evaluated by sympy: (temporaries {symbol: expr}, [(row, phi)], [(speed, lhs, rhs)])."""
    temporaries, rows, balance = {}, [], []
    for line in text.splitlines():
        if line.startswith("[") and line.endswith(" = 0"):
            name, expr = re.match(r"\[(.*?)\] (.*) = 0$", line).groups()
            rows.append((name, sp.sympify(expr)))
        elif line.startswith("["):
            name, lhs, rhs = re.match(r"\[(.*?)\] (.*) = (.*)$", line).groups()
            balance.append((name, sp.sympify(lhs), sp.sympify(rhs)))
        elif re.match(r"x\d+ = ", line):
            t, expr = line.split(" = ", 1)
            temporaries[sp.Symbol(t)] = sp.sympify(expr)
    return temporaries, rows, balance


def _evaluate(temporaries, expr, values):
    """expr with the temporaries substituted in program order, at `values` (symbol name -> number)."""
    known = {sp.Symbol(k): v for k, v in values.items()}
    for t, e in temporaries.items():
        known[t] = float(e.xreplace(known))
    return float(expr.xreplace(known))


FOURBAR_THROUGH_CLOSURE = """
from tests.test_spatial_loops_closures import _fourbar


def build():
    return _fourbar(through_closure=True)
"""


@pytest.mark.parametrize("model", ["bricard", "rssr", "fourbar-driven-closure"])
def test_equations_read_back_balance_the_inverse_dynamics(model, capsys, tmp_path):
    """The printed closure rows vanish at solved states and equal the generated phi off them; the printed
    A U = C holds with the driving force and multipliers of loop_dynamics.inverse (1e-10), and its C equals
    H a + bias of the tree's generated mass matrix (CRBA) and bias (the printed C is the RNEA's). A four-bar
    driven by its closing hinge's angle: the torque acts through that closure's row."""
    if model == "fourbar-driven-closure":
        from tests.test_spatial_loops_closures import _fourbar

        (tmp_path / "fourbar.py").write_text(FOURBAR_THROUGH_CLOSURE)
        name, tree = str(tmp_path / "fourbar.py"), _fourbar(through_closure=True)
    else:
        name, tree = model, {"bricard": bricard, "rssr": rssr}[model].build()
    assert main(["equations", name]) == 0
    temporaries, rows, balance = _read_back(capsys.readouterr().out)
    s = LoopSystem(tree, backend="numpy")
    solver = LoopSolver(s)
    assert [r for r, _ in rows] == s.row_names and [b[0] for b in balance] == s.speed_names
    kin = solver.sweep(np.array([0.3, 1.1]))
    omega, alpha = 2.0, 0.7
    v = kin.dq[:, :, 0] * omega
    a = kin.ddq * omega ** 2 + kin.dq[:, :, 0] * alpha
    tau, lam = dyn.inverse(solver, kin.q, v, a)
    H = s.tree.mass_matrix(kin.q)
    C = np.einsum("nij,nj->ni", H, a) + s.tree.bias(kin.q, v)
    ident = lambda p, n: f"{p}_{re.sub(r'[^0-9A-Za-z_]', '_', n)}" if p else re.sub(r"[^0-9A-Za-z_]", "_", n)
    params = dict(zip(s.param_names, s.params()))
    off = kin.q + 0.05 * np.arange(1, s.nq + 1)
    off_phi = s.closure(off)[0]
    for n in range(len(kin.q)):
        values = {ident("", k): x for k, x in params.items()}
        values.update({ident("q", k): x for k, x in zip(s.coordinate_names, kin.q[n])})
        values.update({ident("v", k): x for k, x in zip(s.speed_names, v[n])})
        values.update({ident("a", k): x for k, x in zip(s.speed_names, a[n])})
        values.update({ident("lambda", k): x for k, x in zip(s.row_names, lam[n])})
        values[s.force_names[0]] = tau[n, 0]
        phi = [_evaluate(temporaries, e, values) for _, e in rows]
        assert np.max(np.abs(phi)) < 1e-12
        lhs = np.array([_evaluate(temporaries, e, values) for _, e, _ in balance])
        rhs = np.array([_evaluate(temporaries, e, values) for _, _, e in balance])
        assert np.max(np.abs(rhs - C[n])) <= 1e-10 * np.max(np.abs(C[n]))
        assert np.max(np.abs(lhs - rhs)) <= 1e-10 * np.max(np.abs(rhs))
        values.update({ident("q", k): x for k, x in zip(s.coordinate_names, off[n])})
        phi_off = np.array([_evaluate(temporaries, e, values) for _, e in rows])
        assert np.max(np.abs(phi_off - off_phi[n])) < 1e-12 and np.max(np.abs(phi_off)) > 1e-3


def test_equations_latex_prints_the_same_equations(capsys):
    """--latex: one aligned line per temporary, closure row and speed, each the LaTeX of the text form's
    expression read back (q_J1 printed q_{\\mathrm{J1}}, the multipliers \\lambda_{\\mathrm{ROW}})."""
    assert main(["equations", "bricard"]) == 0
    temporaries, rows, balance = _read_back(capsys.readouterr().out)
    assert main(["equations", "bricard", "--latex"]) == 0
    latex = capsys.readouterr().out
    body = latex.split("\\begin{aligned}\n")[1].split("\n\\end{aligned}")[0].split(" \\\\\n")
    assert len(body) == len(temporaries) + len(rows) + len(balance)
    names = {sp.Symbol(f"{x}_J{i}"): rf"{x}_{{\mathrm{{J{i}}}}}" for i in range(1, 6) for x in "qva"}
    for line, (t, e) in zip(body, temporaries.items()):
        assert line == f"{sp.latex(t)} &= {sp.latex(e, symbol_names=names)}"
    for line, (name, e) in zip(body[len(temporaries):], rows):
        assert line == rf"0 &= {sp.latex(e, symbol_names=names)} && \text{{{name}}}"
    assert body[-1].endswith(r"&= x_{150} && \text{J5}") and r"\lambda_{\mathrm{J6.perp4}}" in body[-1]


def test_sweep_rows_equal_the_python_api_and_the_scaling_laws(tmp_path):
    """`sweep inverse` over the RSSR's coupler and rocker masses: each row equals the inverse table of the Python
    API at that set (loop_tables.inverse), and the torque at a crank angle is linear in each mass (equal
    differences over equal steps: the equations are linear in the masses and inertias, which scale with them);
    `sweep forward` of Bricard's free fall finds J1's largest value independent of the rods' mass m (every mass
    and inertia scales with m, so the motion does not change)."""
    out = tmp_path / "sweep.csv"
    assert main(["sweep", "inverse", "rssr", "--param", "m_coupler=0.3,0.6,0.9", "--param", "m_rocker=0.25,0.5",
                 "--omega", "10", "--samples", "24", "--reduce", "final:torque", "--reduce", "absmax:B.fz",
                 "--backend", "numpy", "--out", str(out)]) == 0
    table = read_csv(out)
    assert list(table["status"]) == ["ok"] * 6
    system = LoopSystem(rssr.build(), backend="numpy")
    theta = 2 * np.pi * np.arange(24) / 24
    for mc, mr, last, peak in zip(table["m_coupler"], table["m_rocker"], table["final_torque"], table["absmax_B.fz"]):
        one = loop_tables.inverse(LoopSolver(system, {"m_coupler": mc, "m_rocker": mr}), theta, [10.0])
        assert last == pytest.approx(one["torque"][-1], rel=1e-12)
        assert peak == pytest.approx(np.abs(one["B.fz"]).max(), rel=1e-12)
    last = {(mc, mr): x for mc, mr, x in zip(table["m_coupler"], table["m_rocker"], table["final_torque"])}
    for mr in (0.25, 0.5):
        step = last[0.6, mr] - last[0.3, mr]
        assert abs(last[0.9, mr] - last[0.6, mr] - step) <= 1e-10 * abs(step)
    out = tmp_path / "forward.csv"
    assert main(["sweep", "forward", "bricard", "--param", "m=1,3", "--torque", "0", "--t-end", "0.5", "--rtol",
                 "1e-10", "--reduce", "max:J1", "--reduce", "final:omega", "--backend", "numpy", "--out", str(out)]) == 0
    table = read_csv(out)
    assert list(table["status"]) == ["ok"] * 2 and table["max_J1"][0] > 0.1
    assert table["max_J1"][1] == pytest.approx(table["max_J1"][0], rel=1e-9)
    assert table["final_omega"][1] == pytest.approx(table["final_omega"][0], rel=1e-9)


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_export_of_a_loop_model_compiles_and_closes(tmp_path, capsys):
    """`export rssr`: the standalone C builds with the project's strict flags; its closure rows vanish at the
    example's states (assembled along the crank), J v = 0 at their speeds, and phi, J, gamma, H equal the numpy
    route at those states (1e-12)."""
    assert main(["export", "rssr", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "rssr_loops.c").exists()
    subprocess.run(["make", "-s", "-C", str(tmp_path)], check=True, capture_output=True)
    text = subprocess.run([str(tmp_path / "example")], check=True, capture_output=True, text=True).stdout
    blocks, name = {}, None
    for line in text.splitlines():
        if line.startswith("# "):
            name = line[2:].split(":")[0]
            blocks[name] = []
        else:
            blocks[name].append([float(x) for x in line.split(",")[1:]])
    s = LoopSystem(rssr.build(), backend="numpy")
    state = np.array(blocks["state"])
    q, v = state[:, :s.nq], state[:, s.nq:]
    phi, J, gamma = s.closure(q, v)
    assert np.abs(np.array(blocks["closure.phi"])).max() < 1e-10
    assert np.abs(np.einsum("nij,nj->ni", J, v)).max() < 1e-10
    assert np.allclose(blocks["closure.phi"], phi, rtol=0, atol=1e-14)
    assert np.allclose(blocks["closure.jacobian"], J.reshape(len(q), -1), rtol=1e-12, atol=1e-14)
    assert np.allclose(blocks["closure.gamma"], gamma, rtol=1e-12, atol=1e-13)
    assert np.allclose(blocks["mass"], s.tree.mass_matrix(q).reshape(len(q), -1), rtol=1e-12, atol=1e-15)
    assert q[1, 0] == pytest.approx(0.25) and q[2, 0] == pytest.approx(0.5)


SLIDER_CRANK = '''
import numpy as np
from mechsym.spatial import Prismatic, Revolute, Spherical, Tree, Universal

r, L, h, c = 0.05, 0.2, 0.03, 0.04


def build():
    tree = Tree("spatial_slider_crank")
    tree.body("ground")
    tree.body("crank", "ground", Revolute("crank", axis=(0, 0, 1)), mass=0.2, com=(r / 2, 0, 0),
              inertia=(0, 0.2 * r**2 / 12, 0.2 * r**2 / 12, 0, 0, 0))
    x0 = np.sqrt(L**2 - c**2 - h**2) + r
    rod = np.array([x0 - r, c, h])
    tree.body("rod", "crank", Spherical("pin"), xyz=(r, 0, 0), mass=0.3, com=tuple(rod / 2),
              inertia=(0.3 * L**2 / 12 * (np.eye(3) - np.outer(rod, rod) / L**2)).tolist())
    tree.body("slider", "ground", Prismatic("slide", axis=(1, 0, 0)), xyz=(x0, c, h), mass=0.5)
    tree.frame("B_rod", "rod", xyz=tuple(rod))
    tree.close("loop", "B_rod", "slider", Universal("B", axis=tuple(np.cross(rod, (1, 0, 0))), axis2=(1, 0, 0)))
    tree.drive("crank")
    return tree
'''


def test_a_model_file_declaring_a_closed_loop_mechanism(tmp_path):
    """A .py file whose build() returns a Tree with closures runs as a shipped loop model: the slider's travel
    equals the closed form r cos(theta) + sqrt(L^2 - (c - r sin(theta))^2 - h^2) - x0 (1e-12 m), and its
    equations print."""
    model = tmp_path / "slider.py"
    model.write_text(SLIDER_CRANK)
    out = tmp_path / "kin.csv"
    assert main(["kinematics", str(model), "--samples", "24", "--backend", "numpy", "--out", str(out)]) == 0
    table = read_csv(out)
    r, L, h, c = 0.05, 0.2, 0.03, 0.04
    theta = table["crank"]
    x0 = np.sqrt(L**2 - c**2 - h**2) + r
    exact = r * np.cos(theta) + np.sqrt(L**2 - (c - r * np.sin(theta))**2 - h**2) - x0
    assert np.abs(table["slide"] - exact).max() < 1e-12
    assert main(["equations", str(model)]) == 0


BAD = {
    "cannot_close": ("t.frames['P5_ground'] = type(t.frames['P5_ground'])('P5_ground', 'ground', (0, -10, 0), "
                     "np.eye(3))",
                     r"error: mechanism 'bricard' cannot assemble: loop 'loop' \(joint 'J6' between frames 'P5_ground' "
                     r"and 'P5_rod5'\) does not close \(residual .*\)"),
    "one_body": ("t.frame('other_end', 'rod1', xyz=(1, 0, 0)); t.close('again', 'rod1', 'other_end', Revolute('J7'))",
                 r"error: tree 'bricard': loop 'again': joint 'J7' joins frames 'rod1' and "
                 r"'other_end' of one body 'rod1' \(a closure joins two bodies\)"),
    "spherical_driven": ("t.body('ball', 'rod2', Spherical('S'), xyz=(0, 0, 0.5), mass=1, inertia=(1, 1, 1, 0, 0, 0)); "
                         "t.drives.clear(); t.drive('S.qx')",
                         r"error: tree 'bricard': coordinate 'S.qx' of joint 'S' \(Spherical\) cannot be driven: its "
                         r"joint's rates are not its speeds \(a spherical joint is driven by no single angle\)"),
    "mobility": ("t.drive('J2')",
                 r"error: .*mobility is 1 \(rank of the closure Jacobian 4 for 5 speeds, Grübler's count 0\) but 2 "
                 r"coordinate\(s\) are driven \[J1, J2\]; loop 'loop' \(joint 'J6' between 'P5_ground' and 'P5_rod5'\)"),
    "locked": ("c = t.closures.pop('loop'); t._joint_names.discard('J6'); "
               "t.close('loop', c.frame_a, c.frame_b, Revolute('J6', axis=(math.cos(0.17), math.sin(0.17), 0)))",
               r"error: .*mobility is 0 \(rank of the closure Jacobian 5 for 5 speeds, Grübler's count 0\) but 1 "
               r"coordinate\(s\) are driven \[J1\]; loop 'loop' \(joint 'J6' between 'P5_ground' and 'P5_rod5'\)"),
}


@pytest.mark.parametrize("case", sorted(BAD))
@pytest.mark.parametrize("command", [["kinematics"], ["inverse", "--omega", "1"], ["equations"]])
def test_bad_loop_models_are_one_line_errors(case, command, tmp_path, capsys):
    """Each bad closed-loop declaration, as a model file through the command line: exit 2 and one line
    `error: ...` naming the loop and its joints (or the joint and coordinate), no traceback."""
    change, message = BAD[case]
    model = tmp_path / f"{case}.py"
    model.write_text("import math\nimport numpy as np\nfrom mechanisms import bricard\n"
                     "from mechsym.spatial import Revolute, Spherical\n\n\n"
                     f"def build():\n    t = bricard.build()\n    {change}\n    return t\n")
    assert main([command[0], str(model), *command[1:], "--samples", "6", "--backend", "numpy"]
                if command[0] != "equations" else ["equations", str(model)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and re.fullmatch(message, err.strip()), err
