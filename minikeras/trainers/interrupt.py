"""Ctrl-C during `fit`: a clean stop after the current step, not a traceback mid-update."""

import signal
import threading

__all__ = []


class _InterruptGuard:
    """Turns Ctrl-C during `fit` into a clean stop after the current step.

    A second Ctrl-C interrupts at once, as usual.
    """

    def __init__(self):
        self.requested = False
        self.previous = None
        self.installed = False

    def _handle(self, signum, frame):
        self.requested = True
        self._restore()

    def _restore(self):
        if self.installed:
            self.installed = False
            # None: the handler was not set from Python; the default is the nearest.
            previous = signal.SIG_DFL if self.previous is None else self.previous
            signal.signal(signal.SIGINT, previous)

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGINT, self._handle)
            self.installed = True
        return self

    def __exit__(self, *exc_info):
        self._restore()
