"""The real app, ``python -m dashapp``, in a subprocess on a free localhost port: for the
browser tests, and for tests of what the server process itself does."""
import contextlib
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serve(directory):
    """(url, process) of the app serving the traces in ``directory``, once it answers;
    stopped with SIGTERM, as a server usually is, on leaving."""
    port = _free_port()
    log = open(directory / "server.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "dashapp", "--trace-dir", str(directory), "--port", str(port)],
        stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(url + "/", timeout=2)
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                proc.wait()
                log.close()
                raise RuntimeError("the app did not start:\n" +
                                   (directory / "server.log").read_text()) from None
            time.sleep(0.2)
    try:
        yield url, proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()  # never leave a server behind, whatever the test checks after
            proc.wait()
        log.close()
