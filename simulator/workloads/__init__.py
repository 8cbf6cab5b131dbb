"""Host programs of the benchmark workloads: build data, launch kernels, check results.

``WORKLOADS`` maps each name to its ``Workload`` class (see ``base.Workload`` for the
interface the timing model's ``run`` command uses).
"""
from .base import Workload
from .pagerank import PageRank
from .reduction import ReductionV1, ReductionV2, ReductionV3
from .sobel import Sobel
from .transpose import Transpose
from .vectoradd import VectorAdd

WORKLOADS = {cls.name: cls for cls in (VectorAdd, Transpose, ReductionV1, ReductionV2, ReductionV3,
                                       PageRank, Sobel)}

__all__ = ["WORKLOADS", "Workload"]
