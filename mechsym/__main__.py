"""`python -m mechsym ...`: the command line (mechsym.app.cli)."""
import sys

from mechsym.app.cli import main

sys.exit(main())
