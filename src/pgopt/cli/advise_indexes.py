"""`pgopt advise`'s `missing-index` rule in the command: its statements (a
`--queries` file, checked before anything is read, or pg_stat_statements), the
advisor's run, its findings and `indexes` section in advice.json, the chosen
indexes as indexes.sql."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..binaries import find_binaries
from ..errors import UsageError
from ..indexes.advisor import advise_indexes
from ..indexes.outcome import RULE, IndexAdvice, findings, section, sql_script
from ..indexes.workload import Statement, from_file
from ..store import write_atomic
from .app import err

SERVER_PROGRAMS = ("initdb", "postgres", "psql", "pg_dump", "pg_restore")
SEVERITY_ORDER = ("critical", "warning", "info")


def read_queries(path: Path | None) -> list[Statement] | None:
    """The statements of `--queries`, or None without one; one clear error for a
    file that is missing, unreadable or holds no statement."""
    if path is None:
        return None
    try:
        text = path.read_text()
    except OSError as e:
        raise UsageError(f"--queries {path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise UsageError(f"--queries {path}: not a text file") from None
    statements = from_file(text)
    if not statements:
        raise UsageError(f"--queries {path}: no statement in it")
    return statements


def add_index_advice(
    doc: dict[str, Any],
    params: dict[str, Any],
    dsn: str,
    queries: list[Statement] | None,
    cover: float,
    folder: Path,
) -> IndexAdvice | None:
    """Run the advisor and put what it found into `doc`; None when it could not run
    (said in `not_checked`)."""
    if queries is None and not doc["evidence"]["pg_stat_statements"]:
        reason = (
            "pg_stat_statements is not installed in this database, and no --queries file "
            "names the statements: nothing to plan"
        )
        doc["not_checked"].append({"rule": RULE, "reason": reason})
        write_atomic(folder / "indexes.sql", f"-- pgopt advise: {RULE} not checked: {reason}\n")
        return None
    binaries = find_binaries(None, need=SERVER_PROGRAMS)
    advice = advise_indexes(
        params, dsn, queries, cover, binaries, lambda m: err.print(f"[advise] {m}", markup=False)
    )
    doc["findings"] = sorted(
        [*doc["findings"], *findings(advice)], key=lambda f: SEVERITY_ORDER.index(f["severity"])
    )
    doc["indexes"] = section(advice)
    doc["rules_checked"].append(RULE)
    write_atomic(folder / "indexes.sql", sql_script(advice))
    return advice
