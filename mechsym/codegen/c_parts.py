"""Straight-line C in parts of bounded size, so that the compiler's time grows linearly with the program.

A C compiler's register allocation and scheduling grow faster than linearly with the length of one
function: a 50-joint tree's mass matrix printed as one block of 3,000 assignments takes the compiler most
of a minute. `plan` cuts the temporaries of a spec's large functions into parts, each printed by
mechsym.codegen.c_source.render_straight as a function of its own (`MS_FN(_partN)`) that the entry point
calls once per sample:

- The temporaries of the spec's functions are cut into pieces: the pieces of the program they come from
  (spec.Function.pieces: a tree's recursions give one per body and step, RobCoGen's structure), consecutive
  ones joined up to PIECE_SIZE temporaries and cut at PART_SIZE; else ranges of PART_SIZE in one order
  consistent with their dependencies (the order in which the functions first use them, each after the
  temporaries it reads). A function's part for one piece is the temporaries of that piece it needs, so that
  functions needing the same temporaries (a body's world pose in the frame functions, H in `mass`, `forward`
  and `contact`) print the same part, which is written once.
- A temporary read outside its part (by a later part or by an output) is kept in a per-sample workspace
  `ms_w` at a slot of its own; a temporary over the shared inputs alone (computed once per call, before the
  loop over samples) is passed in the array `ms_s`. Slots are numbered over the whole spec, so a part reads
  and writes the same slots whichever function calls it. Outputs held in the workspace are copied by a table.

Each part, and each entry point of a spec above UNITS_SIZE, is preceded by the marker line `UNIT`: the C
backend compiles them as translation units of their own, in parallel (mechsym.codegen.c_backend.write_entry);
as one file (an export) the markers are comments. Only the placement of the text changes: each temporary is
the same expression, printed the same way (the results agree to round-off: a compiler may, for instance,
join a sine and a cosine of one angle into one call only when they are in one function).
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass

__all__ = ["UNIT", "Plan", "plan", "keys", "body_size"]

# a spec with at most SPEC_SIZE body temporaries in all its functions is printed whole (a quadruped's has 4,500
# to 5,700, with the Coriolis matrix 6,000), each entry point a translation unit of its own above UNITS_SIZE;
# in a larger one, a function with at most WHOLE is printed whole, and the others in parts of PIECE_SIZE to
# PART_SIZE temporaries (a part's call and its workspace traffic cost little beside that many operations)
UNITS_SIZE = 2000
SPEC_SIZE = 6000
WHOLE = 40
PIECE_SIZE = 48
PART_SIZE = 300
UNIT = "/* ms: translation unit */"


@dataclass(frozen=True)
class Plan:
    """Where each temporary of a spec goes: `part` (key -> its part, a sortable tuple; a key is (symbol,
    expression)), `slot` (body key -> workspace slot, for those read outside their part), `shared` (head key
    -> slot in `s`), the sizes of the workspace and of `s`, the names of the functions printed in parts, and
    the symbols each body key's expression reads (`free`)."""

    part: dict
    slot: dict
    shared: dict
    workspace: int
    nshared: int
    split: frozenset
    free: dict


def body_size(spec) -> int:
    """The body temporaries (those computed per sample) of all the spec's functions."""
    return sum(len(f.shared_temporaries()[1]) for f in spec.functions.values())


def plan(spec, whole=None) -> Plan | None:
    """The parts of a large spec's functions (more than `whole`, by default SPEC_SIZE, body temporaries in
    all), or None for a smaller one, whose functions are printed whole."""
    if body_size(spec) <= (SPEC_SIZE if whole is None else whole):
        return None
    bodies = {name: len(f.shared_temporaries()[1]) for name, f in spec.functions.items()}
    split = [f for f in spec.functions.values() if bodies[f.name] > WHOLE]
    readers, outputs_read, heads, free = _uses(split)
    if all(f.pieces for f in split):
        part = _merged({key: piece for f in split for key, piece in zip(f.temporaries, f.pieces) if key in readers})
    else:
        part = {key: n // PART_SIZE for key, n in _order(readers).items()}
    slot = {}
    for key in sorted(part, key=part.get):
        own = part[key]
        if key in outputs_read or any(part[r] != own for r in readers[key]):
            slot[key] = len(slot)
    shared = {key: n for n, key in enumerate(heads)}
    return Plan(part, slot, shared, len(slot), len(shared), frozenset(f.name for f in split), free)


def _merged(pieces) -> dict:
    """key -> part from key -> (piece, index in the program): consecutive pieces joined until a part has
    PIECE_SIZE temporaries, and a part cut at PART_SIZE."""
    part, count, number, last = {}, 0, 0, None
    for key in sorted(pieces, key=lambda k: pieces[k][1]):
        piece = pieces[key][0]
        if count >= PART_SIZE or (piece != last and count >= PIECE_SIZE):
            number, count = number + 1, 0
        part[key], last = number, piece
        count += 1
    return part


def keys(f):
    """(head keys, body keys) of a function's temporaries, and its symbol -> key map."""
    head, body = f.shared_temporaries()
    named = {t: (t, e) for t, e in f.temporaries}
    return [named[t] for t, _ in head], [named[t] for t, _ in body], named


def _uses(functions):
    """For each body temporary of `functions` (its key) the keys that read it, in the order of first use;
    the keys the outputs read; the head keys, in order; the symbols each body key reads."""
    import sympy as sp  # (here: the C backend, which a warm worker loads without sympy, reads only UNIT)

    readers, outputs_read, heads, free = {}, set(), {}, {}
    for f in functions:
        head, body, named = keys(f)
        heads.update(dict.fromkeys(head))
        for key in body:
            readers.setdefault(key, [])
        for key in body:
            if key not in free:
                free[key] = sp.sympify(key[1]).free_symbols
            for s in free[key]:
                if s in named and named[s] not in heads:
                    readers[named[s]].append(key)
        for e in f.outputs:
            outputs_read.update(named[s] for s in sp.sympify(e).free_symbols if s in named and named[s] not in heads)
    return readers, outputs_read, list(heads), free


def _order(readers):
    """The body temporaries of `functions` in one order consistent with their dependencies, preferring the
    order of first use (key -> position)."""
    first = {key: n for n, key in enumerate(readers)}
    waiting = dict.fromkeys(readers, 0)
    for key, rs in readers.items():
        for r in set(rs):
            waiting[r] += 1
    ready = [(first[k], k) for k, n in waiting.items() if n == 0]
    heapq.heapify(ready)
    position = {}
    while ready:
        _, key = heapq.heappop(ready)
        position[key] = len(position)
        for r in set(readers[key]):
            waiting[r] -= 1
            if waiting[r] == 0:
                heapq.heappush(ready, (first[r], r))
    return position
