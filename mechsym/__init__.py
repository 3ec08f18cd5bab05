"""mechsym: declare a mechanism once, derive its kinematics and dynamics symbolically, evaluate fast."""
from mechsym.errors import AssemblyError, InputError, ModelError, SingularError

__all__ = ["AssemblyError", "InputError", "ModelError", "SingularError"]
__version__ = "0.1.0"
