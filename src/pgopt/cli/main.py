"""`main(argv)`: run the command line and map every outcome to an exit code.

Exit codes: 0 ok, 1 a check failed or a run was invalid, 2 usage or input error,
130 interrupted. Every error is one line on stderr, `pgopt: error: ...`, never a
traceback (`--debug` shows one for an internal error).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Sequence
from types import FrameType

import click

from .. import stopping
from ..consoles import err
from ..errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, Interrupted, PgoptError
from .app import cli, print_error

INTERRUPTING = (signal.SIGTERM, signal.SIGHUP)


def _raise_interrupted(signum: int, _frame: FrameType | None) -> None:
    stopping.REQUESTED.set()
    raise Interrupted(signal.Signals(signum).name)


def _keyboard_interrupt(signum: int, frame: FrameType | None) -> None:
    stopping.REQUESTED.set()
    signal.default_int_handler(signum, frame)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with `argv`; return the exit code (tests call this directly).
    SIGTERM and SIGHUP unwind it as Ctrl-C does, so that what pgopt started is
    stopped and removed; the handlers found are put back on return, so a caller
    in the same process (a test runner) keeps its own."""
    stopping.REQUESTED.clear()
    previous = {sig: signal.signal(sig, _raise_interrupted) for sig in INTERRUPTING}
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        previous[signal.SIGINT] = signal.signal(signal.SIGINT, _keyboard_interrupt)
    try:
        return _run(argv)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _run(argv: Sequence[str] | None) -> int:
    try:
        cli.main(
            args=list(argv) if argv is not None else None, prog_name="pgopt", standalone_mode=False
        )
    except click.exceptions.Exit as e:
        return int(e.exit_code)
    except (KeyboardInterrupt, Interrupted, click.Abort):
        err.print("pgopt: interrupted; what pgopt started was stopped and removed", highlight=False)
        return EXIT_INTERRUPTED
    except click.ClickException as e:
        print_error(e.format_message())
        return EXIT_USAGE
    except PgoptError as e:
        if not e.reported:
            print_error(str(e))
        return e.exit_code
    except OSError as e:
        print_error(f"{e.strerror or e}: {e.filename}" if e.filename else str(e))
        return EXIT_USAGE
    except Exception as e:
        if _debug(argv):
            raise
        print_error(
            f"internal error: {type(e).__name__}: {e} (a bug in pgopt: please report it; "
            "--debug shows the traceback)"
        )
        return EXIT_USAGE
    return EXIT_OK


def _debug(argv: Sequence[str] | None) -> bool:
    args = sys.argv[1:] if argv is None else list(argv)
    return "--debug" in args or bool(os.environ.get("PGOPT_DEBUG"))


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())
