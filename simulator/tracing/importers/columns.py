"""Loops over a Daisen CSV's text, the readable reference of ``_columns.pyx``.

``read_rows(text, line, final)`` splits the text into rows and fields and reads each
row's seven fields (ID, ParentID, Kind, What, Where, Start, End) into columns: the IDs as
text (a ParentID '' as None), Kind/What pairs and Where names each listed once with an
index per row, and the times as exact integer picoseconds.

Fields are separated by ``,``; spaces at a field's start are skipped (akita writes
``", "``). A field may be quoted (``"a, b"``, with ``""`` for a quote inside), as
pandas reads CSV: a quote opens a quoted field only at the field's start, a newline
inside one belongs to the field, and text after the closing quote joins the field. Rows
end at ``\\n``, ``\\r\\n`` or ``\\r``. An ID, Kind, What or Where that still starts or
ends with a space is stripped of whitespace at both ends (``str.strip``). A row whose
ID, Kind and Start are all empty (a blank line) is skipped; any other row must have
exactly seven fields.

``to_ps(texts, exponent)`` multiplies each decimal text by ``10**exponent`` (12 for
seconds to ps, 6 for µs to ps) and returns (values, ok): int64 values, and a mask that
is False where the text is not a plain ASCII decimal (``[-+]digits[.digits][e[-+]digits]``
between spaces), has more than 19 significant digits, the product is not a whole
number, or it overflows int64. Callers read those few values the slow way
(``Decimal``), which rounds or reports them; ``read_rows`` lists them as ``inexact``.
"""
import re
from dataclasses import dataclass, field

import numpy as np

PLAIN = re.compile(r"^ *([-+]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([-+]?[0-9]+))? *$")
INT64_MAX = 2 ** 63 - 1
UINT64_MAX = 2 ** 64 - 1
FIELDS = 7
ROW_END = re.compile(r"\r\n|\r|\n")


def to_ps(texts, exponent):
    """(int64 values, bool ok) for ``texts`` scaled by ``10**exponent``."""
    values = np.zeros(len(texts), dtype=np.int64)
    ok = np.zeros(len(texts), dtype=bool)
    for i, text in enumerate(texts):
        match = PLAIN.match(text)
        if not match or not (match.group(2) or match.group(3)):
            continue
        sign, whole, frac, exp = match.groups()
        frac = frac or ""
        digits = int((whole or "0") + frac)
        # the C loop stops taking digits once one more could pass 2**64 (as there)
        if digits // 10 > UINT64_MAX // 10 or abs(int(exp or 0)) > 400:
            continue
        shift = exponent + int(exp or 0) - len(frac)
        if shift >= 0:
            value = digits * 10 ** shift
        else:
            value, rest = divmod(digits, 10 ** -shift)
            if rest:
                continue
        if value > INT64_MAX:
            continue
        values[i] = -value if sign == "-" else value
        ok[i] = True
    return values, ok


@dataclass
class Rows:
    """Columns of the rows read (blank rows left out)."""

    ids: list = field(default_factory=list)
    parents: list = field(default_factory=list)  # text, or None for ''
    kinds: list = field(default_factory=list)  # (Kind, What) pairs, each once
    wheres: list = field(default_factory=list)  # Where names, each once
    kind: object = None  # per row, its index into kinds
    where: object = None  # per row, its index into wheres
    starts: object = None  # int64 ps, where exact
    ends: object = None
    inexact: list = field(default_factory=list)  # (row, 0 for Start or 1 for End, text)
    lines: object = None  # the line each row starts on

    def __len__(self):
        return len(self.ids)


