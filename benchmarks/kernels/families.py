"""Six kernel families for the simulator's benchmarks, sized by their wavefronts.

The kernels are our own, in ``benchmarks/kernels``, written in the style of the public
suites' kernels: a naive matrix transpose, a CSR SpMV with one work-item per row, a 2-D
convolution with a 5x5 mask, a 5-point Jacobi stencil, one radix-2 Stockham FFT stage
and ReLU. ``launch_spec(family, wavefronts, tmp)`` gives one launch of about that many
wavefronts (64 work-items each), as ``run-kernel`` takes it: the file, the global and
local sizes, and the ``--arg`` specifications (the SpMV's matrix is written to ``tmp``).
"""
import math
from pathlib import Path

import numpy as np

KERNELS = Path(__file__).resolve().parent
FAMILIES = ("transpose", "spmv", "convolution", "stencil", "fft", "relu")


def _side(wavefronts):
    """The side of a square image of about ``wavefronts`` x 64 pixels, a multiple of 16."""
    return max(16, round(math.sqrt(wavefronts * 64) / 16) * 16)


def _csr(rows, tmp, seed=0):
    """A square CSR matrix with 1 to 32 random columns per row, as .npy files in ``tmp``."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 33, size=rows)
    row_ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    col = rng.integers(0, rows, size=int(row_ptr[-1])).astype(np.int32)
    paths = {}
    for name, data in (("row_ptr", row_ptr), ("col", col)):
        paths[name] = str(Path(tmp) / f"spmv_{rows}_{name}.npy")
        np.save(paths[name], data)
    return paths, int(row_ptr[-1])


def launch_spec(family, wavefronts, tmp):
    """{"file", "global", "local", "args"} of one launch of ``family`` (see the docstring)."""
    items = wavefronts * 64
    side = _side(wavefronts)
    if family == "transpose":
        return _spec("transpose_naive.cl", [side, side], [16, 16],
                     in_=f"random:{side * side}", out=f"zeros:{side * side}", width=side,
                     height=side)
    if family == "spmv":
        paths, nnz = _csr(items, tmp)
        return _spec("spmv_csr.cl", [items], [64], row_ptr=paths["row_ptr"], col=paths["col"],
                     val=f"random:{nnz}", x=f"random:{items}", y=f"zeros:{items}", rows=items)
    if family == "convolution":
        return _spec("convolution.cl", [side, side], [16, 16], in_=f"random:{side * side}",
                     mask="random:25", out=f"zeros:{side * side}", width=side, height=side,
                     mask_width=5)
    if family == "stencil":
        return _spec("stencil5.cl", [side, side], [16, 16], u=f"random:{side * side}",
                     u_next=f"zeros:{side * side}", width=side, height=side)
    if family == "fft":
        n = 2 * items
        return _spec("fft_stockham.cl", [items], [64], src=f"random:{n}", dst=f"zeros:{n}", n=n,
                     span=64)
    if family == "relu":
        return _spec("relu.cl", [items], [256], in_=f"random:{items}", out=f"zeros:{items}",
                     n=items)
    raise ValueError(f"no kernel family {family!r}; the families are {', '.join(FAMILIES)}")


def _spec(file, global_size, local_size, **args):
    return {"file": str(KERNELS / file), "global": global_size, "local": local_size,
            "args": [[name.rstrip("_"), str(value)] for name, value in args.items()]}
