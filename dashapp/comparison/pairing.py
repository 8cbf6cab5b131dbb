"""Which component of run B stands for a component of run A when two profiles name their
GPU streams differently.

Two profiles of one program rarely agree on stream numbers: the same training step
runs on ``GPU[0].stream[7]`` in one run and on ``GPU[2].stream[0]`` in another (another
device, another CUDA version). Compared by name they never meet. A stream is paired by
its role instead: streams named alike in both runs pair with each other; the rest of
each run's GPU streams pair in the order their first operation started (the stream that
started work first in A with the one that did in B). Any other component pairs with the
component of the same name, as before.
"""
import re

GPU_STREAM = re.compile(r"^GPU\[\d+\]\.stream\[[^\]]+\]$")


def _streams(meta):
    """The run's GPU streams with tasks, in the order their first task started."""
    found = [loc for loc in meta.locations if loc.task_count and GPU_STREAM.match(loc.name)]
    return [loc.name for loc in sorted(found, key=lambda loc: (loc.first_start_ps, loc.name))]


def partners(meta_a, meta_b) -> dict:
    """{A's stream name: B's stream name} for the streams whose names differ."""
    a, b = _streams(meta_a), _streams(meta_b)
    shared = set(a) & set(b)
    rest_a = [n for n in a if n not in shared]
    rest_b = [n for n in b if n not in shared]
    return dict(zip(rest_a, rest_b))


def label(name: str, pairs: dict) -> str:
    """A component's name, with its partner in B when that is named otherwise."""
    return f"{name} ↔ {pairs[name]}" if name in pairs else name
