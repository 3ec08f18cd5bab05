"""The straight-line program a tree's derivation writes, and the 3-vector and spatial algebra on its
expressions (lists of sympy expressions: vectors of 3, 3x3 matrices as lists of rows)."""
from __future__ import annotations

import sympy as sp

__all__ = ["Straight", "ZERO", "ONE"]

ZERO = sp.Integer(0)
ONE = sp.Integer(1)


class Straight:
    """A straight-line program: assignments x_k = expression over inputs and earlier temporaries."""

    def __init__(self):
        self.assignments = []                    # (symbol, expression)
        self.index = {}                          # symbol -> position
        self.pieces = []                         # the piece of each assignment (`cut`)
        self.piece = 0

    def cut(self):
        """Start a new piece of the program (one body's step of a recursion): the C printer prints pieces as
        functions of their own, shared by every function that needs them (mechsym.codegen.c_parts)."""
        self.piece += 1

    def let(self, expr):
        """A temporary x_k assigned `expr` (an atom or a negated atom is returned as it is)."""
        expr = sp.sympify(expr)
        if expr.is_Atom or (expr.is_Mul and len(expr.args) == 2 and expr.args[0] == -1 and expr.args[1].is_Atom):
            return expr
        s = sp.Symbol(f"x{len(self.assignments)}", real=True)
        self.index[s] = len(self.assignments)
        self.assignments.append((s, expr))
        self.pieces.append(self.piece)
        return s

    def vec(self, exprs):
        """`let` of each expression of a list."""
        return [self.let(e) for e in exprs]


def _cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def _mv(R, v):
    return [R[i][0] * v[0] + R[i][1] * v[1] + R[i][2] * v[2] for i in range(3)]


def _mtv(R, v):
    return [R[0][i] * v[0] + R[1][i] * v[1] + R[2][i] * v[2] for i in range(3)]


def _mm(A, B):
    return [[A[i][0] * B[0][j] + A[i][1] * B[1][j] + A[i][2] * B[2][j] for j in range(3)] for i in range(3)]


def _add(a, b):
    return [x + y for x, y in zip(a, b)]


def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]



def _inertia_apply(Y, lin, ang):
    """A spatial inertia (m, h, Io) times a motion (lin, ang): (m lin + ang x h, h x lin + Io ang)."""
    m, h, Io = Y
    return _add([m * x for x in lin], _cross(ang, h)), _add(_cross(h, lin), _mv(Io, ang))


def _dot6(a, b):
    return sum((x * y for x, y in zip(a, b)), ZERO)


