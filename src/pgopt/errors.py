"""The one error tree of pgopt.

Every failure a user can cause or meet is a `PgoptError`; the CLI is the only
place that catches it, prints one line and maps it to an exit code.
"""


class PgoptError(Exception):
    """Base of every error pgopt reports to the user (exit code 2)."""

    exit_code = 2


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


class BenchError(PgoptError):
    """pgbench failed or its run was aborted; the partial result is not valid."""


class Interrupted(BaseException):
    """SIGTERM or SIGHUP turned into an exception, so that cleanup runs."""
