"""A long launch's progress bar, on a real terminal: work-groups retired and the time left."""
import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def on_a_terminal(args, columns=100):
    """What ``python -m simulator ARGS`` draws on a terminal of ``columns`` columns."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "simulator", *args], stdin=slave, stdout=slave,
                            stderr=slave, env=env, cwd=ROOT)
    os.close(slave)
    out = b""
    while True:
        try:
            data = os.read(master, 1 << 16)
        except OSError:   # the terminal closed with the process
            break
        if not data:
            break
        out += data
    os.close(master)
    assert proc.wait(timeout=300) == 0, out.decode(errors="replace")[-2000:]
    return out.decode(errors="replace").replace("\r", "\n")


def test_the_bar_counts_work_groups_retired_and_estimates_the_time_left():
    items = 1 << 19
    text = on_a_terminal(["run-kernel", "benchmarks/kernels/relu.cl", "--global", str(items),
                          "--local", "256", "--arg", f"in=random:{items}", "--arg",
                          f"out=zeros:{items}", "--arg", f"n={items}", "--no-instrument",
                          "--set", "gpu.shader_arrays=1", "--set", "gpu.cus_per_shader_array=2"])
    bars = re.findall(r"relu:\s+(\d+)%\|.*?\| (\d+)/2048 \[(\d\d:\d\d)<(\d\d:\d\d)", text)
    done = [int(n) for _, n, _, _ in bars]
    assert len(set(done)) >= 3, text[-1500:]           # redrawn as work-groups retire
    assert done == sorted(done) and done[-1] == 2048
    assert all(re.fullmatch(r"\d\d:\d\d", left) for *_, left in bars)   # time left shown
