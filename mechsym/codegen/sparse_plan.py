"""A static elimination order for the sparse constraint Jacobian Phi_q, planned once from its pattern.

Pivots are taken first on entries that are non-zero constants (the +-1 of the pin rows in the x and y
columns, the +1 of a driving row): such a pivot can never vanish, so its order is fixed at generation
time (Markowitz order, to limit fill-in), and its value is known then too, so the generated code
multiplies by its reciprocal (or nothing, for +-1) instead of dividing. What remains is a small block in the link angles, eliminated at
run time, because its entries can vanish (e.g. a horizontal link): in a static order of its own (Block:
Markowitz on its pattern, each pivot chosen where it is large in Phi_q at a few solved configurations and
checked at run time), and where a pivot fails that check, by a dense LU with partial pivoting.

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
    block: "Block | None" = None  # the block's static order, tried before its dense LU


@dataclass(frozen=True)
class Block:
    """A static elimination order of the run-time block, planned on its pattern (Markowitz). Its pivots are
    known only at run time and may vanish, so each is checked there (threshold pivoting: at least TAU times
    the largest other entry of its column); a sample where one fails is factorised by the dense LU instead."""

    fill: dict  # (row, col) -> slot of the fill-in this order creates (after the plan's slots)
    pivots: tuple  # ((row, col), ...) in elimination order
    lower: tuple
    upper: tuple
    updates: tuple


TAU = 0.1  # threshold of the block's static pivots at run time
TAU_PLAN = 0.5  # and in the samples that choose them (a margin: other configurations differ)
TIE = 1 - 1e-9  # an entry at the threshold by construction (equal links) qualifies on every machine alike


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


def plan(n: int, entries: dict, samples=()) -> Plan:
    """entries maps (row, col) to a float for constant entries or None for varying ones. samples: Phi_q
    (n, n) at a few solved configurations; with them the run-time block gets a static order too (Block)."""
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
                tuple(sorted(rows_left)), tuple(sorted(cols_left)),
                _block_order(slots, pivots, sorted(rows_left), sorted(cols_left), samples))


def _block_order(slots, pivots, rows_left, cols_left, samples):
    """Markowitz order on the pattern the constant phase leaves in the block, each pivot chosen among those
    at least TAU_PLAN times their column's largest entry in every sample (the block's entries at a sample
    being the Schur complement of the constant pivots). An entry of the pattern can vanish identically (the
    parallel links of a parallelogram), which only values show. None without samples, for an empty
    block, or where no pivot qualifies (the dense LU then factorises every sample)."""
    import numpy as np

    if not rows_left or not len(samples):
        return None
    prow, pcol = [r for r, _ in pivots], [c for _, c in pivots]
    blocks = []
    for jac in samples:
        jac = np.asarray(jac, float)
        schur = jac[np.ix_(rows_left, cols_left)]
        if prow:
            schur = schur - jac[np.ix_(rows_left, pcol)] @ np.linalg.solve(jac[np.ix_(prow, pcol)],
                                                                           jac[np.ix_(prow, cols_left)])
        blocks.append(schur)
    at_row, at_col = {i: k for k, i in enumerate(rows_left)}, {j: k for k, j in enumerate(cols_left)}
    pattern = {rc for rc in slots if rc[0] in at_row and rc[1] in at_col}
    rows, cols = set(rows_left), set(cols_left)
    fill, order, lower, upper, updates = {}, [], [], [], []
    while rows:
        row_count, col_count = {}, {}
        for i, j in pattern:
            if i in rows and j in cols:
                row_count[i] = row_count.get(i, 0) + 1
                col_count[j] = col_count.get(j, 0) + 1
        live = [at_row[i] for i in rows]
        candidates = [((row_count[i] - 1) * (col_count[j] - 1), i, j) for i, j in pattern if i in rows and j in cols
                      and all(abs(b[at_row[i], at_col[j]]) >= TIE * TAU_PLAN * np.max(np.abs(b[live, at_col[j]])) > 0
                              for b in blocks)]
        if not candidates:
            return None
        _, r, c = min(candidates)
        for b in blocks:  # eliminate with the chosen pivot, to judge the next ones
            k, m = at_row[r], at_col[c]
            for i in rows - {r}:
                b[at_row[i]] -= b[at_row[i], m] / b[k, m] * b[k]
        rows.discard(r)
        cols.discard(c)
        low = tuple(sorted(i for i, j in pattern if j == c and i in rows))
        up = tuple(sorted(j for i, j in pattern if i == r and j in cols))
        for i in low:
            for j in up:
                if (i, j) not in pattern:
                    pattern.add((i, j))
                    fill[(i, j)] = len(slots) + len(fill)
        order.append((r, c))
        lower.append(low)
        upper.append(up)
        updates.append(tuple((i, j) for i in low for j in up))
    return Block(fill, tuple(order), tuple(lower), tuple(upper), tuple(updates))


def scaled(term: str, pivot: float) -> str:
    """C for term / pivot with a constant pivot: nothing for 1, a sign for -1, else a product."""
    if pivot == 1.0:
        return term
    if pivot == -1.0:
        return f"-{term}"
    return f"{term} * {1.0 / pivot!r}"


def static_steps(p: Plan, S: dict, base: int, at, indent: str) -> dict:
    """The C lines of the static pivots' part of each stage, for emit_c (one matrix) and c_lanes (every lane,
    in the same order): `at(name, k)` prints element k of array `name`, S maps (row, col) to its slot, the
    dense block starts at slot `base`. "factor": the multipliers, the updates and the block's copy (row-major,
    zeros where Phi_q has no entry); "solve" / "back": the forward and back substitution of Phi_q x = b around
    the block's solve; "solve_t" / "back_t": those of Phi_q^T y = c."""
    r = len(p.block_rows)

    def a(i, j):
        return at("a", S[(i, j)])

    factor = []
    for (row, col), pv, low, ups in zip(p.pivots, p.pivot_values, p.lower, p.updates):
        for i in low if pv != 1.0 else ():  # the multipliers l_i = a_i,col / pivot
            factor.append(f"{indent}{a(i, col)} = {scaled(a(i, col), pv)};")
        for i, j in ups:
            factor.append(f"{indent}{a(i, j)} -= {a(i, col)} * {a(row, j)};")
    for bi, i in enumerate(p.block_rows):
        for bj, j in enumerate(p.block_cols):
            factor.append(f"{indent}{at('a', base + bi * r + bj)} = {a(i, j) if (i, j) in p.slots else '0.0'};")
    solve = [f"{indent}{at('b', i)} -= {a(i, col)} * {at('b', row)};"
             for (row, col), low in zip(p.pivots, p.lower) for i in low]
    back = []
    for (row, col), pv, up in reversed(list(zip(p.pivots, p.pivot_values, p.upper))):
        terms, b_row = "".join(f" - {a(row, j)} * {at('x', j)}" for j in up), at("b", row)
        back.append(f"{indent}{at('x', col)} = {scaled(f'({b_row}{terms})' if terms else b_row, pv)};")
    solve_t = []
    for (row, col), pv, up in zip(p.pivots, p.pivot_values, p.upper):
        solve_t.append(f"{indent}{at('y', row)} = {scaled(at('c', col), pv)};")
        solve_t += [f"{indent}{at('c', j)} -= {a(row, j)} * {at('y', row)};" for j in up]
    back_t = []
    for (row, col), low in reversed(list(zip(p.pivots, p.lower))):
        terms = "".join(f" - {a(i, col)} * {at('y', i)}" for i in low)
        if terms:
            back_t.append(f"{indent}{at('y', row)} = {at('y', row)}{terms};")
    return {"factor": factor, "solve": solve, "back": back, "solve_t": solve_t, "back_t": back_t}


