"""Reader for Daisen's CSV trace (akita v3 ``CSVTraceWriter``).

Header ``ID, ParentID, Kind, What, Where, Start, End``; times in seconds. akita writes
``", "`` separators without quoting, so spaces at a field's start are dropped; quoted
fields (as our exporter writes them) are accepted too (``columns`` says how rows and
fields are read). Times are parsed as exact decimals. akita's writer repeats some rows
word for word; the loader drops those repeats (and counts them), while a repeated ID
with other fields stays an error.

The file is read in blocks of text, split into rows and fields by a C loop
(``_columns``, which also reads the times exactly; unusual texts go through
``Decimal``), and whole blocks are staged at once (``Loader.add_many``), so memory is
bounded by the block size.
"""
import numpy as np

from ... import build
from .loader import TraceFormatError, seconds_to_ps

_columns = build.module("simulator.tracing.importers._columns")  # or its reference

HEADER = ("ID", "ParentID", "Kind", "What", "Where", "Start", "End")
CHUNK = 2 << 20  # characters read at once (about 16k rows)
MAX_ROW = 16 << 20  # a row longer than this is damaged (an unclosed quote, say)
COLUMNS = ("Start", "End")


def read(stream, path, loader, progress=None):
    """Stage every data row into ``loader``; ``progress(n)`` is called per block."""
    header = stream.readline()
    if not header.strip():
        raise TraceFormatError(f"{path}:1: empty file, expected the header {', '.join(HEADER)}")
    names = tuple(h.strip().strip('"') for h in header.strip("\r\n\ufeff").split(","))
    if names != HEADER:
        raise TraceFormatError(f"{path}:1: header is {', '.join(names)!r}; expected"
                               f" {', '.join(HEADER)}")
    line, rest = 2, ""  # the first data line; text of a row not read whole yet
    while True:
        chunk = stream.read(CHUNK)
        text = rest + chunk
        consumed, next_line, rows, problem = _columns.read_rows(text, line, not chunk)
        _stage(rows, path, loader)
        if problem is not None:
            raise TraceFormatError(f"{path}:{problem[0]}: {problem[1]}")
        rest, line = text[consumed:], next_line
        if progress:
            progress(len(chunk))
        if not chunk:
            return
        if len(rest) > MAX_ROW:
            raise TraceFormatError(f"{path}:{line}: a row longer than {MAX_ROW >> 20} MiB"
                                   " (an unclosed quote?)")


def _stage(rows, path, loader):
    if not len(rows):
        return
    for row, column, text in rows.inexact:  # unusual texts: Decimal rounds them or says why not
        exact = seconds_to_ps(text, f"{path}:{rows.lines[row]}", COLUMNS[column])
        if not -(2 ** 63) <= exact < 2 ** 63:
            raise TraceFormatError(f"{path}:{rows.lines[row]}: {COLUMNS[column]} {text!r} is"
                                   " beyond 106 days")
        (rows.starts if column == 0 else rows.ends)[row] = exact
    kinds = np.array([loader.kind_id(kind, what) for kind, what in rows.kinds], dtype=np.int64)
    wheres = np.array([loader.location_id(where) for where in rows.wheres], dtype=np.int64)
    loader.add_many(rows.ids, rows.parents, kinds[rows.kind], wheres[rows.where], rows.starts,
                    rows.ends, rows.lines, f"{path}:")
