"""Ctrl-C at a safe point: long runs that write a trace stop between units of work.

A ``KeyboardInterrupt`` raised wherever the program happens to be can land inside a
tracer flush, after a batch reached the file but before the tracer forgot it; closing
the trace then writes the batch twice. ``DeferredInterrupt`` turns the first Ctrl-C
into a flag the run checks between events (or work-groups), where the tracer and the
file agree; a second Ctrl-C interrupts at once.
"""
import signal
import threading


class DeferredInterrupt:
    """Install with ``install()``; call ``check()`` at safe points; ``uninstall()`` after."""

    def __init__(self):
        self.requested = False
        self.previous = None

    def install(self):
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGINT, self._handle)

    def uninstall(self):
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)
            self.previous = None

    def _handle(self, signum, frame):
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

    def check(self):
        """Raise ``KeyboardInterrupt`` if Ctrl-C was pressed since ``install``."""
        if self.requested:
            raise KeyboardInterrupt
