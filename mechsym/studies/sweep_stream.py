"""A sweep's rows streamed to disk: PATH.part grows as tasks finish, PATH is written once, in grid order.

PATH.part (mechsym.core.output.part_path) starts with a line naming the sweep's digest (model, study,
backend and parameter sets) and its number of sets, then the CSV header (`index` before the sweep's
columns), then each finished task's rows, appended in one write each as they arrive, each row carrying its
set's index. A run that is interrupted (Ctrl-C, SIGTERM, a lost pool or cluster) leaves the .part; a run
with `resume` checks the digest, keeps the complete rows (the last for an index given twice) and computes
only the missing sets (and the sets whose task was lost). On completion the rows are copied in index
order, without the index, to PATH through mechsym.core.output.atomic, which removes the .part once PATH is
in place: the same file as an uninterrupted run's, and as `Table.to_csv` of the sweep's Table. A PATH
ending in .parquet is written through pyarrow (the optional extra `parquet`), each field's unit in its
metadata ("unit"), the .part being CSV as always (numbers at round-trip precision: no loss).
"""
from __future__ import annotations

import csv
import io
import os
import re

import numpy as np

from mechsym.core.errors import InputError
from mechsym.core.results import csv_number

HEAD = "# mechsym sweep"
LOST = "task lost "  # the message of a set whose task was given up: computed again on resume
_LOST = re.compile(rb',error,"?' + LOST.encode())
SCAN_BLOCK = 1 << 22  # bytes of the .part read at a time
COPY_ROWS = 1 << 14  # rows copied into the output at a time


def _ranges(starts, lengths):
    """The positions starts[i], starts[i] + 1, ..., starts[i] + lengths[i] - 1 of every i, concatenated."""
    first = np.cumsum(lengths) - lengths
    return np.repeat(starts - first, lengths) + np.arange(int(lengths.sum()))


def _rows_of(data, ends, base):
    """(index, offset, length, skip) of the complete rows in `data` (ending at `ends`), which starts at byte
    `base` of the file: each row's index parsed from its leading digits, vectorised."""
    arr = np.frombuffer(data, np.uint8)
    starts = np.r_[0, ends[:-1]]
    commas = np.flatnonzero(arr == 44)
    width = commas[np.searchsorted(commas, starts)] - starts
    index = np.zeros(len(starts), np.int64)
    for d in range(int(width.max(initial=0))):
        more = d < width
        index[more] = index[more] * 10 + (arr[starts[more] + d].astype(np.int64) - 48)
    return index, base + starts, (ends - starts).astype(np.int32), (width + 1).astype(np.int16)


def csv_rows(sets, first, rows, parameters, figures) -> str:
    """The CSV text of a task's rows (`Rows`): index (first, first + 1, ...), the parameters' values, the
    figures (empty where missing), status and message; numbers as every CSV writes them (csv_number), column
    by column rather than set by set."""
    from mechsym.studies.sweep_sets import set_columns

    count = len(rows)
    columns = [[str(k) for k in range(first, first + count)]]
    for values in set_columns(sets, parameters).values():
        columns.append(_numbers(values))
    for name in figures:
        values = rows.figures.get(name)
        columns.append(_numbers(values) if values is not None else [""] * count)
    columns.append(["ok" if ok else "error" for ok in rows.ok.tolist()])
    columns.append([_field(m) if m else "" for m in rows.messages])
    return "".join([",".join(row) + "\n" for row in zip(*columns)])


def _numbers(values) -> list:
    """csv_number of each value: a float array's without a call per value (the shortest round-trip text, NaN
    empty), any other sequence's value by value."""
    if isinstance(values, np.ndarray) and values.dtype == np.float64:
        return ["" if v != v else repr(v) for v in values.tolist()]
    return [csv_number(v) for v in values]


