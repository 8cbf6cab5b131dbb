"""Reader for Daisen's CSV trace (akita v3 ``CSVTraceWriter``).

Header ``ID, ParentID, Kind, What, Where, Start, End``; times in seconds. akita writes
``", "`` separators without quoting, so spaces around fields are dropped; quoted fields
(as our exporter writes them) are accepted too. Times are parsed as exact decimals.
akita's writer repeats some rows word for word; the loader drops those repeats (and
counts them), while a repeated ID with other fields stays an error.

The file is read in blocks of rows by pandas' C tokenizer, times are converted by a C
loop (``_columns``, exact; unusual texts go through ``Decimal``) and whole blocks are
staged at once (``Loader.add_many``), so memory is bounded by the block size.
"""
import re

import numpy as np
import pandas as pd

from ... import build
from .loader import TraceFormatError, seconds_to_ps

_columns = build.module("simulator.tracing.importers._columns")  # or its reference
padded, to_ps = _columns.padded, _columns.to_ps

HEADER = ("ID", "ParentID", "Kind", "What", "Where", "Start", "End")
BLOCK = 25_000
PS_EXPONENT = 12  # seconds -> ps
TOO_MANY = re.compile(r"Expected \d+ fields in line (\d+), saw (\d+)")  # pandas counts from our line 2


def read(stream, path, loader, progress=None):
    """Stage every data row into ``loader``; ``progress(n)`` is called per block."""
    header = stream.readline()
    if not header.strip():
        raise TraceFormatError(f"{path}:1: empty file, expected the header {', '.join(HEADER)}")
    names = tuple(h.strip().strip('"') for h in header.strip("\r\n\ufeff").split(","))
    if names != HEADER:
        raise TraceFormatError(f"{path}:1: header is {', '.join(names)!r}; expected"
                               f" {', '.join(HEADER)}")
    # No names: the first data line sets the field count, and a later line with more
    # fields is a parser error (one with fewer is padded with '' and fails its checks).
    line = 2  # the first data line (blank lines are rows too, so rows map to lines)
    try:
        blocks = pd.read_csv(stream, header=None, dtype=str, keep_default_na=False,
                             skipinitialspace=True, skip_blank_lines=False, chunksize=BLOCK,
                             engine="c", quotechar='"', index_col=False)
        for block in blocks:
            if block.shape[1] != len(HEADER):
                raise TraceFormatError(f"{path}:{line}: expected {len(HEADER)} fields,"
                                       f" found {block.shape[1]}")
            _stage(block, path, loader, line)
            line += len(block)
            if progress:
                progress(len(block))
    except pd.errors.ParserError as exc:
        found = TOO_MANY.search(str(exc))
        if not found:
            raise TraceFormatError(f"{path}: {exc}") from None
        raise TraceFormatError(f"{path}:{int(found.group(1)) + 1}: expected {len(HEADER)} fields,"
                               f" found {found.group(2)}") from None
    except pd.errors.EmptyDataError:
        return


def _stage(block, path, loader, first_line):
    columns = {name: block[i].to_numpy(dtype=object) for i, name in enumerate(HEADER)}
    lines = np.arange(first_line, first_line + len(block))
    blank = (columns["ID"] == "") & (columns["Kind"] == "") & (columns["Start"] == "")
    if blank.any():  # blank lines
        keep = ~blank
        columns = {k: v[keep] for k, v in columns.items()}
        lines = lines[keep]
    if not len(lines):
        return
    text = {k: _stripped(columns[k]) for k in ("ID", "ParentID", "Kind", "What", "Where")}
    starts = _times(columns["Start"], lines, path, "Start")
    ends = _times(columns["End"], lines, path, "End")
    kinds = _interned(text["Kind"], text["What"], loader.kind_id)
    locations = _interned(text["Where"], None, lambda name, _: loader.location_id(name))
    loader.add_many(text["ID"].tolist(), text["ParentID"].tolist(), kinds, locations, starts, ends,
                    lines, f"{path}:")


def _stripped(values):
    if not padded(values):
        return values
    return pd.Series(values, dtype=object).str.strip().to_numpy(dtype=object)


def _times(texts, lines, path, column):
    values, ok = to_ps(texts, PS_EXPONENT)
    for i in np.flatnonzero(~ok):  # unusual texts: Decimal rounds them or says what is wrong
        exact = seconds_to_ps(texts[i], f"{path}:{lines[i]}", column)
        if not -(2 ** 63) <= exact < 2 ** 63:
            raise TraceFormatError(f"{path}:{lines[i]}: {column} {texts[i]!r} is beyond 106 days")
        values[i] = exact
    return values


def _interned(first, second, intern):
    """Keys from ``intern(a, b)`` for each (a, b) pair (b None: single column), calling it
    once per distinct pair."""
    if second is None:
        codes, uniques = pd.factorize(first)
        keys = np.array([intern(u, None) for u in uniques], dtype=np.int64)
        return keys[codes]
    a_codes, a_uniques = pd.factorize(first)
    b_codes, b_uniques = pd.factorize(second)
    codes, pairs = pd.factorize(a_codes.astype(np.int64) * len(b_uniques) + b_codes)
    keys = np.array([intern(a_uniques[p // len(b_uniques)], b_uniques[p % len(b_uniques)])
                     for p in pairs], dtype=np.int64)
    return keys[codes]
