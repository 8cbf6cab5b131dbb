"""Importers: other tools' traces converted into our schema.

``import_trace`` detects the format from the file's content (akita v3/v4/v5 SQLite,
Nsight Systems SQLite exports, Daisen CSV, Chrome Trace Event JSON), each plain or
gzipped (known by its magic bytes, whatever the file is called), streams it through a
``Loader`` and leaves either a complete, finalized trace at the output path or nothing
at all.
"""
from __future__ import annotations

import contextlib
import gzip
import io
import os
import shutil
import sqlite3
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ... import user_input
from ..outputs import disk_full, prepare_output
from ..progress import progress_bar
from ..writer import sqlite_problem, temporary_path
from . import akita, chrome, daisen_csv, nsys
from .loader import Loader, LoadReport, TraceFormatError

FORMATS = ("akita-v3", "akita-v4", "akita-v5", "nsys", "daisen-csv", "chrome")
SQLITE_FORMATS = ("akita-v3", "akita-v4", "akita-v5", "nsys")
SQLITE_MAGIC = b"SQLite format 3\x00"
GZIP_MAGIC = b"\x1f\x8b"
NSYS_REPORTS = (".nsys-rep", ".qdrep")  # Nsight Systems' own report files (binary)


def _head(path: str | os.PathLike, size: int = 4096) -> tuple[bytes, bool]:
    """The first bytes of the file's content, uncompressed if it is gzipped."""
    with open(path, "rb") as f:
        head = f.read(size)
    if head.startswith(GZIP_MAGIC):
        try:
            with gzip.open(path, "rb") as f:
                return f.read(size), True
        except (OSError, EOFError) as exc:
            raise TraceFormatError(f"{path}: damaged gzip data ({exc})") from None
    return head, False


def detect_format(path: str | os.PathLike, scratch: str | os.PathLike | None = None) -> str:
    """One of ``FORMATS``, from the first bytes of the (possibly gzipped) content.

    An SQLite file that has to be copied to be read (gzipped, or left with an unfinished
    transaction) is copied beside ``scratch`` (default: beside ``path``)."""
    path = Path(path)
    if not path.is_file():
        raise TraceFormatError(f"{path}: no such file")
    head, zipped = _head(path)
    if head.startswith(SQLITE_MAGIC):
        with _sqlite_copy(path, zipped, scratch or path) as plain, \
                _input_errors(path, "an SQLite trace"):
            db = akita.open_readonly(plain)
            try:
                if nsys.detect(db):
                    return "nsys"
                return akita.detect(db, path)
            finally:
                db.close()
    text = head.decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
    if text[:1] in ("[", "{"):
        return "chrome"
    if text.split("\n", 1)[0].replace(" ", "").startswith("ID,ParentID,"):
        return "daisen-csv"
    if path.suffix.lower() in NSYS_REPORTS:
        raise TraceFormatError(
            f"{path}: an Nsight Systems report is read once exported to SQLite:"
            f" nsys export --type sqlite {path}")
    raise TraceFormatError(
        f"{path}: unknown trace format (expected akita or Nsight Systems SQLite, Daisen CSV"
        f" or Chrome JSON, plain or gzipped)")


def hot_journal(src: str | os.PathLike) -> Path | None:
    """The rollback journal beside the SQLite file ``src``, if there is one: its writer
    (an MGPUSim run, say) was killed inside a transaction, or is still in one. Until
    SQLite undoes that transaction the file cannot be read consistently, and undoing it
    writes, which a reader must not do to its input."""
    journal = Path(f"{src}-journal")
    try:
        return journal if journal.stat().st_size > 0 else None
    except OSError:
        return None


@contextlib.contextmanager
def _sqlite_copy(src: Path, zipped: bool, beside: str | os.PathLike) -> Iterator[Path]:
    """A path SQLite can open, removed afterwards: ``src`` itself; its gunzipped copy
    beside ``beside`` (SQLite reads pages at random, so the copy cannot be a stream); or,
    with a ``hot_journal``, a copy of the file and its journal beside ``beside``, which
    SQLite rolls back to what the writer committed (``src`` is only read)."""
    journal = None if zipped else hot_journal(src)
    if not zipped and journal is None:
        yield src
        return
    plain = temporary_path(Path(beside).with_suffix(".gunzip" if zipped else ".rollback"))
    copied_journal = Path(f"{plain}-journal")
    try:
        if zipped:
            try:
                with gzip.open(src, "rb") as f, open(plain, "wb") as out:
                    shutil.copyfileobj(f, out, 1 << 20)
            except (OSError, EOFError) as exc:
                if disk_full(exc):
                    raise
                raise TraceFormatError(f"{src}: damaged gzip data ({exc})") from None
        else:
            try:
                shutil.copyfile(src, plain)
                shutil.copyfile(journal, copied_journal)
            except OSError as exc:
                if disk_full(exc):
                    raise
                raise TraceFormatError(f"{src}: it was left inside a transaction, and copying it"
                                       f" with its journal to undo that failed ({exc})") from None
            _roll_back(plain, src)
        yield plain
    finally:
        plain.unlink(missing_ok=True)
        copied_journal.unlink(missing_ok=True)


