"""The bottom layer of mechsym: what every other layer uses and that knows no mechanism.

errors (the InputError family), parameters (the parameter-and-gravity protocol of every declaration),
results (Table, RunResult), timegrid (a run's options and output grid), runner (the one runner skeleton:
solve_ivp watched by the budget, the RunResult on the grid), budget (memory and call limits), progress
(bars on a terminal), output (the one atomic file writer), plotting, view (interactive views in the
browser), quaternion (the one quaternion module), freejoint (the free joint's maps on it), hybrid (runs
through modes joined by switches), forces (the force elements every declaration shares) and derived (the
interface of every derived system, and derive). docs/architecture.md describes each layer.
Nothing here imports another layer of mechsym (tests/test_layers.py checks).
"""

__version__ = "0.1.0"
"""The package's version, written only here: pyproject.toml reads it, `mechsym --version` prints it and
CHANGELOG.md tells what each version changed."""
