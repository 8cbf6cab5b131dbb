"""PageRank on a seeded power-law graph: one CSR SpMV launch per iteration.

One wavefront (one 64-item work-group) per row, as in Hetero-Mark, so a launch is
thousands of tiny work-groups whose lanes mostly idle: the Daisen case study, where
the Command Processor's dispatch rate limits the GPU. The rank vectors ping-pong
between two buffers that keep their addresses across launches.
"""
import numpy as np

from ..kernels import LocalMem
from ..user_input import positive_argument
from .base import Workload, builtin_program
from .graphs import power_law_graph

DAMPING = 0.85


class PageRank(Workload):
    """PageRank: CSR SpMV, one wavefront per row, iterated launches."""

    name = "pagerank"

    def __init__(self, seed=0, nodes=2048, edges=16384, iterations=3, **options):
        super().__init__(seed, **options)
        self.nodes, self.edges, self.iterations = nodes, edges, iterations

    @classmethod
    def add_arguments(cls, parser):
        parser.add_argument("--nodes", type=positive_argument, default=2048,
                            help="graph vertices (default 2048; the paper used 66000)")
        parser.add_argument("--edges", type=positive_argument, default=16384,
                            help="graph edges (default 16384; the paper used 420000)")
        parser.add_argument("--iterations", type=positive_argument, default=3,
                            help="PageRank iterations, one kernel launch each (default 3)")

    def host(self, recorder):
        mem = self.fresh_memory()
        self.graph = g = power_law_graph(self.nodes, self.edges, seed=self.seed)
        row_offsets = mem.buffer("row_offsets", g.row_offsets)
        cols = mem.buffer("cols", g.cols)
        vals = mem.buffer("vals", g.vals)
        x = mem.buffer("rank_a", np.full(g.nodes, 1.0 / g.nodes, dtype=np.float32))
        y = mem.buffer("rank_b", np.zeros(g.nodes, dtype=np.float32))
        for _ in range(self.iterations):
            yield self.run(recorder, builtin_program("pagerank"), "pagerank", (g.nodes * 64,), (64,),
                           {"num_rows": g.nodes, "row_offsets": row_offsets, "cols": cols,
                            "vals": vals, "x": x, "y": y, "partial": LocalMem(64),
                            "damping": DAMPING})
            x, y = y, x
        self.ranks = x.array

    def check(self):
        g = self.graph
        expected = np.full(g.nodes, 1.0 / g.nodes)
        for _ in range(self.iterations):
            expected = (1.0 - DAMPING) / g.nodes + DAMPING * g.multiply(expected)
        if not np.allclose(self.ranks, expected, rtol=1e-4, atol=1e-7):
            i = int(np.argmax(np.abs(self.ranks - expected)))
            raise AssertionError(f"pagerank: rank[{i}] = {self.ranks[i]}, numpy says {expected[i]}")
