"""The Overview's component filter: a regular expression that cannot hang the server.

Daisen searched names with JavaScript ``RegExp`` and no error handling. Here the
pattern runs on the server, so a catastrophic pattern such as ``(a+)+$`` must not
backtrack forever: matching uses the ``regex`` engine, whose calls take a timeout,
against one budget for the whole list of names. An invalid or too-slow pattern gives a
message, never an exception.
"""
import re
import time

import regex

BUDGET_SECONDS = 0.25
"""Total matching time allowed for one filter over every name."""


class FilterError(ValueError):
    """The pattern is invalid or too slow; the message is meant for the user."""


MAX_REPEAT = 1000
"""Largest counted repeat ``{n}`` accepted: compiling ``(?:a{4294967294}){4294967294}``
would otherwise take gigabytes before any timeout applies."""
COUNTED_REPEAT = re.compile(r"\{\s*(\d+)\s*(?:,\s*(\d*)\s*)?\}")


def filter_names(pattern, names, budget=BUDGET_SECONDS):
    """The names containing a match of ``pattern`` (a substring search, like Daisen's)."""
    if not pattern:
        return list(names)
    for low, high in COUNTED_REPEAT.findall(pattern):
        if int(low) > MAX_REPEAT or (high and int(high) > MAX_REPEAT):
            raise FilterError(f"The regular expression {pattern!r} repeats more than"
                              f" {MAX_REPEAT} times; component names are far shorter.")
    try:
        compiled = regex.compile(pattern, flags=regex.VERSION0)
    except (regex.error, ValueError, OverflowError, MemoryError) as err:
        raise FilterError(f"Invalid regular expression {pattern!r}: {err}.") from None
    out = []
    deadline = time.monotonic() + budget
    try:
        for name in names:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            if compiled.search(name, timeout=left) is not None:
                out.append(name)
    except TimeoutError:
        raise FilterError(
            f"The regular expression {pattern!r} took too long to match; simplify it.") from None
    return out
