"""Shipped mechanism declarations, their commands and their studies, found by name through REGISTRY (the
command line's model registry, mechsym.app.registry, is the one reader): kind -> name -> module path, or
module:attribute."""

REGISTRY = {
    # planar models: a module with build() returning a mechsym Mechanism (and CLI_HOOKS for the generic
    # commands it computes itself)
    "models": {
        "fourbar": "mechanisms.fourbar",
        "fourbar-chain": "mechanisms.fourbar_chain",
        "slider-crank": "mechanisms.slider_crank",
        "pasibot": "mechanisms.pasibot",
        "ugv": "mechanisms.ugv",
        "andrews": "mechanisms.andrews",
    },
    # top-level commands that belong to one model: `mechsym NAME ...` (a module with HELP, configure, run)
    "commands": {
        "cart": "mechanisms.cart",
        "chain3": "mechanisms.chain3",
        "disc": "mechanisms.disc",
        "hyq": "mechanisms.hyq_cli",
        "pasibot": "mechanisms.pasibot_cli",
        "polydisc": "mechanisms.polydisc",
        "ugv": "mechanisms.ugv_cli",
    },
    # spatial trees (mechsym.spatial): `mechsym params NAME` and `mechsym export NAME`; those with closed
    # loops (Tree.close): `mechsym params|kinematics|inverse|forward NAME`
    "trees": {
        "bricard": "mechanisms.bricard",
        "governor": "mechanisms.governor",
        "rssr": "mechanisms.rssr",
        "hyq": "mechanisms.hyq",
    },
    # model studies for `mechsym sweep STUDY MODEL` (mechsym.studies.sweep)
    "studies": {
        "start-torque": "mechanisms.sweep_studies:StartTorque",
        "min-friction": "mechanisms.sweep_studies:MinFriction",
        "optimize": "mechanisms.sweep_studies:Optimize",
    },
}
