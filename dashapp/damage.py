"""Damage named: each trace file is checked once, in the background, for damage.

A trace with one page overwritten or a few bytes flipped (a bad copy, a failing disk)
still opens, and its queries may return numbers that are simply wrong. So the first
page that opens a trace starts ``PRAGMA quick_check`` on it in a thread (it reads the
whole file once: about a second per GB from the page cache), waits for it a moment,
and remembers the verdict per file identity (device, inode, size, modification time),
so a file replaced or rewritten is checked again and nothing else is. Every page of a
damaged trace then says "damaged: ..." instead of drawing it. Each server process
checks a file once; pages wait for a check at most ``WAIT_SECONDS`` after it began, so a
long one (a 100M-task trace takes a minute) holds back its first pages only, not every
page until it ends (each waited two seconds).

A trace still being written is not checked: it changes with every commit of its
writer, and reading all of it again and again would take the machine from the
simulation. A command's unfinished file (``.NAME.partial-PID``) is never even opened for
it (after finalize, while the command appends its last tables, it has a rollback
journal and a reader would hold the command back); a file written in place is
checked once it is finalized.
"""
import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from . import live, queries
from .catalog import LRU, identity

WAIT_SECONDS = 2.0
"""How long a page waits for a check under way before it draws the trace anyway."""
CHECK_SECONDS = 3600.0
"""Time limit of one check (its own running time; it reads the whole file)."""
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Verdict:
    """``state`` is "ok", "damaged" or "checking"; ``message`` says what was found."""
    state: str
    message: str = ""

    @property
    def damaged(self):
        return self.state == "damaged"


UNFINISHED = Verdict("ok", "not checked for damage while it is being written")


def _check(path):
    name = Path(path).name
    try:
        with queries.open_trace(path, seconds=CHECK_SECONDS) as db:
            if not _finalized(db):
                return UNFINISHED
            problems = queries.quick_check(db)
    except queries.QueryTimeout as err:
        return Verdict("ok", f"{name}: not checked for damage ({err})")
    except queries.TraceError as err:
        if "damaged:" not in str(err):
            # Not a trace SQLite can open at all: the page that opens it says why.
            return Verdict("ok", f"not checked for damage ({err})")
        text = str(err).removeprefix(f"{name}: ").removeprefix("damaged: ")
        return Verdict("damaged", f"damaged: {name}: {text}")
    if not problems:
        return Verdict("ok")
    more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
    return Verdict("damaged", f"damaged: {name}: SQLite's quick_check found {problems[0]}"
                              f"{more}. Its numbers cannot be trusted: copy the file again"
                              " from its source, or simulate it again.")


def _finalized(db):
    """Whether the trace is finalized; True for a file that does not say (not a trace, or
    damaged where it would say it): the check tells what is wrong with it."""
    try:
        return queries.finalized(db)
    except (queries.TraceError, IndexError):
        return True


class Checker:
    """Verdicts per file identity, each found once by a background check."""

    def __init__(self, size=4096):
        self._verdicts = LRU(size)
        self._running = {}
        self._lock = threading.Lock()

    def verdict(self, path, wait=WAIT_SECONDS):
        """The verdict on the current version of ``path``, waiting for a check under way
        (started here if none is) until ``wait`` seconds after it began."""
        if live.partial_of(Path(path).name):
            return UNFINISHED
        key = identity(path)
        found = self._verdicts.get(key)
        if found is not None:
            return found
        with self._lock:
            running = self._running.get(key)
            if running is None:
                running = self._running[key] = (threading.Event(), time.monotonic())
                threading.Thread(target=self._run, args=(path, key, running[0]), daemon=True,
                                 name=f"check {Path(path).name}").start()
        done, began = running
        done.wait(max(0.0, began + wait - time.monotonic()))
        return self._verdicts.get(key, Verdict("checking"))

    def _run(self, path, key, done):
        try:
            self._verdicts.put(key, _check(path))
        except Exception as exc:  # noqa: BLE001 - a check that fails says so, once
            _log.warning("could not check %s for damage: %s", path, exc)
            self._verdicts.put(key, Verdict("ok", f"not checked for damage ({exc})"))
        finally:
            with self._lock:
                self._running.pop(key, None)
            done.set()


CHECKER = Checker()


def verdict(path, wait=WAIT_SECONDS):
    """This process's verdict on ``path`` (see ``Checker.verdict``)."""
    return CHECKER.verdict(path, wait)
