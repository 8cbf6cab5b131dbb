"""Importers: other tools' traces converted into our schema.

``import_trace`` detects the format from the file's content (akita v3/v4/v5 SQLite,
Daisen CSV, Chrome Trace Event JSON), streams it through a ``Loader`` and leaves either
a complete, finalized trace at the output path or nothing at all.
"""
from pathlib import Path

from ... import user_input
from ..outputs import prepare_output
from ..progress import progress_bar
from . import akita, chrome, daisen_csv
from .loader import Loader, TraceFormatError

FORMATS = ("akita-v3", "akita-v4", "akita-v5", "daisen-csv", "chrome")
SQLITE_MAGIC = b"SQLite format 3\x00"


def detect_format(path):
    """One of ``FORMATS``, from the first bytes of the file."""
    path = Path(path)
    if not path.is_file():
        raise TraceFormatError(f"{path}: no such file")
    with open(path, "rb") as f:
        head = f.read(4096)
    if head.startswith(SQLITE_MAGIC):
        db = akita.open_readonly(path)
        try:
            return akita.detect(db, path)
        finally:
            db.close()
    text = head.decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
    if text[:1] in ("[", "{"):
        return "chrome"
    if text.split("\n", 1)[0].replace(" ", "").startswith("ID,ParentID,"):
        return "daisen-csv"
    raise TraceFormatError(
        f"{path}: unknown trace format (expected akita SQLite, Daisen CSV or Chrome JSON)")


def import_trace(src, out, fmt=None, command="import", show_progress=None, force=True):
    """Convert ``src`` into a trace at ``out``; returns (format, tasks, orphans, skipped).

    ``out`` must not be ``src`` (nor a link to it); an existing ``out`` is replaced only
    if ``force``."""
    src, out = Path(src), Path(out)
    prepare_output(out, [src], force=force)
    fmt = fmt or detect_format(src)
    if fmt not in FORMATS:
        raise TraceFormatError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    loader = Loader(out, source=fmt, command=command, config={"imported_from": str(src)})
    skipped = 0
    try:
        if fmt.startswith("akita"):
            db = akita.open_readonly(src)
            try:
                with progress_bar(show_progress, total=akita.row_count(db, src), unit="task",
                                  desc=f"import {fmt}") as bar:
                    for task in akita.read(db, src, fmt):
                        loader.add(task)
                        bar.update()
            finally:
                db.close()
        else:
            with open(src, encoding="utf-8", newline="") as stream, \
                    progress_bar(show_progress, total=src.stat().st_size, unit="B",
                                 unit_scale=True, desc=f"import {fmt}") as bar:
                if fmt == "daisen-csv":
                    for task in daisen_csv.read(stream, src, progress=bar.update):
                        loader.add(task)
                else:
                    skipped = chrome.read(stream, src, loader, progress=bar.update)
        tasks, orphans = loader.finish(show_progress=show_progress)
    except UnicodeDecodeError:
        loader.abort()
        raise TraceFormatError(str(user_input.utf8_error_in(src))) from None
    except BaseException:
        loader.abort()
        raise
    return fmt, tasks, orphans, skipped
