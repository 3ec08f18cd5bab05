"""Shipped mechanism declarations. Each module defines `build()` returning a mechsym Mechanism."""

MODELS = {
    "fourbar": "mechanisms.fourbar",
    "fourbar-chain": "mechanisms.fourbar_chain",
    "slider-crank": "mechanisms.slider_crank",
    "pasibot": "mechanisms.pasibot",
    "ugv": "mechanisms.ugv",
    "andrews": "mechanisms.andrews",
}

# top-level commands that belong to one model: `mechsym NAME ...` (module with HELP, configure, run)
COMMANDS = {
    "cart": "mechanisms.cart",
    "chain3": "mechanisms.chain3",
    "disc": "mechanisms.disc",
    "hyq": "mechanisms.hyq_cli",
    "pasibot": "mechanisms.pasibot_cli",
    "polydisc": "mechanisms.polydisc",
    "ugv": "mechanisms.ugv_cli",
}

# spatial trees (mechsym.spatial): `mechsym params NAME` and `mechsym export NAME`
TREES = {
    "hyq": "mechanisms.hyq",
}
