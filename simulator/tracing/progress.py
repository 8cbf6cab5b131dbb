"""Progress bars for long work: shown on a terminal, silent in pipes and CI logs."""
from tqdm import tqdm


def progress_bar(show=None, **kwargs):
    """A tqdm bar; ``show=None`` decides by whether stderr is a terminal."""
    disable = None if show is None else not show
    return tqdm(disable=disable, **kwargs)


def track(iterable, show=None, **kwargs):
    """Iterate with a progress bar; ``show=None`` decides by the terminal."""
    return progress_bar(show, iterable=iterable, **kwargs)
