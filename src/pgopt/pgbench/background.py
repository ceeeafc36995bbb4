"""A pgbench run on a thread of its own, alongside the timed run (producers beside
consumers); cancelled when the timed run fails or is interrupted."""

from __future__ import annotations

import threading
from collections.abc import Callable

from .record import PgbenchResult


class BackgroundRun:
    """Runs `work` on a thread from entry to exit; its error, if any, is raised at exit."""

    def __init__(self, work: Callable[[threading.Event], PgbenchResult] | None) -> None:
        self.work = work
        self.cancel = threading.Event()
        self.result: PgbenchResult | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="pgopt-background", daemon=True)

    def _run(self) -> None:
        assert self.work is not None
        try:
            self.result = self.work(self.cancel)
        except BaseException as e:  # handed to the main thread at exit
            self._error = e

    def __enter__(self) -> BackgroundRun:
        if self.work is not None:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.work is None:
            return
        if exc[0] is not None:
            self.cancel.set()
        self._thread.join()
        if self._error is not None and exc[0] is None:
            raise self._error
