"""The Overview's component filter: a regular expression that cannot hang the server.

Daisen searched names with JavaScript ``RegExp`` and no error handling. Here the
pattern runs on the server, so a catastrophic pattern such as ``(a+)+$`` must not
backtrack forever: matching uses the ``regex`` engine, whose calls take a timeout,
against one budget for the whole list of names. An invalid or too-slow pattern gives a
message, never an exception.
"""
import time

import regex

BUDGET_SECONDS = 0.25
"""Total matching time allowed for one filter over every name."""


class FilterError(ValueError):
    """The pattern is invalid or too slow; the message is meant for the user."""


def filter_names(pattern, names, budget=BUDGET_SECONDS):
    """The names containing a match of ``pattern`` (a substring search, like Daisen's)."""
    if not pattern:
        return list(names)
    try:
        compiled = regex.compile(pattern, flags=regex.VERSION0)
    except (regex.error, ValueError, OverflowError) as err:
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
