"""Errors that mechsym raises for bad input, so that callers (and the CLI) can tell them from bugs.

`InputError` and its subclasses mean: the user asked for something that cannot be done, and the message
says what and where (body, joint, loop, parameter, input value). The CLI prints them as one line
``error: ...`` and exits with code 2. Any other exception is a failure inside mechsym (exit code 1).
"""


class InputError(ValueError):
    """Bad input: an unknown name, a value out of range, a malformed file or model."""


class ModelError(InputError):
    """A mechanism declaration that is inconsistent; the message lists every problem found."""

    def __init__(self, mechanism, problems):
        self.mechanism = mechanism
        self.problems = list(problems)
        lines = "; ".join(self.problems)
        super().__init__(f"mechanism '{mechanism}': {lines}")


class AssemblyError(InputError):
    """The closed loops cannot be closed at the requested input value."""


class SingularError(InputError):
    """The linear system of an analysis is singular (a dead point or a bad choice of unknowns)."""
