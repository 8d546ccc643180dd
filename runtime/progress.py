"""Progress on a terminal: a one-line status on stderr ("compiling f ... 1.4s") for work that
takes a while, erased when the work ends. Quiet when stderr is not a terminal
(`FUSEJIT_PROGRESS=auto`, the default); `1` always shows it at once, `0` never.

A status line appears only after `delay` seconds (short work prints nothing), is redrawn by a
daemon thread with the elapsed time, and only one is shown at a time: a status started while
another is on screen (nested work, another thread) stays silent.
"""

from __future__ import annotations

import sys
import threading
import time
from types import TracebackType

from .. import config

_lock = threading.Lock()
_active: list[Status] = []  # the status on screen, if any
_ERASE = "\r\x1b[K"


def enabled() -> tuple[bool, bool]:
    """(show a status, show it at once) under FUSEJIT_PROGRESS."""
    mode = config.current().progress
    if mode == "1":
        return True, True
    if mode == "0":
        return False, False
    try:
        return sys.stderr.isatty(), False
    except (AttributeError, ValueError):  # replaced or closed stderr
        return False, False


class Status:
    """`with Status("compiling f"):` shows "[fusejit] compiling f ... 0.8s" while it runs."""

    def __init__(self, message: str, delay: float = 0.5, interval: float = 0.2) -> None:
        self.message = message
        self.delay = delay
        self.interval = interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._shown = False
        self._start = 0.0

    def __enter__(self) -> Status:
        show, now = enabled()
        if not show:
            return self
        with _lock:
            if _active:
                return self
            _active.append(self)
        self._start = time.perf_counter()
        if now:
            self._draw()
        self._thread = threading.Thread(target=self._run, name="fusejit-progress", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        if self._stop.wait(self.interval if self._shown else self.delay):
            return
        while True:
            self._draw()
            if self._stop.wait(self.interval):
                return

    def _draw(self) -> None:
        with _lock:
            if self._stop.is_set():
                return
            elapsed = time.perf_counter() - self._start
            try:
                sys.stderr.write(f"{_ERASE}[fusejit] {self.message} ... {elapsed:.1f}s")
                sys.stderr.flush()
            except (OSError, ValueError):
                return
            self._shown = True

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._thread is None:
            return
        with _lock:
            self._stop.set()
            if self._shown:
                try:
                    sys.stderr.write(_ERASE)
                    sys.stderr.flush()
                except (OSError, ValueError):
                    pass
            _active.remove(self)
        self._thread.join()
