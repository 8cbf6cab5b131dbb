"""The C preprocessor in front of the parser, with OpenCL's build options and macros.

We use ``pcpp``, a complete C99 preprocessor written in Python (installed with the
project from PyPI), rather than the system ``cpp``: it runs in-process (no child
process per edit-and-run, no dependency on a compiler being installed), it reports
errors through hooks we turn into located ``KernelError``s, and it keeps each line's
leading whitespace, so columns stay right on every line without a macro expansion.

``preprocess(path, source, options)`` takes Klein's annotations out (``annotations``),
then runs ``#if/#ifdef/#ifndef/#elif/#else/#endif``, object- and function-like macros
and ``#include "..."`` (searched next to the file, then in ``-I`` directories), with
the macros an OpenCL 1.2 compiler predefines and the build options' ``-D``/``-U``.
``#pragma`` lines (``OPENCL EXTENSION``, ``unroll``), ``#line`` and GNU line markers
(``# 12 "file"``) are accepted and dropped.
Headers are read as bytes, as clang reads them (``encoding``): a byte that is not
UTF-8 may stand in a comment, a literal or a skipped block; on a directive pcpp cannot
read, it is the error, at its column.

The output carries ``#line`` directives, so the parser's coordinates name the user's
file or header and its line. ``Origin.column`` maps a column on a line changed by
a macro expansion back to the user's text (the start of the expansion when the
column falls inside it).
"""
import functools
import io
import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from pcpp import Preprocessor

from .annotations import take_annotations
from .diagnostics import KernelError
from .encoding import foreign_byte, foreign_column, not_utf8, text_of
from .includes import PREPROCESSOR, Confinement

# Macros of an OpenCL 1.2 compiler (OpenCL C spec 6.10, float.h/limits.h/math constants).
PREDEFINED = {
    "__OPENCL_VERSION__": "120", "__OPENCL_C_VERSION__": "120", "CL_VERSION_1_0": "100",
    "CL_VERSION_1_1": "110", "CL_VERSION_1_2": "120", "__ENDIAN_LITTLE__": "1",
    "__IMAGE_SUPPORT__": "1", "__kernel_exec(X, typen)": "__kernel", "kernel_exec(X, typen)": "__kernel",
    "cl_khr_fp64": "1", "cl_khr_int64_base_atomics": "1", "cl_khr_int64_extended_atomics": "1",
    "cl_khr_global_int32_base_atomics": "1", "cl_khr_global_int32_extended_atomics": "1",
    "cl_khr_local_int32_base_atomics": "1", "cl_khr_local_int32_extended_atomics": "1",
    "cl_khr_byte_addressable_store": "1", "cl_khr_subgroups": "1", "cl_khr_3d_image_writes": "1",
    "CHAR_BIT": "8", "SCHAR_MAX": "127", "SCHAR_MIN": "(-127-1)", "CHAR_MAX": "127",
    "CHAR_MIN": "(-127-1)", "UCHAR_MAX": "255", "SHRT_MAX": "32767", "SHRT_MIN": "(-32767-1)",
    "USHRT_MAX": "65535", "INT_MAX": "2147483647", "INT_MIN": "(-2147483647-1)",
    "UINT_MAX": "0xffffffffU", "LONG_MAX": "0x7fffffffffffffffL",
    "LONG_MIN": "(-0x7fffffffffffffffL-1)", "ULONG_MAX": "0xffffffffffffffffUL",
    "FLT_DIG": "6", "FLT_MANT_DIG": "24", "FLT_MAX_10_EXP": "38", "FLT_MAX_EXP": "128",
    "FLT_MIN_10_EXP": "-37", "FLT_MIN_EXP": "-125", "FLT_RADIX": "2",
    "FLT_MAX": "0x1.fffffep127f", "FLT_MIN": "0x1.0p-126f", "FLT_EPSILON": "0x1.0p-23f",
    "DBL_MAX": "0x1.fffffffffffffp1023", "DBL_MIN": "0x1.0p-1022", "DBL_EPSILON": "0x1.0p-52",
    "MAXFLOAT": "0x1.fffffep127f", "HUGE_VALF": "INFINITY", "HUGE_VAL": "INFINITY",
    "M_E": "2.718281828459045090796", "M_LOG2E": "1.442695040888963387005",
    "M_LOG10E": "0.434294481903251816668", "M_LN2": "0.693147180559945286227",
    "M_LN10": "2.302585092994045901094", "M_PI": "3.141592653589793115998",
    "M_PI_2": "1.570796326794896557999", "M_PI_4": "0.785398163397448278999",
    "M_1_PI": "0.318309886183790691216", "M_2_PI": "0.636619772367581382433",
    "M_2_SQRTPI": "1.128379167095512558561", "M_SQRT2": "1.414213562373095145475",
    "M_SQRT1_2": "0.707106781186547572737",
    "M_E_F": "2.71828174591f", "M_LOG2E_F": "1.44269502163f", "M_LOG10E_F": "0.434294492006f",
    "M_LN2_F": "0.693147182465f", "M_LN10_F": "2.30258512497f", "M_PI_F": "3.14159274101f",
    "M_PI_2_F": "1.57079637051f", "M_PI_4_F": "0.785398185253f", "M_1_PI_F": "0.318309873343f",
    "M_2_PI_F": "0.636619746685f", "M_2_SQRTPI_F": "1.12837922573f",
    "M_SQRT2_F": "1.41421353817f", "M_SQRT1_2_F": "0.707106769085f",
}

