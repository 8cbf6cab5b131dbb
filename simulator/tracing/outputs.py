"""Outputs of the commands: nothing a user already has is lost.

Every command that writes a file goes through the same rules:

- ``prepare_output`` refuses an output that is one of the command's inputs (the same
  file, by device and inode: another name, a symlink or a hard link to it included),
  an output that is a directory, and an output that exists, unless ``force``;
- the file is written to a hidden sibling named after the writing process
  (``writer.temporary_path``) and renamed into place when complete
  (``writer.pending_output``), so a failed run leaves what was there untouched;
- a writer killed outright (``kill -9``, a lost machine) cannot rename anything, so
  its sibling stays: ``interrupted`` finds the ones whose process is gone, the next
  command on that output names them, and ``finalize`` turns one into a trace marked
  incomplete;
- ``disk_full`` recognises a full disk however it surfaces (``OSError`` from Python,
  ``SQLITE_FULL`` from SQLite or the bulk inserter), so it is reported in one line.
"""
import errno
import os
import re
import sqlite3
import sys
from pathlib import Path

from .writer import PARTIAL_MARK, TraceError


class OutputError(TraceError):
    """An output the command must not write; the message says why and what to do."""


def same_file(a, b) -> bool:
    """Whether paths ``a`` and ``b`` are one file (same device and inode)."""
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist: then they are not the same file
        return False


def prepare_output(out, inputs=(), force: bool = False) -> Path:
    """Check that ``out`` may be written by a command reading ``inputs``; create its
    directory if needed. Raises ``OutputError``."""
    out = Path(out)
    if out.is_dir():
        raise OutputError(f"{out}: is a directory; -o names the file to write")
    for source in inputs:
        if source is not None and same_file(out, source):
            raise OutputError(f"{out}: is an input of this command ({source}); write the"
                              " output to another file")
    if out.exists() and not force:
        raise OutputError(f"{out}: already exists; pass --force to replace it")
    if not out.parent.is_dir():
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"{out.parent}: cannot create the directory: {exc.strerror}") from None
    return out


def _writer_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def interrupted(out) -> list:
    """Unfinished files a killed writer left for ``out``, oldest first."""
    out = Path(out)
    pattern = re.compile(re.escape(f".{out.name}{PARTIAL_MARK}") + r"([0-9]+)")
    found = []
    try:
        names = os.listdir(out.parent if str(out.parent) else ".")
    except OSError:
        return []
    for name in names:
        match = pattern.fullmatch(name)
        if match and not _writer_alive(int(match.group(1))):
            found.append(out.with_name(name))
    return sorted(found, key=lambda p: (p.stat().st_mtime if p.exists() else 0, p.name))


def interrupted_note(out):
    """One line naming what killed writers left for ``out``, or None."""
    left = interrupted(out)
    if not left:
        return None
    names = ", ".join(str(p) for p in left)
    return (f"note: an interrupted run left {names}; `python -m simulator finalize {out}`"
            " turns it into a trace marked incomplete")


def announce_interrupted(out) -> None:
    """Print ``interrupted_note(out)`` on stderr, if there is anything to say."""
    note = interrupted_note(out)
    if note:
        print(note, file=sys.stderr)


def disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` says the disk (or the user's quota) is full."""
    if isinstance(exc, OSError):
        return exc.errno in (errno.ENOSPC, errno.EDQUOT)
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", None)
        if code is not None and code & 0xFF == sqlite3.SQLITE_FULL:
            return True
        return "database or disk is full" in str(exc)  # SQLITE_FULL's text (bulk inserter)
    return False