def _field(text) -> str:
    """A text field as the csv module writes it (quoted where it holds a comma, a quote or a line break)."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow([text])
    return buffer.getvalue()[:-1]


def read_part(part):
    """The rows of a sweep's .part as a Table in index order (its figures NaN where missing), for a plot."""
    from mechsym.core.results import Table

    with open(part, newline="") as fh:
        fh.readline()
        reader = csv.reader(fh)
        header = next(reader)
        rows = {int(r[0]): r[1:] for r in reader}
    ordered = [rows[i] for i in sorted(rows)]
    columns = {}
    for k, name in enumerate(header[1:]):
        values = [r[k] for r in ordered]
        columns[name] = (np.array(values, dtype=object) if name in ("status", "message")
                         else np.array([float(v) if v else np.nan for v in values]))
    return Table(columns)


class RowFile:
    """The .part of a streamed sweep of `count` sets with the columns `header` (parameters, figures, status,
    message), identified by `digest`. `done` marks the sets already there (resume)."""

    def __init__(self, path, digest, header, count, resume=False):
        from mechsym.core.output import part_path

        self.path, self.part = os.fspath(path), part_path(path)
        if self.part is None:
            raise InputError(f"'{path}' is not a file that a sweep can stream its rows beside; give a file name")
        self.digest, self.header, self.count = digest, list(header), int(count)
        self.done = np.zeros(self.count, bool)
        self.failed, self.first_failure = 0, ""
        exists = os.path.exists(self.part)
        if exists and not resume:
            raise InputError(f"'{self.part}' holds the rows of an interrupted sweep: resume it (--resume), or "
                             "delete it to start again")
        try:
            if exists:
                self._take_over()
            else:
                with open(self.part, "w", newline="") as fh:
                    fh.write(f"{self._first_line()}\n" + ",".join(["index", *self.header]) + "\n")
            self.fh = open(self.part, "a", newline="")
        except OSError as exc:
            raise InputError(f"cannot write '{self.part}': {exc.strerror or exc}") from None

    def _first_line(self):
        return f"{HEAD} {self.digest} of {self.count} sets"

    def _take_over(self):
        """Resume: check the digest, drop a last row cut short, mark the complete rows done."""
        with open(self.part, "rb") as fh:
            first = fh.readline().decode(errors="replace").rstrip("\n")
            if first != self._first_line():
                raise InputError(f"'{self.part}' holds another sweep (its first line: '{first[:120]}'); delete it "
                                 "or write this one elsewhere")
            fh.readline()
        index, *_, lost = self._scan()
        self.done[index[~lost]] = True

    def _scan(self):
        """(index, offset, length, skip, lost) of every complete row of the .part in index order (skip: the
        bytes of its index and comma; lost: its task was given up), the last row of an index kept; a last row
        cut short is truncated away. Vectorised over blocks of the file: no Python work per row."""
        parts, lost_at = [], []
        with open(self.part, "rb+") as fh:
            fh.readline()
            fh.readline()
            base, carry = fh.tell(), b""
            while True:
                block = fh.read(SCAN_BLOCK)
                if not block:
                    break
                data = carry + block
                ends = np.flatnonzero(np.frombuffer(data, np.uint8) == 10) + 1
                if ends.size:
                    parts.append(_rows_of(data[:ends[-1]], ends, base))
                    lost_at += [base + m.start() for m in _LOST.finditer(data, 0, ends[-1])]
                    base += int(ends[-1])
                    carry = data[ends[-1]:]
                else:
                    carry = data
            if carry:  # a write cut short by the end of the process
                fh.truncate(base)
        index, offset, length, skip = (np.concatenate([p[k] for p in parts]) if parts else np.zeros(0, np.int64)
                                       for k in range(4))
        lost = np.zeros(len(index), bool)
        if lost_at:
            lost[np.searchsorted(offset, lost_at, side="right") - 1] = True
        if np.any((index < 0) | (index >= self.count)):
            raise InputError(f"'{self.part}' holds a row of index outside 0..{self.count - 1}")
        order = np.argsort(index, kind="stable")  # in index order, the last row of an index kept
        order = order[np.r_[index[order][1:] != index[order][:-1], True]]
        return index[order], offset[order], length[order], skip[order], lost[order]

    def write(self, text, failed, first_failure):
        """Append a finished task's rows (csv_rows' text) and flush them to the file."""
        self.fh.write(text)
        self.fh.flush()
        self.failed += failed
        self.first_failure = self.first_failure or first_failure

    def close(self):
        """Close the .part (it stays on disk)."""
        self.fh.close()

    def finish(self, units, title):
        """Write PATH from the complete .part, in index order (CSV, or Parquet for a .parquet PATH), which
        the .part's removal follows. Returns the number of rows that failed."""
        from mechsym.core.output import atomic

        self.close()
        index, offset, length, skip, _ = self._scan()
        if len(index) != self.count:
            missing = np.setdiff1d(np.arange(self.count), index)
            raise InputError(f"'{self.part}' lacks {len(missing)} of {self.count} sets (the first: index "
                             f"{missing[0]}); run again with --resume")
        self.failed = 0
        with atomic(self.path, completes=self.part) as tmp:
            if self.path.lower().endswith(".parquet"):
                self._parquet(tmp, offset, length, skip, units, title)
            else:
                with open(tmp, "wb") as out:
                    out.write((",".join(self.header) + "\n").encode())
                    self._copy(out, offset, length, skip)
        return self.failed

    def _copy(self, out, offset, length, skip):
        """The rows at (offset, length) of the .part, in that order, without their index (its `skip` bytes),
        into `out`; counts the failed ones. Rows next to each other in the .part are read and cut in one
        piece (vectorised)."""
        breaks = np.flatnonzero(offset[1:] != offset[:-1] + length[:-1]) + 1
        with open(self.part, "rb") as src:
            for lo, hi in zip(np.r_[0, breaks], np.r_[breaks, len(offset)]):
                for a in range(lo, hi, COPY_ROWS):  # in pieces: bounded memory
                    b = min(a + COPY_ROWS, hi)
                    src.seek(offset[a])
                    data = np.frombuffer(src.read(int(offset[b - 1] + length[b - 1] - offset[a])), np.uint8)
                    starts = offset[a:b] - offset[a]
                    keep = np.ones(len(data), bool)
                    keep[_ranges(starts, skip[a:b].astype(np.int64))] = False  # each row's index and comma
                    rows = data[keep].tobytes()
                    self.failed += rows.count(b",error,")
                    out.write(rows)

    def _parquet(self, tmp, offset, length, skip, units, title):
        """The ordered rows as a Parquet file: numbers as float64 (a missing figure null), status and message
        as strings, each field's unit in its metadata, the title in the schema's."""
        try:
            import pyarrow as pa
            import pyarrow.csv as pacsv
            import pyarrow.parquet as pq
        except ImportError:
            raise InputError("a .parquet output needs pyarrow (pip install 'mechsym[parquet]')") from None
        import tempfile

        types = {n: pa.string() if n in ("status", "message") else pa.float64() for n in self.header}
        fields = [pa.field(n, types[n], metadata={"unit": units[n]} if units.get(n) else None) for n in self.header]
        schema = pa.schema(fields, metadata={"title": title})
        options = pacsv.ConvertOptions(column_types=types, strings_can_be_null=False, quoted_strings_can_be_null=False)
        with tempfile.TemporaryFile(dir=os.path.dirname(os.path.abspath(tmp))) as ordered:
            ordered.write((",".join(self.header) + "\n").encode())
            self._copy(ordered, offset, length, skip)
            ordered.seek(0)
            reader = pacsv.open_csv(ordered, convert_options=options)  # batch by batch: bounded memory
            with pq.ParquetWriter(tmp, schema) as writer:
                for batch in reader:
                    writer.write_table(pa.Table.from_batches([batch]).cast(schema))