# Options of clBuildProgram that change nothing in a functional model.
_IGNORED_OPTIONS = ("-cl-", "-w", "-Werror", "-g", "-O")


@dataclass
class BuildOptions:
    """``-D``/``-U``/``-I`` as given to clBuildProgram (in order: a later -U undoes a -D)."""

    macros: list = field(default_factory=list)        # ("D", "NAME", "VALUE") / ("U", "NAME", None)
    include_dirs: list = field(default_factory=list)

    def define(self, text: str) -> None:
        name, sep, value = text.partition("=")
        self.macros.append(("D", name.strip(), value if sep else "1"))

    def undefine(self, name: str) -> None:
        self.macros.append(("U", name.strip(), None))

    def text(self) -> str:
        """The options as clBuildProgram's string (what ``parse_build_options`` reads)."""
        words = [f"-D{name}={value}" if kind == "D" else f"-U{name}" for kind, name, value in self.macros]
        words += [f"-I{directory}" for directory in self.include_dirs]
        return shlex.join(words)


def parse_build_options(text: str) -> BuildOptions:
    """Parse an OpenCL build-options string (``-D N=4 -DX -I dir -U Y -cl-mad-enable``)."""
    try:
        words = shlex.split(text or "")
    except ValueError as exc:
        raise ValueError(f"build options: {exc}") from None
    options = BuildOptions()
    i = 0
    while i < len(words):
        word = words[i]
        flag = word[:2]
        if flag in ("-D", "-U", "-I"):
            value = word[2:]
            if not value:
                i += 1
                if i == len(words):
                    raise ValueError(f"build options: {flag} needs a value")
                value = words[i]
            if flag == "-D":
                options.define(value)
            elif flag == "-U":
                options.undefine(value)
            else:
                options.include_dirs.append(value)
        elif not word.startswith(_IGNORED_OPTIONS):
            raise ValueError(f"build options: unknown option {word!r}"
                             " (supported: -D NAME[=VALUE], -U NAME, -I DIR, -cl-*, -w, -Werror)")
        i += 1
    for kind, name, _ in options.macros:
        if not name.split("(")[0].isidentifier():
            raise ValueError(f"build options: -{kind} needs a macro name, got {name!r}")
    return options


