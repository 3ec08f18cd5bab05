"""The URDF files of example-robot-data as its loaders name them, and Pinocchio's dynamics of a file read
the way mechsym reads it (the test of every loader and benchmarks/bench_robots.py use both).

Pinocchio reads the text `mechsym.spatial.urdf.as_read` writes (the same angles). Its independent model
(mimic=False) is the reference: a continuous joint's (cos, sin) is mapped from mechsym's angle, and a
mechsym reading with mimic joints is compared with G^T H G, G^T bias, J G, ... of that model, where G
(constant) takes mechsym's speeds to the joints' (a mimic joint's speed is its ratio times its mimicked
joint's). `pinocchio_mimic_model` gives Pinocchio's own model of the mimic joints (JointModelMimic) where
it builds one, so that the test can check the G route against it.
"""
from __future__ import annotations

from os.path import join

import numpy as np

STATES = 20


def loaders() -> dict:
    """loader name -> (path of its file, free flyer) for every example-robot-data loader, without building it."""
    from example_robot_data import robots_loader as rl

    out = {}
    for name, loader in rl.ROBOTS.items():
        if loader.urdf_filename:
            relative = join(loader.path, loader.urdf_subpath, loader.urdf_filename)
        else:
            relative = join(loader.path, loader.sdf_subpath, loader.sdf_filename)
        out[name] = (join(loader.model_path or rl.getModelPath(relative), relative), bool(loader.free_flyer))
    return out


def pinocchio_model(path, floating, mimic=False):
    """Pinocchio's model of the file as mechsym reads it (mechsym.spatial.urdf.as_read)."""
    import pinocchio as pin

    from mechsym.spatial.urdf import as_read

    text = as_read(path)
    if floating:
        return pin.buildModelFromXML(text, pin.JointModelFreeFlyer(), mimic=mimic)
    return pin.buildModelFromXML(text, mimic=mimic)