def _element(name: str, k: int) -> str:
    """Element k of the C array `name` (one matrix's; c_lanes prints every lane's)."""
    return f"{name}[{k}]"


def emit_c(p: Plan, prefix: str) -> str:
    """C99 functions: {prefix}_factor(a, piv) and {prefix}_solve(a, piv, b, x) / _solve_t(a, piv, c, y).

    `a` holds the slot values; the dense block (size r) is stored after the slots, row-major."""
    r = len(p.block_rows)
    blk = p.block
    S = {**p.slots, **(blk.fill if blk else {})}
    base = len(S)
    lines = [f"#define {prefix.upper()}_NSLOT {base + r * r}", f"#define {prefix.upper()}_NBLOCK {r if r else 1}", ""]
    steps = static_steps(p, S, base, _element, "  ")
    # -- factor
    body = list(steps["factor"])
    if blk:  # the static order first; piv[0] = -1 marks it, else the dense LU of the copy above
        body += [f"  a[{k}] = 0.0;" for k in blk.fill.values()]
        body.append("  { double m;")
        for (row, col), low, ups in zip(blk.pivots, blk.lower, blk.updates):
            pv = f"a[{S[(row, col)]}]"
            if low:
                body.append("    m = 0.0;" + "".join(f" if (fabs(a[{S[(i, col)]}]) > m) m = fabs(a[{S[(i, col)]}]);" for i in low))
                body.append(f"    if (!(fabs({pv}) > 0.0 && fabs({pv}) >= {TAU!r} * m)) goto dense;")
            else:
                body.append(f"    if (!(fabs({pv}) > 0.0)) goto dense;")
            body.append(f"    {pv} = 1.0 / {pv};")
            body += [f"    a[{S[(i, col)]}] *= {pv};" for i in low]
            body += [f"    a[{S[(i, j)]}] -= a[{S[(i, col)]}] * a[{S[(row, j)]}];" for i, j in ups]
        body += ["    (void)m;", "  }", "  piv[0] = -1;", "  return 0;", "dense:"]
    lines.append(f"static int {prefix}_factor(double *a, int *piv) {{")
    lines += body
    lines.append(f"  return dense_lu(a + {base}, {r}, piv);")
    lines.append("}")
    # -- solve Phi x = b (b is overwritten)
    body = list(steps["solve"])
    if blk:
        body.append("  if (piv[0] < 0) {")
        for (row, col), low in zip(blk.pivots, blk.lower):
            body += [f"    b[{i}] -= a[{S[(i, col)]}] * b[{row}];" for i in low]
        for (row, col), up in reversed(list(zip(blk.pivots, blk.upper))):
            terms = "".join(f" - a[{S[(row, j)]}] * x[{j}]" for j in up)
            body.append(f"    x[{col}] = (b[{row}]{terms}) * a[{S[(row, col)]}];")
        body.append("  } else")
    if r:
        body.append(f"  {{ double rb[{r}], rx[{r}];")
        body += [f"    rb[{k}] = b[{i}];" for k, i in enumerate(p.block_rows)]
        body.append(f"    dense_solve(a + {base}, {r}, piv, rb, rx);")
        body += [f"    x[{j}] = rx[{k}];" for k, j in enumerate(p.block_cols)]
        body.append("  }")
    body += steps["back"]
    lines.append(f"static void {prefix}_solve(const double *a, const int *piv, double *b, double *x) {{")
    lines += body
    lines.append("}")
    # -- solve Phi^T y = c (c is overwritten)
    body = list(steps["solve_t"])
    if blk:
        body.append("  if (piv[0] < 0) {")
        for (row, col), up in zip(blk.pivots, blk.upper):
            body.append(f"    y[{row}] = c[{col}] * a[{S[(row, col)]}];")
            body += [f"    c[{j}] -= a[{S[(row, j)]}] * y[{row}];" for j in up]
        for (row, col), low in reversed(list(zip(blk.pivots, blk.lower))):
            terms = "".join(f" - a[{S[(i, col)]}] * y[{i}]" for i in low)
            if terms:
                body.append(f"    y[{row}] = y[{row}]{terms};")
        body.append("  } else")
    if r:
        body.append(f"  {{ double rc[{r}], ry[{r}];")
        body += [f"    rc[{k}] = c[{j}];" for k, j in enumerate(p.block_cols)]
        body.append(f"    dense_solve_t(a + {base}, {r}, piv, rc, ry);")
        body += [f"    y[{i}] = ry[{k}];" for k, i in enumerate(p.block_rows)]
        body.append("  }")
    body += steps["back_t"]
    lines.append(f"static void {prefix}_solve_t(const double *a, const int *piv, double *c, double *y) {{")
    lines += body
    lines.append("}")
    lines += _emit_det_sign(p, prefix, S, base)
    return "\n".join(lines) + "\n"


