"""From OpenCL C with Klein's annotations to plain C that pycparser accepts.

pycparser parses C99 after the C preprocessor has run. OpenCL kernels differ in a few
spellings, which this step removes while keeping every remaining character at its
line and column, so parser errors and source lines still point at the user's text:

* comments are blanked;
* the qualifiers ``kernel``, ``global``, ``local``, ``constant``, ``private`` (and
  their ``__`` forms) are blanked and their offsets remembered; the frontend
  attaches each one to the declaration it precedes; ``__attribute__((...))`` hints
  and image access qualifiers are blanked;
* object-like ``#define NAME value`` macros are substituted (function-like macros and
  ``#include`` are refused by name); ``#pragma`` lines are ignored;
* Klein's annotations are taken out: ``@watch NAME;`` becomes the call
  ``__klein_watch(NAME);`` so that it happens at its place in the program,
  ``@emit TYPE NAME[N];`` and ``@bind [...]`` are removed and returned as data;
* OpenCL's extra type names (``uint``, ``float4`` ...) are declared in a prelude
  line placed before a ``#line 1`` directive.
"""
import json
import re
from dataclasses import dataclass, field

from .diagnostics import KernelError, Unsupported
from .types import TYPE_NAMES

ADDRESS_SPACES = {
    "global": "global", "__global": "global",
    "local": "local", "__local": "local",
    "constant": "constant", "__constant": "constant",
    "private": "private", "__private": "private",
}
KERNEL_WORDS = {"kernel", "__kernel"}
IGNORED_WORDS = {"__read_only", "__write_only", "read_only", "write_only"}

WATCH_CALL = "__klein_watch"

_WORD = re.compile(r"[A-Za-z_]\w*")
_WATCH = re.compile(r"@watch\s+([A-Za-z_]\w*)\s*;")
_EMIT = re.compile(r"@emit\s+([A-Za-z_]\w*)\s+([A-Za-z_]\w*)\s*\[\s*(\d+)\s*\]\s*;")


@dataclass
class Emit:
    """An ``@emit TYPE NAME[N];`` annotation: a per-work-item value to plot."""

    type_name: str
    name: str
    length: int
    line: int


@dataclass
class Preprocessed:
    """The parser-ready text and what was taken out of the original."""

    text: str                                  # prelude + '#line 1' + transformed source
    body: str = ""                             # the transformed source alone (what coordinates index)
    qualifiers: list = field(default_factory=list)  # (offset, word) in the original text
    kernel_offsets: list = field(default_factory=list)  # offsets of 'kernel' keywords
    emits: list = field(default_factory=list)  # Emit
    binds: list = field(default_factory=list)  # (line, spec dict)
    watch_lines: dict = field(default_factory=dict)  # name -> line of its @watch
    line_starts: list = field(default_factory=list)  # offset of each line (1-based index - 1)

    def offset(self, line, col):
        """Character offset in the original source of a 1-based (line, column)."""
        return self.line_starts[line - 1] + col - 1


def _blank(chars, start, end):
    """Replace chars[start:end] by spaces, keeping newlines (so lines stay put)."""
    for i in range(start, end):
        if chars[i] != "\n":
            chars[i] = " "


def _line_col(text, offset):
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _strip_comments(path, text):
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
            j = text.find("\n", i)
            j = n if j < 0 else j
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


def _directives(path, text):
    """Handle '#' lines: collect object-like macros, refuse the rest by name."""
    macros = {}
    chars = list(text)
    offset = 0
    for line_no, line in enumerate(text.split("\n"), start=1):
        stripped = line.lstrip()
        if stripped.startswith("#"):
            col = len(line) - len(stripped) + 1
            words = stripped[1:].split(None, 2)
            directive = words[0] if words else ""
            if directive == "define" and len(words) >= 2:
                name_part = stripped[1:].split(None, 1)[1]
                match = re.match(r"([A-Za-z_]\w*)(\(?)\s*(.*)", name_part)
                if match.group(2):
                    raise Unsupported(path, line_no, col, "function-like macros")
                macros[match.group(1)] = match.group(3).strip()
            elif directive == "pragma":
                pass
            elif directive in ("include", "if", "ifdef", "ifndef", "elif", "else", "endif", "undef"):
                raise Unsupported(path, line_no, col, f"#{directive}")
            else:
                raise KernelError(path, line_no, col, f"unknown directive '#{directive}'")
            _blank(chars, offset, offset + len(line))
        offset += len(line) + 1
    return "".join(chars), macros


def _bind_spec(path, line, col, body):
    """Klein writes ``@bind ["class":"chart", "data":["a"]]``: a map in brackets."""
    try:
        spec = json.loads("{" + body + "}")
    except json.JSONDecodeError as exc:
        raise KernelError(path, line, col, f"@bind is not a valid map: {exc.msg}") from None
    if not isinstance(spec.get("class"), str) or not isinstance(spec.get("data"), list):
        raise KernelError(path, line, col, '@bind needs "class": NAME and "data": [NAMES]')
    return spec


def _annotations(path, text, out):
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
            out.emits.append(Emit(emit.group(1), emit.group(2), int(emit.group(3)), line))
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


def _attribute_end(path, text, start, pos):
    """End offset of ``__attribute__((...))`` starting at ``start`` (the word ends at ``pos``)."""
    while pos < len(text) and text[pos].isspace():
        pos += 1
    depth = 0
    for i in range(pos, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            if i == pos:
                break
            return i + 1
    line, col = _line_col(text, start)
    raise KernelError(path, line, col, "__attribute__ must be followed by ((...))")


def _substitute_macros(text, macros):
    if not macros:
        return text
    for _ in range(8):  # macros may refer to earlier macros
        new = _WORD.sub(lambda m: macros.get(m.group(0), m.group(0)), text)
        if new == text:
            break
        text = new
    return text


def preprocess(path, source):
    """Turn an OpenCL C kernel file into pycparser input (see the module docstring)."""
    out = Preprocessed(text="")
    text = _strip_comments(path, source)
    text, macros = _directives(path, text)
    text = _substitute_macros(_annotations(path, text, out), macros)
    # Qualifiers are located in the final text, the one whose coordinates the parser
    # reports, so that each can be matched to the declaration that follows it.
    chars = list(text)
    offsets = [0]
    for i, c in enumerate(text):
        if c == "\n":
            offsets.append(i + 1)
    out.line_starts = offsets
    for match in _WORD.finditer(text):
        word = match.group(0)
        if word in ADDRESS_SPACES:
            out.qualifiers.append((match.start(), ADDRESS_SPACES[word]))
        elif word in KERNEL_WORDS:
            out.kernel_offsets.append(match.start())
        elif word == "__attribute__":
            # Hints such as reqd_work_group_size: blank the whole ((...)) group.
            _blank(chars, match.start(), _attribute_end(path, text, match.start(), match.end()))
            continue
        elif word not in IGNORED_WORDS:
            continue
        _blank(chars, match.start(), match.end())
    body = "".join(chars)
    out.body = body
    prelude = " ".join(f"typedef int {name};" for name in TYPE_NAMES)
    out.text = f'{prelude}\n#line 1 "{path}"\n{body}'
    return out
