"""Matrix transpose through local memory (AMD APP SDK), default 1024x1024 floats."""
import numpy as np

from ..kernels import LocalMem
from ..user_input import positive_argument
from .base import Workload, builtin_program

BLOCK = 16  # work-group of 16x16 work-items, each moving a 4x4 block of floats


class Transpose(Workload):
    """Matrix transpose via local-memory tiles (float4, 16x16 work-groups)."""

    name = "transpose"

    def __init__(self, seed=0, size=1024, **options):
        super().__init__(seed, **options)
        if size % (4 * BLOCK):
            raise ValueError(f"the matrix size must be a multiple of {4 * BLOCK}, not {size}")
        self.size = size

    @classmethod
    def add_arguments(cls, parser):
        parser.add_argument("--size", type=positive_argument, default=1024,
                            help="matrix side in floats, a multiple of 64 (default 1024)")

    def host(self, recorder):
        mem = self.fresh_memory()
        rng = np.random.default_rng(self.seed)
        n = self.size
        self.matrix = rng.random((n, n), dtype=np.float32)
        self.input = mem.buffer("input", self.matrix.reshape(-1).copy())
        self.output = mem.buffer("output", np.zeros(n * n, dtype=np.float32))
        yield self.run(recorder, builtin_program("transpose"), "transpose", (n // 4, n // 4),
                       (BLOCK, BLOCK), {"output": self.output, "input": self.input,
                                        "block": LocalMem(BLOCK * BLOCK * 4)})

    def check(self):
        got = self.output.array.reshape(self.size, self.size)
        if not np.array_equal(got, self.matrix.T):
            r, c = np.argwhere(got != self.matrix.T)[0]
            raise AssertionError(f"transpose: out[{r}][{c}] = {got[r, c]}, numpy says {self.matrix.T[r, c]}")