def _roll_back(copy: Path, src: Path) -> None:
    """Let SQLite undo the unfinished transaction of ``copy`` (a copy of ``src`` with its
    journal): it does so when the file is first read."""
    try:
        db = sqlite3.connect(copy)
        try:
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        finally:
            db.close()
    except sqlite3.DatabaseError as exc:
        if disk_full(exc):
            raise
        raise TraceFormatError(f"{src}: its unfinished transaction could not be undone"
                               f" ({sqlite_problem(exc, 'an SQLite trace')})") from None


@contextlib.contextmanager
def _input_errors(src: Path, what: str) -> Iterator[None]:
    """SQLite's errors on reading the input ``src`` (a damaged file) as a
    ``TraceFormatError`` naming it; a full disk while writing the output stays itself."""
    try:
        yield
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
        if disk_full(exc):
            raise
        raise TraceFormatError(f"{src}: {sqlite_problem(exc, what)}") from None


@contextlib.contextmanager
def _text(src: Path, zipped: bool) -> Iterator[tuple[io.TextIOWrapper, Callable[[], int]]]:
    """The file as UTF-8 text (gunzipped as it is read) and its compressed size so far."""
    raw = open(src, "rb")
    try:
        binary = gzip.GzipFile(fileobj=raw, mode="rb") if zipped else raw
        stream = io.TextIOWrapper(binary, encoding="utf-8", newline="")
        yield stream, raw.tell
    except UnicodeDecodeError as exc:
        if not zipped:  # read it again to say at which line and column
            raise TraceFormatError(str(user_input.utf8_error_in(src))) from None
        raise TraceFormatError(f"{src}: not UTF-8 text ({exc.reason})") from None
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise TraceFormatError(f"{src}: damaged gzip data ({exc or 'truncated'})") from None
    finally:
        raw.close()


def import_trace(src: str | os.PathLike, out: str | os.PathLike, fmt: str | None = None,
                 command: str = "import", show_progress: bool | None = None,
                 force: bool = True) -> ImportReport:
    """Convert ``src`` (plain or gzipped) into a trace at ``out``; returns an ``ImportReport``.

    ``out`` must not be ``src`` (nor a link to it); an existing ``out`` is replaced only
    if ``force``."""
    src, out = Path(src), Path(out)
    if not src.is_file():
        raise TraceFormatError(f"{src}: no such file")
    prepare_output(out, [src], force=force)
    fmt = fmt or detect_format(src, scratch=out)
    if fmt not in FORMATS:
        raise TraceFormatError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    zipped = _head(src, len(GZIP_MAGIC))[1]
    rolled_back = not zipped and fmt in SQLITE_FORMATS and hot_journal(src) is not None
    # akita's CSV writer repeats rows; a repeated row is dropped (and counted) there only.
    loader = Loader(out, source=fmt, command=command, config={"imported_from": str(src)},
                    drop_exact_duplicates=fmt == "daisen-csv")
    skipped = clamped = 0
    try:
        if fmt not in ("chrome", "nsys"):  # simulated time: 0 is the start of the simulation
            loader.set_clock("simulation", origin_ps=0)
        if fmt == "nsys":
            with _sqlite_copy(src, zipped, out) as plain, \
                    _input_errors(src, "an Nsight Systems export"):
                db = akita.open_readonly(plain)
                try:
                    with progress_bar(show_progress, total=nsys.row_count(db), unit="row",
                                      desc="import nsys") as bar:
                        skipped = nsys.read(db, src, loader, progress=bar.update)
                finally:
                    db.close()
        elif fmt.startswith("akita"):
            with _sqlite_copy(src, zipped, out) as plain:
                db = akita.open_readonly(plain)
                try:
                    with progress_bar(show_progress, total=akita.row_count(db, src), unit="task",
                                      desc=f"import {fmt}") as bar:
                        akita.read(db, src, fmt, loader, progress=bar.update)
                finally:
                    db.close()
        else:
            with _text(src, zipped) as (stream, position), \
                    progress_bar(show_progress, total=src.stat().st_size, unit="B",
                                 unit_scale=True, desc=f"import {fmt}") as bar:
                def progress(_chars: int) -> None:
                    bar.update(position() - bar.n)
                if fmt == "daisen-csv":
                    daisen_csv.read(stream, src, loader, progress=progress)
                else:
                    skipped, clamped = chrome.read(stream, src, loader, progress=progress)
        report = loader.finish(show_progress=show_progress)
    except BaseException:
        loader.abort()
        raise
    return ImportReport(format=fmt, skipped=skipped, clamped=clamped, rolled_back=rolled_back,
                        **vars(report))


@dataclass
class ImportReport(LoadReport):
    """A ``LoadReport`` with the format read and the events it could not use."""

    format: str = ""
    skipped: int = 0  # events that carry no task, link, instant or counter
    clamped: int = 0  # slices that end before they begin, kept with no length
    rolled_back: bool = False  # the input's writer left a transaction unfinished: undone
