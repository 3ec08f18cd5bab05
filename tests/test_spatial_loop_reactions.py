"""Which joint reactions of a spatial closed-loop mechanism its equations determine
(mechsym.spatial.loop_reactions), checked against every other solution of the equations: A's null space found
independently (scipy.linalg.null_space of the unscaled A), a multiple of it added to the minimum-norm unknowns
leaves the determined components and the driving forces unchanged and changes the undetermined ones."""
import warnings

import numpy as np
import pytest
from scipy.linalg import null_space

from mechanisms import bricard, governor, rssr
from mechsym.app.cli import main
from mechsym.core.errors import InputError
from mechsym.core.results import read_csv
from mechsym.spatial import loop_dynamics as dyn
from mechsym.spatial import loop_tables
from mechsym.spatial.loop_kinematics import LoopSolver
from mechsym.spatial.loop_reactions import undetermined
from mechsym.spatial.loops import LoopSystem


def _states(module):
    """(solver, q, v, a) at a few states of a shipped model: Bricard along J1 in [0, 1] rad at J1' = 2 rad/s;
    the governor at its assembly with driven speeds (1.5, 0.2) and accelerations (0.3, -0.4)."""
    solver = LoopSolver(LoopSystem(module.build()))
    if solver.k == 1:
        kin = solver.sweep(np.linspace(0.0, 1.0, 5))
        return solver, kin.q, kin.dq[:, :, 0] * 2.0, kin.ddq * 4.0
    q = solver.assemble(np.zeros(solver.k))[None]
    v = solver.velocities(q, np.array([[1.5, 0.2]]))
    return solver, q, v, solver.accelerations(q, v, np.array([[0.3, -0.4]]))


@pytest.mark.parametrize("module", [bricard, governor], ids=["bricard", "governor"])
def test_determined_reactions_are_those_of_every_solution(module):
    solver, q, v, a = _states(module)
    s = solver.s
    tau, lam = dyn.inverse(solver, q, v, a)
    base = dyn.reactions(solver, q, v, a, tau, lam)
    unknown = undetermined(solver, q, v, a)
    assert any(m.any() for m in unknown.values())            # redundant rows: some components undetermined
    A = dyn.system_matrix(solver, q)
    changed = {name: np.zeros(len(q), bool) for name in base}
    for i in range(len(q)):
        N = null_space(A[i], rcond=1e-9)                      # every other solution: U + N z
        assert N.shape[1] >= 1
        for z in N.T:
            U = np.concatenate([lam[i], tau[i]]) + 50.0 * z
            other = dyn.reactions(solver, q[i:i + 1], v[i:i + 1], a[i:i + 1], U[None, s.nrows:], U[None, :s.nrows])
            assert np.allclose(A[i] @ U, A[i] @ np.concatenate([lam[i], tau[i]]), rtol=0, atol=1e-9)
            np.testing.assert_allclose(U[s.nrows:], tau[i], rtol=0, atol=1e-10)     # the driving forces unchanged
            for name, value in other.items():
                change = abs(value[0] - base[name][i])
                if unknown.get(name, np.zeros(len(q), bool))[i]:
                    changed[name][i] |= change > 1e-6
                else:
                    assert change <= 1e-10 * max(1.0, abs(base[name][i])), (name, i, change)
    for name, mask in unknown.items():                        # every undetermined one moves with some solution
        assert np.array_equal(changed[name], mask), name


def test_bricard_table_leaves_out_the_undetermined_reactions_and_names_them():
    solver, q, v, a = _states(bricard)
    theta = np.linspace(0.0, 1.0, 5)
    full = loop_tables.inverse(solver, theta, [2.0], reactions="min-norm")
    with pytest.warns(UserWarning, match=r"mechanism 'bricard': redundant constraints leave these reactions "
                                         r"undetermined, left out of the table: .*J6 \(fx, fy, fz"):
        kept = loop_tables.inverse(solver, theta, [2.0])
    unknown = undetermined(solver, q, v, a)
    left_out = {n for n, m in unknown.items() if m.any()}
    assert set(full.names) - set(kept.names) == left_out
    assert {"J1.mz", "J6.mx", "torque"} <= set(kept.names)
    for name in ("J1.mz", "J6.mx"):                           # a ground hinge's moment about its fixed axis
        assert np.abs(kept[name]).max() <= 1e-10 * np.abs(kept["torque"]).max()
    for name in kept.names:
        np.testing.assert_array_equal(kept[name], full[name])
    with pytest.raises(InputError, match="reactions 'least': expected one of determined, min-norm"):
        loop_tables.inverse(solver, theta, [2.0], reactions="least")


def test_a_mechanism_without_redundant_rows_reports_every_reaction_byte_for_byte(tmp_path):
    solver, q, v, a = _states(rssr)
    assert not solver.s.redundant and undetermined(solver, q, v, a) == {}
    paths = [tmp_path / "determined.csv", tmp_path / "min-norm.csv"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")                      # no note where every reaction is determined
        assert main(["inverse", "rssr", "--omega", "2", "--samples", "12", "--backend", "numpy",
                     "--out", str(paths[0])]) == 0
    assert main(["inverse", "rssr", "--omega", "2", "--samples", "12", "--backend", "numpy", "--reactions",
                 "min-norm", "--out", str(paths[1])]) == 0
    assert paths[0].read_bytes() == paths[1].read_bytes()
    header = paths[0].read_text().splitlines()[0].split(",")
    joints = [link.joint.name for link in solver.s.links if link.joint.nv] + [c.joint.name for c in solver.s.closures]
    assert {f"{j}.{c}" for j in joints for c in ("fx", "fy", "fz", "mx", "my", "mz")} <= set(header)


def test_a_planar_four_bar_of_hinges_leaves_out_its_out_of_plane_reactions(tmp_path, capsys):
    """A four-bar of z hinges declared in 3-D, driven at its closing hinge: the loop's out-of-plane
    components (fz, mx, my of every joint) carry its self-stresses and are the ones left out, named on one
    line; the in-plane ones are those of the min-norm table."""
    model = tmp_path / "fourbar.py"
    model.write_text("from tests.test_spatial_loops_closures import _fourbar\n\n\n"
                     "def build():\n    return _fourbar(through_closure=True)\n")
    out = [tmp_path / "determined.csv", tmp_path / "min-norm.csv"]
    args = ["inverse", str(model), "--omega", "3", "--samples", "24", "--backend", "numpy", "--out"]
    assert main(args + [str(out[0])]) == 0
    note = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning:")]
    assert len(note) == 1 and "redundant constraints leave these reactions undetermined" in note[0]
    assert main(args + [str(out[1]), "--reactions", "min-norm"]) == 0
    kept, full = (read_csv(p) for p in out)
    joints = sorted({n.rsplit(".", 1)[0] for n in full.names if n.endswith(".fx")})
    assert len(joints) == 4
    assert set(full.names) - set(kept.names) == {f"{j}.{c}" for j in joints for c in ("fz", "mx", "my")}
    for name in kept.names:
        np.testing.assert_array_equal(kept[name], full[name])
    for j in joints:
        assert f"{j} (fz, mx, my)" in note[0]
