"""Parallel reduction (Harris; Klein's case study) in three versions.

Each launch reduces the input to one partial sum per work-group; the host relaunches
on the partial sums until one value is left, as the NVIDIA SDK host code does.

* v1: interleaved addressing, divergent ``tid % (2*s)`` branch;
* v2: interleaved addressing with a strided index: no divergence, bank conflicts;
* v3: sequential addressing: neither.
"""
import numpy as np

from ..kernels import LocalMem
from ..user_input import positive_argument
from .base import Workload, builtin_program


class Reduction(Workload):
    """Parallel sum reduction (base of the three versions)."""

    version = 0

    def __init__(self, seed=0, size=65536, local=256, **options):
        super().__init__(seed, **options)
        if local & (local - 1):
            raise ValueError(f"the reduction needs a power-of-two work-group size, not {local}")
        self.size, self.local = size, local

    @classmethod
    def add_arguments(cls, parser):
        parser.add_argument("--size", type=positive_argument, default=65536,
                            help="elements to sum (default 65536)")
        parser.add_argument("--local", type=positive_argument, default=256,
                            help="work-group size, a power of two (default 256)")

    @property
    def program(self):
        return builtin_program(f"reduction_v{self.version}")

    def host(self, recorder):
        mem = self.fresh_memory()
        rng = np.random.default_rng(self.seed)
        self.input = rng.random(self.size, dtype=np.float32)
        current = mem.buffer("input", self.input.copy())
        n = self.size
        while True:
            groups = -(-n // self.local)
            partial = mem.buffer(f"partial{self._launch_id}", np.zeros(groups, dtype=np.float32))
            yield self.run(recorder, self.program, "reduce", (groups * self.local,), (self.local,),
                           {"g_idata": current, "g_odata": partial, "n": n,
                            "sdata": LocalMem(self.local)})
            current, n = partial, groups
            if n == 1:
                break
        self.result = float(current.array[0])

    def check(self):
        expected = float(self.input.astype(np.float64).sum())
        if not np.isclose(self.result, expected, rtol=1e-4):
            raise AssertionError(f"{self.name}: sum is {self.result}, numpy says {expected}")


class ReductionV1(Reduction):
    """Parallel reduction v1: interleaved addressing, divergent branch."""

    name = "reduction-v1"
    version = 1


class ReductionV2(Reduction):
    """Parallel reduction v2: strided index, bank conflicts."""

    name = "reduction-v2"
    version = 2


class ReductionV3(Reduction):
    """Parallel reduction v3: sequential addressing."""

    name = "reduction-v3"
    version = 3