@dataclass
class Origin:
    """Where the preprocessed text came from: each output line's file, line and text."""

    lines: dict = field(default_factory=dict)   # file -> original lines (list of str)

    def column(self, file, line, expanded, col):
        """The column in the user's line for column ``col`` of the ``expanded`` line."""
        original = self.lines.get(file)
        if original is None or not 1 <= line <= len(original):
            return col
        source = original[line - 1]
        if source == expanded:
            return col
        prefix = 0
        while prefix < min(len(source), len(expanded)) and source[prefix] == expanded[prefix]:
            prefix += 1
        if col <= prefix:
            return col
        suffix = 0
        while (suffix < min(len(source), len(expanded)) - prefix
               and source[-1 - suffix] == expanded[-1 - suffix]):
            suffix += 1
        if col > len(expanded) - suffix:
            return col - (len(expanded) - len(source))
        return prefix + 1   # inside a macro expansion: point at the macro's use


@dataclass
class Preprocessed:
    """The parser-ready text and what was taken out of the original."""

    text: str
    emits: list
    binds: list
    watch_lines: dict
    origin: Origin
    out_lines: dict = field(default_factory=dict)   # (file, line) -> expanded text of that line


class _Pcpp(Preprocessor):
    """pcpp with errors raised as ``KernelError``, files read from the user's text, and
    ``#include`` kept inside ``confinement`` when there is one."""

    def __init__(self, path, main_text, origin, confinement=None):
        super().__init__()
        self.user_path = path
        self.main_text = main_text
        self.origin = origin
        self.confinement = confinement
        self.spelled_include = ""
        self.read_lines = {}   # file -> its lines as pcpp reads them (comments blanked)
        self.line_directive = "#line"
        self.passthru_includes = None

    def include(self, tokens, original_line):
        # What the user wrote after #include (a macro's name, not its expansion), for a
        # refusal to quote: the file it resolves to would name a server folder.
        self.spelled_include = "".join(t.value for t in tokens).strip()
        yield from super().include(tokens, original_line)

    def on_error(self, file, line, msg):
        # A directive is the one place a byte that is not UTF-8 reaches pcpp's own
        # checks (comments are blanked, and a skipped block is not read): when one is on
        # the line, it is why pcpp could not read the line.
        lines = self.read_lines.get(self._user_name(file), ())
        text = lines[line - 1] if 1 <= line <= len(lines) else ""
        col = foreign_column(text)
        if col is not None:
            raise KernelError(self._user_name(file), line, col,
                              not_utf8(foreign_byte(text[col - 1])), PREPROCESSOR)
        raise self.error(file, line, msg.strip())

    def on_include_not_found(self, is_malformed, is_system_include, curdir, includepath):
        where = self.lastdirective
        if is_malformed:
            raise self.error(where.source, where.lineno, f"malformed #include {includepath}")
        where_to_add = "add its folder with -I DIR" if self.confinement is None else \
            "searched in the kernel's folder, -I folders and the server's include folders"
        raise self.error(where.source, where.lineno,
                         f"#include file '{includepath}' not found ({where_to_add})")

    def on_directive_unknown(self, directive, toks, ifpassthru, precedingtoks):
        text = "".join(t.value for t in toks).strip()
        if directive.value == "error":
            raise self.error(directive.source, directive.lineno, f"#error {text}")
        # ``# 12 "file" 2`` is a GNU line marker, as in preprocessed sources some suites ship;
        # like ``#line`` it is dropped, so positions keep naming the text the user sees.
        if directive.value in ("warning", "pragma", "line") or directive.value.isdigit():
            return True
        raise self.error(directive.source, directive.lineno, f"unknown directive '#{directive.value}'")

    def on_file_open(self, is_system_include, includepath):
        if self.confinement is not None and self.confinement.root_of(includepath) is None:
            # Refused before it is opened, whether or not it exists.
            where = self.lastdirective
            raise self.confinement.refusal(self._user_name(where.source), where.lineno,
                                           self.spelled_include)
        with open(includepath, "rb") as handle:   # bytes, read as the kernel's are (encoding)
            text = text_of(handle.read())
        name = self._user_name(includepath)
        self.origin.lines[name] = text.split("\n")
        return io.StringIO(self.reads(name, take_annotations(includepath, text)[0]))

    def reads(self, name, text):
        """``text``, noted as what pcpp reads of file ``name``."""
        self.read_lines[name] = text.split("\n")
        return text

    def error(self, file, line, reason):
        """A preprocessor ``KernelError`` at ``line`` of ``file`` (as pcpp names it)."""
        return KernelError(self._user_name(file), line, 1, reason, PREPROCESSOR)

    def _user_name(self, file):
        if self.confinement is not None:
            return self.confinement.display(file or self.user_path)
        return _display_name(file or self.user_path, self.user_path)


