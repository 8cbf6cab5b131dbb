"""Kernel errors that point at the source: ``file:line:col: reason``.

Every problem found while reading, checking or running a kernel is a ``KernelError``.
Its text is one line in the format compilers use, so editors and users can jump to
the spot; the CLI prints it instead of a traceback. A byte of the source that is not
UTF-8 and that the reason quotes is shown as ``encoding.shown`` shows it.
"""
from .encoding import shown


class KernelError(Exception):
    """A syntax, semantic or run-time error in a kernel, located in its source.

    ``kind`` names the sort of error in words of its own (``syntax error``,
    ``preprocessor error``...), for a message that must not quote the source.
    """

    def __init__(self, path, line, col, reason, kind="error"):
        self.path = path
        self.line = line or 0
        self.col = col or 0
        self.reason = shown(reason)
        self.kind = kind
        super().__init__(f"{path}:{self.line}:{self.col}: {self.reason}")


class Unsupported(KernelError):
    """A valid OpenCL C construct that this subset does not execute (named explicitly)."""

    def __init__(self, path, line, col, construct):
        super().__init__(path, line, col, f"unsupported: {construct}", kind="unsupported construct")


def at(coord, path, reason, cls=KernelError):
    """A ``KernelError`` located at a pycparser ``Coord`` (or at line 0 if there is none)."""
    if coord is None:
        return cls(path, 0, 0, reason)
    return cls(path, coord.line, coord.column or 1, reason)
