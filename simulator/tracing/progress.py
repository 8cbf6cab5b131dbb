"""Progress bars for long work: shown on a terminal, silent in pipes and CI logs.

A bar redraws itself with carriage returns; written to a pipe or a CI log, that is a
stream of half lines. So a bar appears only where stderr is a terminal, even when asked
for, and ``show=False`` (the CLI's ``--no-progress``) hides it on a terminal too.
"""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tqdm import tqdm


def progress_bar(show: bool | None = None, **kwargs) -> tqdm:
    """A tqdm bar on stderr: drawn when ``show`` is not False and stderr is a terminal."""
    # imported here: the modules that may draw a bar are imported by commands that never
    # do (analyze reads traces through the writer), and tqdm costs tens of ms to import
    from tqdm import tqdm

    return tqdm(disable=True if show is False else None, file=sys.stderr,
                dynamic_ncols=True, **kwargs)


def track(iterable, show: bool | None = None, **kwargs) -> tqdm:
    """Iterate with a progress bar (see ``progress_bar``)."""
    return progress_bar(show, iterable=iterable, **kwargs)
