"""Traces still being written: which files they are, whether their writer still runs,
and whether the app may read them yet.

Every command of the simulator writes its trace as a hidden sibling of its output,
``.NAME.partial-PID`` (PID: the writing process), and renames it to NAME once it is
finalized (docs/reliability.md; the app shares the name's form with the simulator,
never its code). ``run``, ``run-kernel`` and ``synth`` write that file in WAL mode, so
the app can show the run while it goes: in WAL, readers never block the writer's
commits. A file with a rollback journal (an import) is never opened while its writer
runs, since a reader's shared lock would hold the writer's commits back; whether a
file is in WAL mode is read from its header, which takes no lock.

Whether the writer still runs is told by its process: a file whose process is gone
was left by a killed run, which ``python -m simulator finalize NAME`` completes. A
trace written in place under its own name (the tracing API) carries no process id;
it counts as running while it or its log changed in the last ``QUIET_SECONDS``.
"""
from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

PARTIAL = re.compile(r"\.(?P<target>.+)\.partial-(?P<pid>[0-9]+)")
"""The name of a file a command is writing: ``.NAME.partial-PID``."""
QUIET_SECONDS = 60.0
"""A trace without a process id whose file and log have not changed for this long
is taken for stopped."""
_HEADER = b"SQLite format 3\x00"
_WAL_VERSION = 2
"""The file format read/write versions (header bytes 18 and 19) of a WAL-mode file."""


@dataclass(frozen=True)
class Writer:
    """Who writes a trace: its final ``target`` name and process ``pid`` (both None
    for a trace written in place), and whether it is ``running``."""
    target: str | None
    pid: int | None
    running: bool


def partial_of(name: str) -> tuple[str, int] | None:
    """(target name, writer pid) of a ``.NAME.partial-PID`` file name, else None."""
    match = PARTIAL.fullmatch(name)
    return (match.group("target"), int(match.group("pid"))) if match else None


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (someone else's counts: it is alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OverflowError:  # no process has such a number
        return False
    return True


def in_wal_mode(path: str | os.PathLike) -> bool:
    """Whether the SQLite file at ``path`` is in WAL mode, from its header (no lock
    taken, nothing opened through SQLite). False for a file too short to say."""
    try:
        with open(path, "rb") as f:
            header = f.read(20)
    except OSError:
        return False
    return (len(header) == 20 and header.startswith(_HEADER)
            and header[18] == header[19] == _WAL_VERSION)


def changed_lately(path: str | os.PathLike, now: float | None = None) -> bool:
    """Whether ``path`` or its WAL log was modified in the last ``QUIET_SECONDS``."""
    now = time.time() if now is None else now
    times = []
    for name in (str(path), str(path) + "-wal"):
        try:
            times.append(os.stat(name).st_mtime)
        except OSError:
            pass
    return bool(times) and now - max(times) < QUIET_SECONDS


def writer_of(path: str | os.PathLike) -> Writer:
    """The ``Writer`` of the unfinished trace at ``path``."""
    path = Path(path)
    found = partial_of(path.name)
    if found is None:
        return Writer(None, None, changed_lately(path))
    target, pid = found
    return Writer(target, pid, process_alive(pid))


@dataclass(frozen=True)
class Unfinished:
    """A ``.NAME.partial-PID`` file in a directory of traces."""
    name: str
    target: str
    pid: int
    running: bool
    readable: bool  # False: its writer runs with a rollback journal, so it is not opened


def unfinished_in(directory: str | os.PathLike, suffixes: tuple[str, ...],
                  only: str | None = None) -> list[Unfinished]:
    """The partial files in ``directory`` of targets ending in one of ``suffixes`` (or
    named ``only``), by target name then process id."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    found = []
    for name in names:
        parsed = partial_of(name)
        if parsed is None:
            continue
        target, pid = parsed
        if (only is not None and target != only) or not target.endswith(tuple(suffixes)):
            continue
        running = process_alive(pid)
        readable = not running or in_wal_mode(Path(directory) / name)
        found.append(Unfinished(name, target, pid, running, readable))
    return sorted(found, key=lambda u: (u.target, u.pid))
