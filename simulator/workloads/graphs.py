"""Seeded power-law graphs in CSR form, for PageRank.

Real web and social graphs have heavy-tailed degree distributions: most vertices
have a handful of links, a few have thousands. We draw edges Chung-Lu style: the
source and the destination of each edge are picked independently with probability
proportional to a Zipf weight (rank ** -exponent) over a seeded shuffle of the
vertices, self-loops and duplicate edges are dropped, and drawing continues until
the requested number of distinct edges exists.
"""
from dataclasses import dataclass

import numpy as np


@dataclass
class CSRGraph:
    """The PageRank matrix M (M[i, j] = 1/outdeg(j) for each edge j -> i) in CSR form."""

    nodes: int
    row_offsets: np.ndarray   # int32, nodes + 1: row i's non-zeros are [row_offsets[i], row_offsets[i+1])
    cols: np.ndarray          # int32: source vertex of each in-edge
    vals: np.ndarray          # float32: 1 / out-degree of that source

    @property
    def edges(self):
        return len(self.cols)

    def multiply(self, x):
        """M @ x in float64 (the reference for the kernel)."""
        rows = np.repeat(np.arange(self.nodes), np.diff(self.row_offsets))
        return np.bincount(rows, weights=self.vals.astype(np.float64) * x[self.cols], minlength=self.nodes)


def power_law_graph(nodes, edges, seed=0, exponent=0.9):
    """A graph with ``nodes`` vertices and ``edges`` distinct directed edges (see module doc)."""
    max_edges = nodes * (nodes - 1)
    if nodes < 2 or edges < 1 or edges > max_edges // 2:
        raise ValueError(f"cannot draw {edges} distinct edges on {nodes} nodes"
                         f" (need 2 <= nodes and 1 <= edges <= {max_edges // 2})")
    rng = np.random.default_rng(seed)
    weights = np.arange(1, nodes + 1, dtype=np.float64) ** -exponent
    weights /= weights.sum()
    out_rank = rng.permutation(nodes)
    in_rank = rng.permutation(nodes)
    keys = np.empty(0, dtype=np.int64)
    order = np.empty(0, dtype=np.int64)
    drawn = 0
    while len(keys) < edges:
        batch = max(edges - len(keys), 1024) * 2
        src = out_rank[rng.choice(nodes, size=batch, p=weights)]
        dst = in_rank[rng.choice(nodes, size=batch, p=weights)]
        keep = src != dst
        new = dst[keep].astype(np.int64) * nodes + src[keep]
        all_keys = np.concatenate([keys, new])
        all_order = np.concatenate([order, drawn + np.arange(len(new))])
        drawn += len(new)
        keys, first = np.unique(all_keys, return_index=True)
        order = all_order[first]
    # Keep the first `edges` distinct edges in the order they were drawn.
    chosen = np.sort(keys[np.argsort(order, kind="stable")[:edges]])
    dst, src = chosen // nodes, chosen % nodes
    out_degree = np.bincount(src, minlength=nodes)
    row_offsets = np.zeros(nodes + 1, dtype=np.int64)
    np.cumsum(np.bincount(dst, minlength=nodes), out=row_offsets[1:])
    return CSRGraph(nodes, row_offsets.astype(np.int32), src.astype(np.int32),
                    (1.0 / out_degree[src]).astype(np.float32))
