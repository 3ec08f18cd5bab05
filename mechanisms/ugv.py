"""UGV half-vehicle (chapter section 8): a body, two legs and two driven wheels rolling on a track.

Bodies and frames (SI units):

* `body`: the frame runs from the rear leg joint Jr (origin) to the front leg joint Jf = (L, 0); its angle
  is the pitch psi. Centre of mass at (body_com * L, body_com_y) (ASSUMED: mid-body, on the joint line).
* `leg_r`: frame from its joint J (at Jr) to the wheel centre W = (l, 0); at leg angle phi_r the leg points
  along (cos phi_r, -sin phi_r) of the body frame, so `body.angle - leg_r.angle = phi_r`.
* `leg_f`: frame from the wheel centre W (origin) to its joint J = (l, 0) (at Jf); the leg points from Jf
  along (-cos phi_f, -sin phi_f), so `leg_f.angle - body.angle = phi_f`. The legs point inwards at
  phi < 90 degrees (the chapter's Eq. 39). Leg centres of mass at leg_com * l from the joint (ASSUMED 0.5).
* `wheel_r`, `wheel_f`: radius r (ASSUMED 0.30 m), centre of mass at the centre.

Joints: `hip_r` (leg_r -> body), `hip_f` (body -> leg_f) with the leg angles phi_r, phi_f as imposed
coordinates (their torques tau_r, tau_f act on the body resp. the front leg); `axle_r` (leg_r -> wheel_r),
`axle_f` (leg_f -> wheel_f) with the wheel spins as coordinates driven by the wheel motors M_r, M_f
(counter-clockwise on the wheel, reaction on the leg). `axle_r.fx, fy` is the chapter's Flw (leg on rear
wheel); minus `axle_f.fx, fy` is its Fwl (front wheel on front leg).

The wheels touch the track through rolling contacts (mechsym.planar.rolling): ground force F t + N n at each
contact, unknowns Fr, Nr (rear) and Ff, Nf (front). The chapter's assumption that both motors give the
same torque is the tie M_r = M_f = M, which makes the quasi-static system determinate. The reported drive
torque is -M (propulsive positive when moving +x). The analyses live in mechanisms/ugv_study.py (forces
along a track) and mechanisms/ugv_optimize.py (optimised leg angles); the pose, the wheelbase and their
derivatives come from this declaration through mechsym.planar.stance.
"""
from __future__ import annotations

from mechsym.planar.model import Mechanism
from mechsym.planar.rolling import RollingContact

CHAPTER = {"L": 0.83, "l": 0.35, "m_wheel": 50.0, "m_leg": 20.0, "m_body": 300.0}
ASSUMED = {"r": 0.30, "body_com": 0.5, "body_com_y": 0.0, "leg_com": 0.5}


def build() -> Mechanism:
    m = Mechanism("ugv", doc=__doc__)
    L = m.parameter("L", CHAPTER["L"], "m", "body length Jr-Jf (chapter)")
    l = m.parameter("l", CHAPTER["l"], "m", "leg length joint-wheel centre (chapter)")
    r = m.parameter("r", ASSUMED["r"], "m", "wheel radius (ASSUMED)")
    mw = m.parameter("m_wheel", CHAPTER["m_wheel"], "kg", "mass of each wheel (chapter)")
    ml = m.parameter("m_leg", CHAPTER["m_leg"], "kg", "mass of each leg (chapter)")
    mb = m.parameter("m_body", CHAPTER["m_body"], "kg", "body mass (chapter)")
    cb = m.parameter("body_com", ASSUMED["body_com"], "", "body centre of mass along Jr-Jf, fraction of L (ASSUMED)",
                     positive=False)
    cy = m.parameter("body_com_y", ASSUMED["body_com_y"], "m",
                     "body centre of mass above the joint line (ASSUMED 0)", positive=False)
    cl = m.parameter("leg_com", ASSUMED["leg_com"], "", "leg centre of mass from its joint, fraction of l (ASSUMED)",
                     positive=False)
    m.gravity_down("g")

    m.ground()
    m.body("body", mb, mb * L**2 / 12, (cb * L, cy), {"Jr": (0, 0), "Jf": (L, 0)})
    m.body("leg_r", ml, ml * l**2 / 12, (cl * l, 0), {"J": (0, 0), "W": (l, 0)})
    m.body("leg_f", ml, ml * l**2 / 12, ((1 - cl) * l, 0), {"W": (0, 0), "J": (l, 0)})
    m.body("wheel_r", mw, mw * r**2 / 2, (0, 0), {"centre": (0, 0)})
    m.body("wheel_f", mw, mw * r**2 / 2, (0, 0), {"centre": (0, 0)})

    m.revolute("hip_r", "leg_r", "J", "body", "Jr")
    m.revolute("hip_f", "body", "Jf", "leg_f", "J")
    m.revolute("axle_r", "leg_r", "W", "wheel_r", "centre")
    m.revolute("axle_f", "leg_f", "W", "wheel_f", "centre")
    m.coordinate("phi_r", "hip_r", force="tau_r")
    m.coordinate("phi_f", "hip_f", force="tau_f")
    m.coordinate("spin_r", "axle_r", force="M_r")
    m.coordinate("spin_f", "axle_f", force="M_f")
    return m


def contacts(mech: Mechanism):
    """The two wheel-track contacts of the declaration."""
    r = mech.parameters["r"].symbol
    return (RollingContact("rear", "wheel_r", "centre", r, friction="Fr", normal="Nr"),
            RollingContact("front", "wheel_f", "centre", r, friction="Ff", normal="Nf"))


def ties():
    """The same drive torque on both wheels: M_r - M_f = 0."""
    import sympy as sp

    return (("same torque", sp.Symbol("M_r", real=True) - sp.Symbol("M_f", real=True)),)


def _not_a_linkage(options, params, backend):
    from mechsym.core.errors import InputError

    raise InputError(f"model 'ugv' stands on rolling contacts on a track, not on joints to the ground: "
                     f"'{options.command}' does not apply; use `mechsym ugv torque|sweep|optimize|animate|view|equations`")


# generic commands this model answers itself (mechsym.app.registry.Model.hooks): all but `params` point to
# `mechsym ugv`
CLI_HOOKS = {name: _not_a_linkage for name in ("inverse", "forward", "kinematics", "equations", "export", "view")}
