"""stopping.held(): a stop signal that lands while a child process is started waits
until the block ends, then is raised as its own handler would have it, so the caller
holds the child it must stop (real signals sent to this process)."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from types import FrameType

import pytest

from pgopt import stopping
from pgopt.errors import Interrupted


def _raise_interrupted(signum: int, _frame: FrameType | None) -> None:
    raise Interrupted(signal.Signals(signum).name)


@pytest.fixture
def handlers() -> Iterator[object]:
    previous = {sig: signal.getsignal(sig) for sig in stopping.HELD}
    yield previous
    for sig, handler in previous.items():
        signal.signal(sig, handler)
    stopping.REQUESTED.clear()


def test_a_stop_inside_the_block_is_raised_when_it_ends(handlers: object) -> None:
    signal.signal(signal.SIGTERM, _raise_interrupted)
    reached = []
    with pytest.raises(Interrupted, match="SIGTERM"), stopping.held():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)  # without held(), the handler would have raised here
        reached.append("the child is held")
    assert reached == ["the child is held"]
    assert signal.getsignal(signal.SIGTERM) is _raise_interrupted  # put back


def test_ctrl_c_comes_back_as_a_keyboard_interrupt(handlers: object) -> None:
    signal.signal(signal.SIGINT, signal.default_int_handler)
    with pytest.raises(KeyboardInterrupt), stopping.held():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_no_stop_no_exception_and_the_handlers_as_they_were(handlers: object) -> None:
    signal.signal(signal.SIGTERM, _raise_interrupted)
    with stopping.held():
        assert signal.getsignal(signal.SIGTERM) is not _raise_interrupted  # held
    assert signal.getsignal(signal.SIGTERM) is _raise_interrupted
    assert not stopping.REQUESTED.is_set()


def test_outside_the_main_thread_the_block_just_runs(handlers: object) -> None:
    seen = []

    def run() -> None:
        with stopping.held():
            seen.append(signal.getsignal(signal.SIGTERM))

    signal.signal(signal.SIGTERM, _raise_interrupted)
    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert seen == [_raise_interrupted]  # no handler swapped from another thread