def read_rows(text, line, final):
    """Read the rows of ``text``, which starts where a row starts, on line ``line``.

    Without ``final`` the last row is left unread unless its end is in ``text`` (more
    text may follow). Returns ``(consumed, line, rows, problem)``: the characters read,
    the line the rest starts on, the ``Rows`` read, and None or ``(line, message)`` for
    the first row that is not a Daisen row (reading stops there).
    """
    out = Rows()
    kinds, wheres = {}, {}
    kind, where, starts, ends, lines = [], [], [], [], []
    consumed, problem = 0, None
    for fields, end, next_line in _rows(text, line, final):
        if fields is None:
            problem = (line, "the file ends inside a quoted field")
            break
        row_line, line, consumed = line, next_line, end
        if len(fields) > FIELDS:
            problem = (row_line, f"expected {FIELDS} fields, found {len(fields)}")
            break
        found = len(fields)
        fields += [""] * (FIELDS - found)
        if fields[0] or fields[2] or fields[5]:
            if found < FIELDS:
                problem = (row_line, f"expected {FIELDS} fields, found {found}")
                break
            ext, parent, category, action, place = (_strip(f) for f in fields[:5])
            out.ids.append(ext)
            out.parents.append(parent or None)
            kind.append(kinds.setdefault((category, action), len(kinds)))
            where.append(wheres.setdefault(place, len(wheres)))
            values, ok = to_ps(fields[5:7], 12)
            for column in (0, 1):
                if not ok[column]:
                    out.inexact.append((len(out.ids) - 1, column, fields[5 + column]))
            starts.append(int(values[0]))
            ends.append(int(values[1]))
            lines.append(row_line)
    out.kinds, out.wheres = list(kinds), list(wheres)
    out.kind, out.where = np.array(kind, dtype=np.int64), np.array(where, dtype=np.int64)
    out.starts, out.ends = np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64)
    out.lines = np.array(lines, dtype=np.int64)
    return consumed, line, out, problem


def _strip(text):
    return text.strip() if text[:1] == " " or text[-1:] == " " else text


def _rows(text, line, final):
    """(fields, end, line after) of each row; ``end`` is past its terminator. Fields None:
    the text ends inside a quoted field."""
    if '"' not in text:  # the usual case: split at row ends and commas
        pos = 0
        for match in ROW_END.finditer(text):
            if match.end() == len(text) and match.group() == "\r" and not final:
                return  # a "\r\n" may be cut in two
            yield _split(text[pos:match.start()]), match.end(), line + 1
            pos, line = match.end(), line + 1
        if final and pos < len(text):
            yield _split(text[pos:]), len(text), line
        return
    yield from _quoted_rows(text, line, final)


def _split(row):
    return [f.lstrip(" ") for f in row.split(",")]


def _quoted_rows(text, line, final):
    """``_rows`` character by character, for text with quotes (pandas' tokenizer)."""
    pos, n = 0, len(text)
    while pos < n:
        fields, current, state, p = [], [], "start", pos
        while True:
            if p >= n:
                if not final:
                    return  # the row goes on past this text
                if state == "quoted":
                    yield None, n, line
                    return
                fields.append("".join(current))
                yield fields, n, line
                return
            c = text[p]
            if state == "start":
                if c == " ":
                    p += 1
                    continue
                if c == '"':
                    state, p = "quoted", p + 1
                    continue
                state = "field"
            elif state == "quote":
                if c == '"':  # a doubled quote inside the quotes
                    current.append(c)
                    state, p = "quoted", p + 1
                    continue
                state = "field"
            elif state == "quoted":
                if c == '"':
                    state, p = "quote", p + 1
                    continue
                size = _row_end(text, p, final)
                if size is None:
                    return
                if size:  # a line break inside the quotes belongs to the field
                    current.append(text[p:p + size])
                    line, p = line + 1, p + size
                else:
                    current.append(c)
                    p += 1
                continue
            # a plain character of a field, a separator or the row's end
            if c == ",":
                fields.append("".join(current))
                current, state = [], "start"
                p += 1
                continue
            size = _row_end(text, p, final)
            if size is None:
                return
            if size:
                fields.append("".join(current))
                line, pos = line + 1, p + size
                yield fields, pos, line
                break
            current.append(c)
            p += 1


def _row_end(text, p, final):
    """Length of the line break at ``p`` (0 for none); None if it may go on past the text."""
    if text[p] == "\n":
        return 1
    if text[p] != "\r":
        return 0
    if p + 1 < len(text):
        return 2 if text[p + 1] == "\n" else 1
    return 1 if final else None