@functools.cache
def _predefined_macros():
    """pcpp's macro objects for ``PREDEFINED``, tokenized once per process (a preprocessor
    only reads them, so every run can share them)."""
    cpp = Preprocessor()
    for name, value in PREDEFINED.items():
        cpp.define(f"{name} {value}")
    return dict(cpp.macros)


def _display_name(name, main):
    """The name messages use for a file pcpp names ``name`` (relative to the working
    directory): the user's own spelling for the main file."""
    full = os.path.abspath(name)
    if full == os.path.abspath(main):
        return main
    return os.path.relpath(full)


def preprocess(path: str, source: str, options: BuildOptions | None = None,
               confinement: Confinement | None = None) -> Preprocessed:
    """Run the preprocessor on ``source`` (named ``path``); see the module docstring.
    With ``confinement``, includes and ``-I`` stay inside its folders, which are searched
    after the ``-I`` ones (``kernels.includes``)."""
    options = options or BuildOptions()
    text, notes = take_annotations(path, source)
    origin = Origin({path: source.split("\n")})
    cpp = _Pcpp(path, text, origin, confinement)
    folder = str(Path(path).parent) if Path(path).parent != Path("") else "."
    cpp.add_path(folder)
    for directory in options.include_dirs:
        cpp.add_path(directory)
    if confinement is not None:
        try:
            confinement.check_include_dirs(options.include_dirs)
        except ValueError as exc:
            raise KernelError(path, 0, 0, str(exc)) from None
        for directory in confinement.allowed:
            cpp.add_path(directory)
    cpp.macros.update(_predefined_macros())
    for kind, name, value in options.macros:
        if kind == "D":
            cpp.define(f"{name} {value}")
        else:
            cpp.undef(name)
    out = io.StringIO()
    try:
        cpp.parse(cpp.reads(path, text), path)
        cpp.write(out)
    except KernelError:
        raise
    except Exception as exc:  # noqa: BLE001 - pcpp fails on some malformed directives by crashing
        where = getattr(cpp, "lastdirective", None)
        raise cpp.error(getattr(where, "source", None), getattr(where, "lineno", 0) or 0,
                        f"malformed preprocessor directive ({type(exc).__name__})") from None
    for emit in notes.emits:
        if isinstance(emit.length, str):
            emit.length = _macro_int(cpp, path, emit)
    result = Preprocessed("", notes.emits, notes.binds, notes.watch_lines, origin)
    result.text = _index_lines(out.getvalue(), path, result.out_lines, cpp._user_name)
    return result


def _macro_int(cpp, path, emit):
    """The integer an ``@emit NAME[MACRO];`` length macro expands to."""
    macro = cpp.macros.get(emit.length)
    text = "".join(t.value for t in macro.value).strip() if macro is not None else ""
    try:
        return int(text.strip("()"), 0)
    except ValueError:
        raise KernelError(path, emit.line, 1, f"@emit {emit.name}[{emit.length}]: the length must be"
                          " an integer or a macro defined as one") from None


def _index_lines(text, main, out_lines, name_of):
    """Name files in ``#line`` as messages do (``name_of``), blank ``#pragma`` lines (``OPENCL
    EXTENSION``, ``unroll``: nothing to do for them), and record each output line's
    origin in ``out_lines``."""
    lines = text.split("\n")
    file, number = main, 1
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        if stripped.startswith("#line"):
            parts = stripped.split(None, 2)
            number = int(parts[1])
            if len(parts) > 2:
                file = name_of(parts[2].strip().strip('"'))
            lines[i] = f'#line {number} "{file}"'
            continue
        if stripped.startswith("#pragma"):
            lines[i] = ""
        out_lines[(file, number)] = lines[i]
        number += 1
    return "\n".join(lines)
