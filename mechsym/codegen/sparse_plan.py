"""A static elimination order for the sparse constraint Jacobian Phi_q, planned once from its pattern.

Pivots are taken first on entries that are non-zero constants (the +-1 of the pin rows in the x and y
columns, the +1 of a driving row): such a pivot can never vanish, so its order is fixed at generation
time (Markowitz order, to limit fill-in), and its value is known then too, so the generated code
multiplies by its reciprocal (or nothing, for +-1) instead of dividing. What remains is a small block in the link angles, eliminated at
run time with partial pivoting, because its entries can vanish (e.g. a horizontal link).

One factorisation serves both solves mechsym needs per sample: Phi_q x = b (Newton steps, velocity and
acceleration coefficients) and Phi_q^T y = c (the Newton-Euler reactions, since A = Phi_q^T).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Plan:
    n: int
    slots: dict  # (row, col) -> index into the value array (initial entries and fill-in)
    constants: dict  # slot -> value for entries that are constant before elimination
    pivots: tuple  # ((row, col), ...) in elimination order (constant phase)
    pivot_values: tuple  # the (constant) value of each pivot
    lower: tuple  # per pivot: rows i with a multiplier stored at slot (i, col)
    upper: tuple  # per pivot: columns j with a U entry stored at slot (row, j)
    updates: tuple  # per pivot: ((i, j), ...) entries updated a_ij -= l_i a_rj
    block_rows: tuple  # rows left for the run-time dense block
    block_cols: tuple


def jacobian_pattern(jacobian) -> tuple[dict, list]:
    """From a sympy Jacobian: entries (row, col) -> float for constants or None, and the varying
    entries as (row, col, expression) in a fixed order."""
    entries, varying = {}, []
    for (i, j), e in sorted(jacobian.todok().items()):
        if e == 0:
            continue
        entries[(i, j)] = float(e) if e.is_number else None
        if not e.is_number:
            varying.append((i, j, e))
    return entries, varying


def plan(n: int, entries: dict) -> Plan:
    """entries maps (row, col) to a float for constant entries or None for varying ones."""
    value = dict(entries)
    slots = {rc: k for k, rc in enumerate(sorted(entries))}
    constants = {slots[rc]: v for rc, v in entries.items() if v is not None}
    rows_left, cols_left = set(range(n)), set(range(n))
    pivots, pivot_values, lower, upper, updates = [], [], [], [], []
    while True:
        best = None
        row_count, col_count = {}, {}
        for (i, j) in value:
            if i in rows_left and j in cols_left:
                row_count[i] = row_count.get(i, 0) + 1
                col_count[j] = col_count.get(j, 0) + 1
        for (i, j), v in value.items():
            if i in rows_left and j in cols_left and v is not None and v != 0.0:
                cost = ((row_count[i] - 1) * (col_count[j] - 1), abs(abs(v) - 1.0), i, j)
                if best is None or cost < best[0]:
                    best = (cost, (i, j))
        if best is None:
            break
        r, c = best[1]
        rows_left.discard(r)
        cols_left.discard(c)
        low = sorted(i for (i, j) in value if j == c and i in rows_left)
        up = sorted(j for (i, j) in value if i == r and j in cols_left)
        ups = []
        for i in low:
            li = None if value[(i, c)] is None else value[(i, c)] / value[(r, c)]
            for j in up:
                if (i, j) not in value:
                    value[(i, j)] = 0.0
                    slots[(i, j)] = len(slots)
                    constants[slots[(i, j)]] = 0.0
                a, b = value[(i, j)], value[(r, j)]
                value[(i, j)] = None if (li is None or a is None or b is None) else a - li * b
                ups.append((i, j))
        pivots.append((r, c))
        pivot_values.append(value[(r, c)])
        lower.append(tuple(low))
        upper.append(tuple(up))
        updates.append(tuple(ups))
    return Plan(n, slots, constants, tuple(pivots), tuple(pivot_values), tuple(lower), tuple(upper), tuple(updates),
                tuple(sorted(rows_left)), tuple(sorted(cols_left)))


def scaled(term: str, pivot: float) -> str:
    """C for term / pivot with a constant pivot: nothing for 1, a sign for -1, else a product."""
    if pivot == 1.0:
        return term
    if pivot == -1.0:
        return f"-{term}"
    return f"{term} * {1.0 / pivot!r}"


def emit_c(p: Plan, prefix: str) -> str:
    """C99 functions: {prefix}_factor(a, piv) and {prefix}_solve(a, piv, b, x) / _solve_t(a, piv, c, y).

    `a` holds the slot values; the dense block (size r) is stored after the slots, row-major."""
    r = len(p.block_rows)
    base = len(p.slots)
    S = p.slots
    lines = [f"#define {prefix.upper()}_NSLOT {base + r * r}", f"#define {prefix.upper()}_NBLOCK {r if r else 1}", ""]
    # -- factor
    body = []
    for (row, col), pv, low, ups in zip(p.pivots, p.pivot_values, p.lower, p.updates):
        for i in low if pv != 1.0 else ():  # the multipliers l_i = a_i,col / pivot
            body.append(f"  a[{S[(i, col)]}] = {scaled(f'a[{S[(i, col)]}]', pv)};")
        for i, j in ups:
            body.append(f"  a[{S[(i, j)]}] -= a[{S[(i, col)]}] * a[{S[(row, j)]}];")
    for bi, i in enumerate(p.block_rows):
        for bj, j in enumerate(p.block_cols):
            src = f"a[{S[(i, j)]}]" if (i, j) in S else "0.0"
            body.append(f"  a[{base + bi * r + bj}] = {src};")
    lines.append(f"static int {prefix}_factor(double *a, int *piv) {{")
    lines += body
    lines.append(f"  return dense_lu(a + {base}, {r}, piv);")
    lines.append("}")
    # -- solve Phi x = b (b is overwritten)
    body = []
    for (row, col), low in zip(p.pivots, p.lower):
        for i in low:
            body.append(f"  b[{i}] -= a[{S[(i, col)]}] * b[{row}];")
    if r:
        body.append(f"  {{ double rb[{r}], rx[{r}];")
        body += [f"    rb[{k}] = b[{i}];" for k, i in enumerate(p.block_rows)]
        body.append(f"    dense_solve(a + {base}, {r}, piv, rb, rx);")
        body += [f"    x[{j}] = rx[{k}];" for k, j in enumerate(p.block_cols)]
        body.append("  }")
    for (row, col), pv, up in reversed(list(zip(p.pivots, p.pivot_values, p.upper))):
        terms = "".join(f" - a[{S[(row, j)]}] * x[{j}]" for j in up)
        body.append(f"  x[{col}] = {scaled(f'(b[{row}]{terms})' if terms else f'b[{row}]', pv)};")
    lines.append(f"static void {prefix}_solve(const double *a, const int *piv, double *b, double *x) {{")
    lines += body
    lines.append("}")
    # -- solve Phi^T y = c (c is overwritten)
    body = []
    for (row, col), pv, up in zip(p.pivots, p.pivot_values, p.upper):
        body.append(f"  y[{row}] = {scaled(f'c[{col}]', pv)};")
        for j in up:
            body.append(f"  c[{j}] -= a[{S[(row, j)]}] * y[{row}];")
    if r:
        body.append(f"  {{ double rc[{r}], ry[{r}];")
        body += [f"    rc[{k}] = c[{j}];" for k, j in enumerate(p.block_cols)]
        body.append(f"    dense_solve_t(a + {base}, {r}, piv, rc, ry);")
        body += [f"    y[{i}] = ry[{k}];" for k, i in enumerate(p.block_rows)]
        body.append("  }")
    for (row, col), low in reversed(list(zip(p.pivots, p.lower))):
        terms = "".join(f" - a[{S[(i, col)]}] * y[{i}]" for i in low)
        if terms:
            body.append(f"  y[{row}] = y[{row}]{terms};")
    lines.append(f"static void {prefix}_solve_t(const double *a, const int *piv, double *c, double *y) {{")
    lines += body
    lines.append("}")
    return "\n".join(lines) + "\n"

