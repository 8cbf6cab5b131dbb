"""Damage: SQLite's own checks of a trace file.

A bad copy or a failing disk leaves a file SQLite still opens, whose damaged pages
only show when a query reads them, or as nonsense values when they hold valid-looking
bytes. SQLite can check every page: ``PRAGMA quick_check`` checks each B-tree page,
its cells and free list (about 1.2 s for a 264 MB trace of 4 M tasks, read from the
page cache, so roughly 5 s per GB), and ``PRAGMA integrity_check`` also checks that
every index agrees with its table (about 2.5 times as long). ``info`` runs the first,
``check`` the second.
"""
import sqlite3

from .progress import progress_bar

PROBLEMS_SHOWN = 10
# The progress bar counts pages. A check gives no count of its own, but SQLite can call
# back every STEPS virtual-machine instructions, and the calls per page of a trace vary
# little (measured on traces of 20k to 1M tasks: quick_check 1.2-1.33, integrity_check
# 1.8-2.0).
STEPS = 1000
CALLS_PER_PAGE = {"quick_check": 1.3, "integrity_check": 1.9}


def problems(db: sqlite3.Connection, full: bool = False,
             show_progress: bool | None = None) -> list:
    """What SQLite finds wrong with the file of ``db`` (empty if nothing): at most
    ``PROBLEMS_SHOWN`` of its lines. ``full`` runs ``integrity_check`` instead of
    ``quick_check``. A progress bar estimates the pages checked (see ``STEPS``)."""
    pragma = "integrity_check" if full else "quick_check"
    try:
        rows = _checked(db, pragma, show_progress)
    except sqlite3.DatabaseError as exc:  # so damaged that the check itself cannot run
        return [str(exc)]
    except UnicodeDecodeError:  # a message quoting damaged bytes
        return ["SQLite's report is not even text"]
    found = [row[0] for row in rows]
    return [] if found == ["ok"] else found


def _checked(db, pragma, show_progress):
    """The rows of ``PRAGMA pragma``, with a progress bar."""
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    calls = [0]
    with progress_bar(show_progress, total=pages, unit=" pages", unit_scale=True,
                      desc="checking for damage", leave=False) as bar:
        def advance():
            calls[0] += 1
            done = min(pages - 1, int(calls[0] / CALLS_PER_PAGE[pragma]))
            if done > bar.n:
                bar.update(done - bar.n)
            return 0  # go on

        db.set_progress_handler(advance, STEPS)
        try:
            return db.execute(f"PRAGMA {pragma}({PROBLEMS_SHOWN})").fetchall()
        except sqlite3.OperationalError as exc:
            # Only an exception in ``advance`` interrupts the check, and the one that
            # comes there is Ctrl-C (Python runs its signal handler in the callback):
            # sqlite3 swallows it and SQLite reports "interrupted", which is no damage.
            if exc.sqlite_errorcode == sqlite3.SQLITE_INTERRUPT:
                raise KeyboardInterrupt from None
            raise
        finally:
            db.set_progress_handler(None, STEPS)


def damage_report(path, found: list) -> str:
    """One line for the problems ``found`` in ``path``."""
    at_least = "at least " if len(found) >= PROBLEMS_SHOWN else ""
    more = f" (and {at_least}{len(found) - 1} more)" if len(found) > 1 else ""
    return (f"{path}: damaged: {found[0]}{more}; the file cannot be trusted: make it again,"
            " or copy it again from where it came from")
