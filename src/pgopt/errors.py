"""The one error tree of pgopt, with the exit status of each branch.

Every failure a user can cause or meet is a `PgoptError`; the CLI is the only
place that catches it, prints one line and exits with its status: 2 for bad
input or an environment pgopt cannot work in, 1 for work that finished but did
not pass (a failed check, an invalid run). Database errors are wrapped where
pgopt talks to the server, so no psycopg error reaches the CLI.
"""

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class PgoptError(Exception):
    """Base of every error pgopt reports to the user (exit code 2)."""

    exit_code = EXIT_USAGE
    reported = False  # True: already said to the user, the CLI only exits


class Failed(PgoptError):
    """Work that ran but did not pass: exit code 1."""

    exit_code = EXIT_FAILED


class ChecksFailed(Failed):
    """A lab's runs finished, and a check failed (already shown in the summary)."""

    reported = True


class GateFailed(Failed):
    """A comparison failed its CI gate (`--fail-on-regression`, `--require-decision`)."""


class LabsFailed(PgoptError):
    """`lab run all`: a lab stopped with an error (already printed)."""

    reported = True


class UsageError(PgoptError):
    """Bad command-line input: unknown lab, bad option value."""


class BinariesError(PgoptError):
    """PostgreSQL programs are missing or unusable."""


class TargetError(PgoptError):
    """The server could not be started, reached or configured."""


class SettingsError(TargetError):
    """A setting name or value the server refuses, or one pgopt may not change."""


class LabError(PgoptError):
    """An invalid lab definition, or lab SQL that failed."""


class BenchError(Failed):
    """pgbench failed or its run was aborted: an invalid run (exit code 1)."""


class Interrupted(BaseException):
    """SIGTERM or SIGHUP turned into an exception, so that cleanup runs."""


def first_line(e: BaseException) -> str:
    """An error's first line: what one line of pgopt's output says of it."""
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
