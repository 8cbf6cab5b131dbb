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

PROBLEMS_SHOWN = 10


def problems(db: sqlite3.Connection, full: bool = False) -> list:
    """What SQLite finds wrong with the file of ``db`` (empty if nothing): at most
    ``PROBLEMS_SHOWN`` of its lines. ``full`` runs ``integrity_check`` instead of
    ``quick_check``."""
    pragma = "integrity_check" if full else "quick_check"
    try:
        rows = db.execute(f"PRAGMA {pragma}({PROBLEMS_SHOWN})").fetchall()
    except sqlite3.DatabaseError as exc:  # so damaged that the check itself cannot run
        return [str(exc)]
    except UnicodeDecodeError:  # a message quoting damaged bytes
        return ["SQLite's report is not even text"]
    found = [row[0] for row in rows]
    return [] if found == ["ok"] else found


def damage_report(path, found: list) -> str:
    """One line for the problems ``found`` in ``path``."""
    at_least = "at least " if len(found) >= PROBLEMS_SHOWN else ""
    more = f" (and {at_least}{len(found) - 1} more)" if len(found) > 1 else ""
    return (f"{path}: damaged: {found[0]}{more}; the file cannot be trusted: make it again,"
            " or copy it again from where it came from")
