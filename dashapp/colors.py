"""The Category-Action palette: cubehelix colours that are stable across a trace.

Daisen colours a task by its ``category-action`` key with a cubehelix ramp (Green 2011:
a helix through the RGB cube whose perceived lightness rises monotonically, so the
colours stay ordered in greyscale and for colour-blind readers). Daisen recomputed the
ramp per view from the keys on screen, so a kind changed colour between views; here
the ramp is laid over *every* kind of the trace, sorted, so a kind keeps its colour on
every page of that trace.
"""
import math

# Parameters of the ramp: start hue, rotations, saturation, gamma and lightness range
# (Daisen's chroma.cubehelix().gamma(0.7).lightness([0.1, 0.7]) defaults).
START, ROTATIONS, HUE, GAMMA = 300.0, -1.5, 1.0, 0.7
LIGHTNESS = (0.1, 0.7)
MUTED = "#c8c8c8"
"""Colour of greyed-out tasks."""


def cubehelix(fraction):
    """The ramp colour at ``fraction`` in [0, 1], as ``#rrggbb``."""
    lo, hi = LIGHTNESS
    lightness = (lo + (hi - lo) * fraction) ** GAMMA
    angle = 2 * math.pi * (START / 360 + 1 / 3 + ROTATIONS * fraction)
    amp = HUE * lightness * (1 - lightness) / 2
    cos, sin = math.cos(angle), math.sin(angle)
    rgb = (lightness + amp * (-0.14861 * cos + 1.78277 * sin),
           lightness + amp * (-0.29227 * cos - 0.90649 * sin),
           lightness + amp * (1.97294 * cos))
    return "#" + "".join(f"{round(255 * min(1.0, max(0.0, c))):02x}" for c in rgb)


def kind_colours(labels):
    """{kind id: colour} for ``labels`` = {kind id: "category-action"}.

    Keys are sorted by label and given n evenly spaced steps of the ramp (the darkest
    end left out, as Daisen does), so the same set of kinds always gets the same colours.
    Sorted neighbours (``wavefront-…`` and ``work-group-…``) often nest inside each
    other, so ranks are dealt out with a stride near n / golden ratio² rather than in
    order: neighbours land far apart on the ramp and stay distinguishable.
    """
    ordered = sorted(labels, key=lambda k: (labels[k], k))
    n = len(ordered)
    step = _coprime_stride(n)
    return {k: cubehelix(((i * step) % n + 1) / n) for i, k in enumerate(ordered)}


def _coprime_stride(n):
    """The stride nearest 0.382 n that visits every one of n slots once."""
    if n <= 2:
        return 1
    target = max(1, round(n * 0.382))
    for delta in range(n):
        for step in (target + delta, target - delta):
            if 0 < step < n and math.gcd(step, n) == 1:
                return step
    return 1
