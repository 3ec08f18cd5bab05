"""Turning symbolic expressions into functions evaluated over many samples at once."""
from mechsym.codegen.numpy_backend import SparseMatrixFunction, VectorFunction

__all__ = ["SparseMatrixFunction", "VectorFunction"]