class Reference:
    """Pinocchio's quantities for a derived mechsym tree (`system`, a TreeSystem) of the file at `path`."""

    def __init__(self, system, path, floating):
        import pinocchio as pin

        self.pin = pin
        self.system = system
        self.model = pinocchio_model(path, floating)
        self.data = self.model.createData()
        names = system.coordinate_names
        mimics = system.tree.mimics()
        speed = {n: i for i, n in enumerate(system.speed_names)}
        coordinate = {n: i for i, n in enumerate(names)}
        self.q_map = []                 # per Pinocchio joint: (kind, our index, ratio, offset)
        self.G = np.zeros((self.model.nv, system.nv))
        for j, name in zip(self.model.joints[1:], list(self.model.names)[1:]):
            if j.nq == 7:
                self.q_map.append(("free", 0, 1.0, 0.0))
                self.G[j.idx_v:j.idx_v + 6, 0:6] = np.eye(6)
                continue
            if j.nq == 4:                                 # planar: (x, y, cos, sin) from (x, y, theta)
                i = coordinate[f"{name}.x"]
                self.q_map.append(("planar", i, 1.0, 0.0))
                self.G[j.idx_v:j.idx_v + 3, speed[f"{name}.vx"]:speed[f"{name}.vx"] + 3] = np.eye(3)
                continue
            of, ratio, offset = mimics.get(name, (name, 1.0, 0.0))
            kind = "angle" if j.nq == 2 else "value"
            self.q_map.append((kind, coordinate[of], ratio, offset))
            self.G[j.idx_v, speed[of]] = ratio

    def pinocchio_q(self, q):
        """Pinocchio's configuration of one of ours."""
        out = []
        for kind, i, ratio, offset in self.q_map:
            if kind == "free":
                out += list(q[0:7])
            elif kind == "planar":
                out += [q[i], q[i + 1], np.cos(q[i + 2]), np.sin(q[i + 2])]
            else:
                x = ratio * q[i] + offset
                out += [np.cos(x), np.sin(x)] if kind == "angle" else [x]
        return np.array(out)

    def states(self, n=STATES, seed=0):
        """n random states (q, v, a) of ours: Pinocchio's random configurations within the limits (clipped to
        +-3), continuous joints' angles from their (cos, sin)."""
        pin = self.pin
        model = self.model
        lo = np.where(np.isfinite(model.lowerPositionLimit), model.lowerPositionLimit, -1.0)
        hi = np.where(np.isfinite(model.upperPositionLimit), model.upperPositionLimit, 1.0)
        lo, hi = np.maximum(lo, -3.0), np.minimum(hi, 3.0)
        np.random.seed(seed)
        pin.seed(seed)
        rng = np.random.default_rng(seed)
        coordinate = {n: i for i, n in enumerate(self.system.coordinate_names)}
        qs = []
        for _ in range(n):
            qp = pin.randomConfiguration(model, lo, hi)
            q = np.zeros(self.system.nq)
            for j, name in zip(model.joints[1:], list(model.names)[1:]):
                x = qp[j.idx_q:j.idx_q + j.nq]
                if j.nq == 7:
                    q[0:7] = x
                elif j.nq == 4:
                    i = coordinate[f"{name}.x"]
                    q[i:i + 3] = x[0], x[1], np.arctan2(x[3], x[2])
                elif name in coordinate:                  # (a mimic joint's follows its joint)
                    q[coordinate[name]] = np.arctan2(x[1], x[0]) if j.nq == 2 else x[0]
            qs.append(q)
        nv = self.system.nv
        return np.array(qs), rng.standard_normal((n, nv)), rng.standard_normal((n, nv))

    def quantities(self, q, v, a, frames):
        """Pinocchio's H, bias, gravity, rnea, aba (H^-1 (a - bias) as forward's tau = a), and per frame its
        position, rotation, Jacobian and classical-acceleration bias, each reduced by G."""
        pin, model, data, G = self.pin, self.model, self.data, self.G
        out = {k: [] for k in ("H", "bias", "g", "rnea", "aba", "o", "R", "J", "b")}
        for qi, vi, ai in zip(q, v, a):
            qp, vp, ap = self.pinocchio_q(qi), G @ vi, G @ ai
            H = pin.crba(model, data, qp)
            H = np.triu(H) + np.triu(H, 1).T
            Hr = G.T @ H @ G
            bias = G.T @ pin.nonLinearEffects(model, data, qp, vp)
            out["H"].append(Hr)
            out["bias"].append(bias)
            out["g"].append(G.T @ pin.computeGeneralizedGravity(model, data, qp))
            out["rnea"].append(G.T @ pin.rnea(model, data, qp, vp, ap))
            if np.linalg.eigvalsh(Hr)[0] > 1e-12 * np.abs(Hr).max():      # (massless moving links: singular)
                out["aba"].append(np.linalg.solve(Hr, ai - bias))
            pin.forwardKinematics(model, data, qp, vp, 0 * vp)
            pin.updateFramePlacements(model, data)
            pin.computeJointJacobians(model, data, qp)
            for k in "oRJb":
                out[k].append([])
            for f in frames:
                fid = model.getFrameId(f, pin.BODY) if model.existBodyName(f) else model.getFrameId(f)
                out["o"][-1].append(data.oMf[fid].translation.copy())
                out["R"][-1].append(data.oMf[fid].rotation.copy())
                out["J"][-1].append(pin.getFrameJacobian(model, data, fid, pin.LOCAL_WORLD_ALIGNED) @ G)
                out["b"][-1].append(pin.getFrameClassicalAcceleration(model, data, fid,
                                                                      pin.LOCAL_WORLD_ALIGNED).vector.copy())
        if len(out["aba"]) < len(q):
            del out["aba"]
        return {k: np.array(x) for k, x in out.items()}


def ours(system, q, v, a, frames, aba=True) -> dict:
    """mechsym's quantities in the layout of Reference.quantities (without aba: a singular H)."""
    out = {"H": system.mass_matrix(q), "bias": system.bias(q, v), "g": system.gravity(q),
           "rnea": system.inverse(q, v, a)}
    if aba:
        out["aba"] = system.forward(q, v, a)
    out["o"] = np.stack([system.frame_position(q, f) for f in frames], axis=1)
    out["R"] = np.stack([system.frame_rotation(q, f) for f in frames], axis=1)
    out["J"] = np.stack([system.frame_jacobian(q, f) for f in frames], axis=1)
    out["b"] = np.stack([system.frame_bias(q, v, f) for f in frames], axis=1)
    return out


def errors(system, reference, frames, n=STATES, seed=0) -> dict:
    """quantity -> max |ours - Pinocchio's| / max |Pinocchio's| over n random states (norm-wise; gravity on
    the scale of the RNEA's generalised forces, since it vanishes where gravity is along the axes); without
    "aba" where H is singular at one of the states (a massless moving link)."""
    q, v, a = reference.states(n, seed)
    ref = reference.quantities(q, v, a, frames)
    mine = ours(system, q, v, a, frames, "aba" in ref)
    scale = {k: np.abs(x).max() for k, x in ref.items()}
    scale["g"] = max(scale["g"], scale["rnea"])      # (gravity torques vanish on a horizontal tree)
    return {k: float(np.abs(mine[k] - ref[k]).max() / max(scale[k], 1e-300)) for k in ref}