def parity(order) -> int:
    """0 if the sequence `order` of distinct numbers is an even permutation of its sorted self, else 1."""
    return sum(a > b for i, a in enumerate(order) for b in order[i + 1:]) % 2


def constant_sign(p: Plan, block_rows=None, block_cols=None) -> int:
    """1 if det Phi_q is minus the product of the run-time block's pivots, else 0, when the block is
    eliminated in the order block_rows x block_cols (default: the block as stored, for its dense LU): Phi_q
    with its rows and columns in elimination order is L U without further exchanges, so det Phi_q is the
    product of all pivots times the parities of the two orders; the constant pivots are known here."""
    rows = [r for r, _ in p.pivots] + list(p.block_rows if block_rows is None else block_rows)
    cols = [c for _, c in p.pivots] + list(p.block_cols if block_cols is None else block_cols)
    return (parity(rows) + parity(cols) + sum(v < 0 for v in p.pivot_values)) % 2


def _emit_det_sign(p: Plan, prefix: str, S: dict, base: int) -> list:
    """{prefix}_det_sign(a, piv): the sign of det Phi_q (+1 or -1) from a factorisation by {prefix}_factor.
    The constant phase contributes a fixed sign (constant_sign); the block adds the signs of its pivots and,
    for the dense LU, one change per row exchange (piv[k] != k); the static order keeps its pivots'
    reciprocals, which have their signs."""
    r, blk = len(p.block_rows), p.block
    lines = ["/* the sign of det Phi_q (+1 or -1) at a configuration factorised by the function above */",
             f"static int {prefix}_det_sign(const double *a, const int *piv) {{", "  (void)a; (void)piv;"]
    if blk:
        flips = "".join(f" ^ (a[{S[rc]}] < 0.0)" for rc in blk.pivots)
        static = constant_sign(p, [r_ for r_, _ in blk.pivots], [c for _, c in blk.pivots])
        lines.append(f"  if (piv[0] < 0) return ({static}{flips}) ? -1 : 1;")
    lines.append(f"  int neg = {constant_sign(p)};")
    if r:
        lines.append(f"  for (int k = 0; k < {r}; ++k) neg ^= (piv[k] != k) ^ (a[{base} + k * {r + 1}] < 0.0);")
    lines += ["  return neg ? -1 : 1;", "}"]
    return lines

