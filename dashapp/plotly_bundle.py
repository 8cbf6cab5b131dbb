"""Which plotly.js a page loads: the cartesian bundle wherever it draws everything.

Dash's graphs load the full plotly.js bundle (4.8 MB: every trace type, maps, 3-D, WebGL)
on first use, and a page pays for evaluating it on every load: it was the largest single
cost of the Overview's first draw. Every page but one draws only scatter, bar, heatmap
and pie traces, which plotly.js's own cartesian bundle (1.5 MB, the same release, MIT
licensed, vendored in ``assets/`` as ``plotly-cartesian.min.js`` since no Python package
ships it) holds whole. The page's HTML loads that bundle before Dash's scripts, so the
graphs find ``window.Plotly`` defined and never fetch the full one.

The kernel page draws its memory views as WebGL scatter (``scattergl``, outside the
cartesian bundle), so it keeps Dash's full bundle: its HTML gets no cartesian script,
and ``assets/gpuscope.js`` turns an in-app navigation to it from a page that has the
cartesian bundle into a full page load. The bundle is used only when its release is the
one the installed ``plotly`` package ships (the figures the app builds are that
release's), so a ``plotly`` upgrade falls back to the full bundle until the vendored
file is replaced.
"""
import re
from functools import lru_cache
from pathlib import Path

from plotly.offline import get_plotlyjs_version

FILE = "plotly-cartesian.min.js"
# The script element's id: gpuscope.js reads it to know the page has the partial bundle.
ELEMENT_ID = "gs-plotly-cartesian"
# Pages whose figures need more than the cartesian bundle (a path's last segment).
FULL_BUNDLE_PAGES = frozenset({"kernel"})
_VERSION = re.compile(rb"plotly\.js \(cartesian - minified\) v(\S+)")


@lru_cache(maxsize=4)
def vendored_version(assets: Path) -> str | None:
    """The plotly.js release of the vendored cartesian bundle (from its header), or None
    if the file is missing or is not that bundle."""
    try:
        with open(assets / FILE, "rb") as f:
            head = f.read(200)
    except OSError:
        return None
    found = _VERSION.search(head)
    return found.group(1).decode("ascii") if found else None


def script_tag(assets: Path, asset_url: str, page: str | None) -> str:
    """The ``<script>`` element that loads the cartesian bundle on ``page`` (the last
    segment of its path), or "" where the page needs the full bundle or
    the vendored file does not match the installed plotly. ``asset_url`` is the
    bundle's URL (``app.get_asset_url``)."""
    version = vendored_version(assets)
    if page in FULL_BUNDLE_PAGES or version is None or version != get_plotlyjs_version():
        return ""
    stamp = int((assets / FILE).stat().st_mtime)
    return f'<script id="{ELEMENT_ID}" src="{asset_url}?m={stamp}"></script>'
