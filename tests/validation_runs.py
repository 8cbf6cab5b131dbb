"""A small validation made by ``simulator validate``, for the app's tests: one kernel at
two sizes (one family) with made-up measured times citing made-up sources."""
from simulator.__main__ import main as simulator

KERNEL = """\
kernel void scale(global const float *a, global float *b, float k)
{
    size_t i = get_global_id(0);
    b[i] = k * a[i];
}
"""
ROWS = """\
kernel_file,kernel,global,local,args,measured_us,family,source
k.cl,scale,1024,64,a=random:1024 b=zeros:1024 k=2,5,,https://example.org/a: a made-up time
k.cl,scale,4096,64,a=random:4096 b=zeros:4096 k=2,9,,https://example.org/b: another
"""


def write_validation(work, out, rows=ROWS):
    """Run ``validate`` on ``rows`` (the kernel and CSV written into ``work``) into the
    directory ``out``."""
    (work / "k.cl").write_text(KERNEL)
    (work / "m.csv").write_text(rows)
    assert simulator(["validate", str(work / "m.csv"), "-o", str(out), "--no-progress",
                      "--workers", "2"]) == 0
