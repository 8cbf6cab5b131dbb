"""Vector add: c = a + b, one work-item per element (the smoke test)."""
import numpy as np

from ..user_input import positive_argument
from .base import Workload, builtin_program


class VectorAdd(Workload):
    """Vector addition c = a + b (smoke test)."""

    name = "vectoradd"

    def __init__(self, seed=0, size=65536, local=256, **options):
        super().__init__(seed, **options)
        self.size, self.local = size, local

    @classmethod
    def add_arguments(cls, parser):
        parser.add_argument("--size", type=positive_argument, default=65536, help="elements (default 65536)")
        parser.add_argument("--local", type=positive_argument, default=256,
                            help="work-group size (default 256)")

    def host(self, recorder):
        mem = self.fresh_memory()
        rng = np.random.default_rng(self.seed)
        self.a = mem.buffer("a", rng.random(self.size, dtype=np.float32))
        self.b = mem.buffer("b", rng.random(self.size, dtype=np.float32))
        self.c = mem.buffer("c", np.zeros(self.size, dtype=np.float32))
        global_size = -(-self.size // self.local) * self.local
        yield self.run(recorder, builtin_program("vectoradd"), "vectoradd", (global_size,), (self.local,),
                       {"a": self.a, "b": self.b, "c": self.c, "n": self.size})

    def check(self):
        expected = self.a.array + self.b.array
        if not np.array_equal(self.c.array, expected):
            bad = int(np.flatnonzero(self.c.array != expected)[0])
            raise AssertionError(f"vectoradd: c[{bad}] = {self.c.array[bad]}, numpy says {expected[bad]}")
