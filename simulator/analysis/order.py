"""Stable orders of a launch's rows by integer keys, in linear time where numpy allows.

numpy sorts integers of 16 bits or fewer stably by radix sort, in linear time, and wider
ones by timsort, several times slower on a launch's hundreds of thousands of rows. The
keys the analyses group rows by are narrow once shifted to start at 0: kind and
location ids (a few thousand), and row positions or task ids within one launch (below
2**32). So a key spanning 16 bits is sorted in one radix pass, one spanning 32 bits in
two (least significant digit first), and only a wider one by timsort. Every order is
stable: rows with equal keys keep their order (the launch's rows are in id order, so
ties go to the task created first).
"""
from __future__ import annotations

import numpy as np

DIGIT = 16
DIGIT_MASK = (1 << DIGIT) - 1


def stable_order(keys: np.ndarray) -> np.ndarray:
    """The stable argsort of integer ``keys``."""
    keys = np.asarray(keys, dtype=np.int64)
    if not len(keys):
        return np.zeros(0, dtype=np.int64)
    low = int(keys.min())
    span = int(keys.max()) - low
    if span >> 2 * DIGIT:
        return np.argsort(keys, kind="stable")
    shifted = keys - low if low else keys
    order = np.argsort((shifted & DIGIT_MASK).astype(np.uint16), kind="stable")
    if span >> DIGIT:
        order = order[np.argsort((shifted[order] >> DIGIT).astype(np.uint16), kind="stable")]
    return order


def grouped_order(groups: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """The stable order by (group, key): ``np.lexsort((keys, groups))``. When the keys
    already ascend within every group (a serial unit's tasks end in the order they were
    created), the key sort is skipped."""
    groups = np.asarray(groups, dtype=np.int64)
    keys = np.asarray(keys, dtype=np.int64)
    order = stable_order(groups)
    g, k = groups[order], keys[order]
    if np.all((k[1:] >= k[:-1]) | (g[1:] != g[:-1])):
        return order
    order = stable_order(keys)
    return order[stable_order(groups[order])]
