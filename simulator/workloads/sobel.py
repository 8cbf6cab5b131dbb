"""Sobel edge filter with a local-memory apron (Klein's image-processing case study)."""
import numpy as np

from ..kernels import LocalMem
from ..user_input import positive_argument
from .base import Workload, builtin_program


def sobel_reference(image):
    """Gradient magnitude with edge-clamped neighbours; the image border is 0."""
    p = np.pad(image, 1, mode="edge").astype(np.float32)
    two = np.float32(2.0)
    gx = (p[:-2, 2:] + two * p[1:-1, 2:] + p[2:, 2:]) - p[:-2, :-2] - two * p[1:-1, :-2] - p[2:, :-2]
    gy = (p[2:, :-2] + two * p[2:, 1:-1] + p[2:, 2:]) - p[:-2, :-2] - two * p[:-2, 1:-1] - p[:-2, 2:]
    out = np.sqrt(gx * gx + gy * gy).astype(np.float32)
    out[0, :] = out[-1, :] = 0
    out[:, 0] = out[:, -1] = 0
    return out


class Sobel(Workload):
    """Sobel filter: stencil with an apron in local memory and border branches."""

    name = "sobel"

    def __init__(self, seed=0, width=256, height=256, local_x=16, local_y=16, **options):
        super().__init__(seed, **options)
        if width % local_x or height % local_y:
            raise ValueError(f"the image ({width}x{height}) must be a whole number of"
                             f" {local_x}x{local_y} work-groups")
        self.width, self.height, self.local = width, height, (local_x, local_y)

    @classmethod
    def add_arguments(cls, parser):
        parser.add_argument("--width", type=positive_argument, default=256, help="image width (default 256)")
        parser.add_argument("--height", type=positive_argument, default=256,
                            help="image height (default 256)")
        parser.add_argument("--local-x", type=positive_argument, default=16,
                            help="work-group width (default 16)")
        parser.add_argument("--local-y", type=positive_argument, default=16,
                            help="work-group height (default 16)")

    def host(self, recorder):
        mem = self.fresh_memory()
        rng = np.random.default_rng(self.seed)
        # A smooth image with edges: a few discs on a gradient, plus noise.
        yy, xx = np.mgrid[0:self.height, 0:self.width]
        image = (xx / self.width).astype(np.float32)
        for _ in range(6):
            cx, cy, r = rng.uniform(0, self.width), rng.uniform(0, self.height), rng.uniform(8, 40)
            image[(xx - cx) ** 2 + (yy - cy) ** 2 < r * r] += 1.0
        image += rng.normal(0, 0.02, image.shape).astype(np.float32)
        self.image = image.astype(np.float32)
        self.input = mem.buffer("in", self.image.reshape(-1).copy())
        self.output = mem.buffer("out", np.zeros(self.width * self.height, dtype=np.float32))
        lx, ly = self.local
        yield self.run(recorder, builtin_program("sobel"), "sobel", (self.width, self.height), self.local,
                       {"in": self.input, "out": self.output, "width": self.width,
                        "height": self.height, "tile": LocalMem((lx + 2) * (ly + 2))})

    def check(self):
        got = self.output.array.reshape(self.height, self.width)
        expected = sobel_reference(self.image)
        if not np.allclose(got, expected, rtol=1e-5, atol=1e-5):
            r, c = np.argwhere(~np.isclose(got, expected, rtol=1e-5, atol=1e-5))[0]
            raise AssertionError(f"sobel: out[{r}][{c}] = {got[r, c]}, numpy says {expected[r, c]}")
