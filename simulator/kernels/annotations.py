"""Klein's annotations in a kernel source, and the comments around them.

Klein extends OpenCL C with three annotations. They are taken out of the user's file
before the C preprocessor runs, keeping every other character at its line and column:

* ``@watch NAME;`` becomes the call ``__klein_watch(NAME);`` so that it happens at its
  place in the program;
* ``@emit TYPE NAME[N];`` and ``@bind [...]`` are removed and returned as data.

Comments are blanked first, so an ``@`` inside a comment is not an annotation.
"""
import json
import re
from dataclasses import dataclass, field

from .diagnostics import KernelError

WATCH_CALL = "__klein_watch"

_WORD = re.compile(r"[A-Za-z_]\w*")
_WATCH = re.compile(r"@watch\s+([A-Za-z_]\w*)\s*;")
_EMIT = re.compile(r"@emit\s+([A-Za-z_]\w*)\s+([A-Za-z_]\w*)\s*\[\s*(\w+)\s*\]\s*;")
# A // comment runs to a newline, across backslash-newlines: C joins spliced lines
# (translation phase 2) before it finds comments (phase 3). Like clang, a splice may
# have spaces between the backslash and the newline (clang warns of them).
_LINE_COMMENT = re.compile(r"//(?:[^\n\\]|\\[ \t]*\n|\\)*")


@dataclass
class Emit:
    """An ``@emit TYPE NAME[N];`` annotation: a per-work-item value to plot."""

    type_name: str
    name: str
    length: int          # a macro name until the preprocessor has run
    line: int


@dataclass
class Annotations:
    """What the annotations of one source declare."""

    emits: list = field(default_factory=list)        # Emit
    binds: list = field(default_factory=list)        # (line, spec dict)
    watch_lines: dict = field(default_factory=dict)  # name -> line of its @watch


def _blank(chars, start, end):
    """Replace chars[start:end] by spaces, keeping newlines (so lines stay put)."""
    for i in range(start, end):
        if chars[i] != "\n":
            chars[i] = " "


def _line_col(text, offset):
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def strip_comments(path, text):
    """Blank comments; string and character literals are kept (and left alone)."""
    chars = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        elif text.startswith("//", i):
            j = _LINE_COMMENT.match(text, i).end()
            _blank(chars, i, j)
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                line, col = _line_col(text, i)
                raise KernelError(path, line, col, "unterminated /* comment")
            _blank(chars, i, j + 2)
            i = j + 2
        else:
            i += 1
    return "".join(chars)


def _bind_spec(path, line, col, body):
    """Klein writes ``@bind ["class":"chart", "data":["a"]]``: a map in brackets."""
    try:
        spec = json.loads("{" + body + "}")
    except json.JSONDecodeError as exc:
        raise KernelError(path, line, col, f"@bind is not a valid map: {exc.msg}") from None
    if not isinstance(spec.get("class"), str) or not isinstance(spec.get("data"), list):
        raise KernelError(path, line, col, '@bind needs "class": NAME and "data": [NAMES]')
    return spec


def _replace_annotations(path, text, out):
    chars = list(text)
    pos = text.find("@")
    while pos >= 0:
        line, col = _line_col(text, pos)
        watch = _WATCH.match(text, pos)
        emit = _EMIT.match(text, pos)
        if watch:
            call = f"{WATCH_CALL}({watch.group(1)});"
            # The call is longer than the annotation; put it at the start of the
            # annotation's span so only text after it on this line shifts.
            _blank(chars, pos, watch.end())
            chars[pos] = call
            out.watch_lines[watch.group(1)] = line
        elif emit:
            length = emit.group(3)
            out.emits.append(Emit(emit.group(1), emit.group(2), int(length) if length.isdigit() else length,
                                  line))
            _blank(chars, pos, emit.end())
        elif text.startswith("@bind", pos):
            start = text.find("[", pos)
            depth, end = 0, start
            while start >= 0 and end < len(text):
                depth += {"[": 1, "]": -1}.get(text[end], 0)
                if depth == 0:
                    break
                end += 1
            if start < 0 or depth != 0 or text[pos + 5:start].strip():
                raise KernelError(path, line, col, "@bind must be followed by [ ... ]")
            out.binds.append((line, _bind_spec(path, line, col, text[start + 1:end])))
            _blank(chars, pos, end + 1)
        else:
            word = _WORD.match(text, pos + 1)
            name = word.group(0) if word else ""
            if name in ("watch", "emit"):
                raise KernelError(path, line, col, f"malformed @{name}: expected "
                                  + ("'@watch NAME;'" if name == "watch" else "'@emit TYPE NAME[N];'"))
            raise KernelError(path, line, col, f"unknown annotation '@{name}'")
        pos = text.find("@", pos + 1)
    return "".join(chars)


def take_annotations(path, source):
    """(source without comments and annotations, their ``Annotations``)."""
    out = Annotations()
    return _replace_annotations(path, strip_comments(path, source), out), out
