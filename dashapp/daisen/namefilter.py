"""The Overview's component filter: a regular expression that cannot take the server down.

Daisen searched names with JavaScript ``RegExp`` and no error handling. Here the
pattern comes from a URL and runs on the server, so it must not cost unbounded time or
memory: it runs on RE2 (google-re2), whose matching is linear in the name's length (no
backtracking, so ``(a+)+$`` is as fast as ``a``) and whose compiled program and match
caches live within ``MEMORY_BYTES`` (a bigger pattern is refused, not built). Nested
counted repeats are limited to 1000 in all by RE2's parser, so
``(?:(?:a{1000}){1000}){1000}`` is refused before anything is expanded.

Nothing compiled is kept: each filter is compiled, used and dropped (the Overview
caches the *names* a filter matched, a few per trace). An invalid or too large pattern
gives a message, never an exception. The syntax is RE2's (Perl's without
backreferences and lookaround).
"""
import re2

MEMORY_BYTES = 1 << 20
"""RE2's memory budget for one filter (program and match caches); component-name
filters need a few kilobytes."""

_OPTIONS = re2.Options()
_OPTIONS.max_mem = MEMORY_BYTES
_OPTIONS.log_errors = False  # a user's bad pattern is a message on the page, not a log line


class FilterError(ValueError):
    """The pattern is invalid or too large; the message is meant for the user."""


def _reason(err):
    text = err.args[0] if err.args else "invalid"
    text = text.decode(errors="replace") if isinstance(text, bytes) else str(text)
    if text.startswith("invalid repetition size"):
        return f"{text} (counted repeats may multiply to at most 1000)"
    if text.startswith("pattern too large"):
        return f"pattern too large (over {MEMORY_BYTES >> 10} KiB compiled)"
    return text


def filter_names(pattern: str, names) -> list:
    """The names containing a match of ``pattern`` (a substring search, like Daisen's)."""
    if not pattern:
        return list(names)
    try:
        compiled = re2.compile(pattern, _OPTIONS)
    except re2.error as err:
        raise FilterError(f"Invalid regular expression {pattern!r}: {_reason(err)}.") from None
    except UnicodeError:  # a lone surrogate (``%ED%A0%80`` in a URL) is not UTF-8
        raise FilterError(f"Invalid regular expression {pattern!r}: not valid Unicode.") from None
    finally:
        # google-re2 memoises compiled patterns (128 of them); a URL must not fill it.
        re2.purge()
    return [name for name in names if compiled.search(name) is not None]
