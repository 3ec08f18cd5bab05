"""The bottom layer of mechsym: what every other layer uses and that knows no mechanism.

errors (the InputError family), parameters (checked parameter values), results (Table, RunResult),
timegrid (a run's options and output grid), runner (the right-hand side an integrator calls), budget
(memory and call limits), progress (bars on a terminal), output (the one atomic file writer), plotting,
freejoint (the free joint and the quaternion maps), hybrid (runs through modes joined by switches), forces
(the force elements every declaration shares) and derived (the interface of every derived system, and
derive).
Nothing here imports another layer of mechsym (tests/test_layers.py checks).
"""

__version__ = "0.1.0"
"""The package's version, written only here: pyproject.toml reads it, `mechsym --version` prints it and
CHANGELOG.md tells what each version changed."""
