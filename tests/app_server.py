"""The real app, ``python -m dashapp``, in a subprocess on a free localhost port: for the
browser tests, and for tests of what the server process itself does."""
import contextlib
import os
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
def serve(directory, env=None, args=()):
    """(url, process) of the app serving the traces in ``directory`` (with more
    command-line ``args``), once it answers; stopped with SIGTERM, as a server usually
    is, on leaving."""
    port = _free_port()
    command = [sys.executable, "-m", "dashapp", "--trace-dir", str(directory), "--port",
               str(port), *args]
    with _running(command, directory, port, env) as served:
        yield served


@contextlib.contextmanager
def serve_gunicorn(directory, workers=2, env=None):
    """(url, master process) of the README's gunicorn command serving ``directory``."""
    port = _free_port()
    command = [sys.executable, "-m", "gunicorn", "-w", str(workers), "--timeout", "90",
               "--graceful-timeout", "45", "-b", f"127.0.0.1:{port}", "dashapp.app:server"]
    env = dict(env or {}, GPUSCOPE_TRACE_DIR=str(directory))
    with _running(command, directory, port, env) as served:
        yield served


@contextlib.contextmanager
def _running(command, directory, port, env):
    log = open(directory / "server.log", "w")
    proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
                            env=None if env is None else {**os.environ, **env})
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
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()  # never leave a server behind, whatever the test checks after
            proc.wait()
        log.close()
