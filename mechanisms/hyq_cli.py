"""`mechsym hyq SUBCOMMAND`: the commands of the HyQ model. Each subcommand is a module with HELP,
configure(parser) and run(args) -> exit code, listed in SUBCOMMANDS (a new one is one more entry)."""
from __future__ import annotations

import importlib

HELP = "HyQ quadruped (spatial tree from its URDF): simulations"

SUBCOMMANDS = {
    "fall": "mechanisms.hyq_fall",
    "drop": "mechanisms.hyq_contact",
    "tilted": "mechanisms.hyq_contact",
}


def configure(parser):
    sub = parser.add_subparsers(dest="hyq_command", required=True, parser_class=type(parser))
    for name, module in SUBCOMMANDS.items():
        mod = importlib.import_module(module)
        p = sub.add_parser(name, help=getattr(mod, "HELPS", {}).get(name, mod.HELP))
        p.add_argument("--debug", action="store_true", help="show tracebacks")
        mod.configure(p)


def run(args) -> int:
    return importlib.import_module(SUBCOMMANDS[args.hyq_command]).run(args)
