"""`pgopt advise`: a read-only look at a live server; findings from rules kept as data."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from ..advise.advice import advice_document, advise
from ..advise.evidence import read_server
from ..advise.proof_run import prove_findings
from ..advise.report import advice_report
from ..advise.rules import all_rules
from ..consoles import err, out, say_written
from ..errors import UsageError
from ..indexes.advisor import add_index_advice, read_queries
from ..indexes.outcome import RULE
from ..indexes.proof import prove_indexes
from ..redact import redact_dsn
from ..replay.from_source import synthesize_from
from ..report import markdown
from ..report.terminal import print_document_summary
from ..running.launch import command_line
from ..store import new_run_dir, write_atomic
from .connection import DSN
from .copy_pace import copy_pace_options, pace_of


@click.command("advise")
@click.option("--dsn", required=True, **DSN, help="The server to look at (read-only).")
@click.option(
    "--sample",
    type=click.FloatRange(min=1, max=3600),
    default=30,
    show_default=True,
    metavar="S",
    help="Seconds of the live workload to sample (waits, rates).",
)
@click.option("--rule", "rule_ids", multiple=True, help="Check only this rule (repeatable).")
@click.option(
    "--prove",
    "prove_ids",
    multiple=True,
    metavar="RULE",
    help="Measure the fix of this rule's findings on a throwaway copy (repeatable).",
)
@click.option(
    "--prove-duration",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    metavar="S",
    help="Seconds per timed run of a proof.",
)
@click.option(
    "--prove-reps",
    type=click.IntRange(min=3),
    metavar="N",
    help="Rounds per proof (default: look after 4, 6, 8, 10 and stop when decided).",
)
@copy_pace_options("--prove's")
@click.option(
    "--queries",
    "queries_file",
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="FILE",
    help="missing-index: plan these statements (one a line, or ;-separated), "
    "not pg_stat_statements'.",
)
@click.option(
    "--cover",
    type=click.FloatRange(min=1, max=100),
    default=90,
    show_default=True,
    metavar="PCT",
    help="missing-index: weigh the statements making up PCT%% of the execution time "
    "(and every write), as `pgopt ab --cover`; its proof replays the same.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["table", "sql"]),
    default="table",
    show_default=True,
    help="sql: print only the indexes to create, as a script (the reports are written).",
)
@click.option("--out", "out_dir", type=click.Path(path_type=Path), help="Folder for this run.")
def advise_cmd(
    dsn: str,
    sample: float,
    rule_ids: tuple[str, ...],
    prove_ids: tuple[str, ...],
    prove_duration: int,
    prove_reps: int | None,
    queries_file: Path | None,
    cover: float,
    output_format: str,
    out_dir: Path | None,
    **pace_options: Any,
) -> None:
    """Look at a live server, read-only, and say what the seed articles' problems and
    the standard ones look like there, each with its evidence and the source of its
    threshold. Nothing is written to the server."""
    rules = all_rules()
    known = {r.id for r in rules} | {RULE}
    for flag, ids in (("--rule", rule_ids), ("--prove", prove_ids)):
        unknown = [r for r in ids if r not in known]
        if unknown:
            names = ", ".join(sorted(known))
            raise UsageError(f"{flag} {unknown[0]}: no such rule (known: {names})")
    if rule_ids:
        rules = tuple(r for r in rules if r.id in rule_ids)
        if output_format == "sql" and RULE not in rule_ids:
            raise UsageError(f"--format sql prints the indexes {RULE} finds: add --rule {RULE}")
    queries = read_queries(queries_file)
    pace = pace_of(pace_options)
    started = datetime.now(UTC)
    clock = time.monotonic()
    # the workload a missing-index proof replays, read before advise's own statements
    # (and the copy's pg_dump) join it in pg_stat_statements
    synthesis = synthesize_from(dsn, cover / 100) if RULE in prove_ids and queries is None else None
    readings = read_server(
        dsn, rules, sample, lambda m: err.print(f"[advise] {m}", markup=False, soft_wrap=True)
    )
    result = advise(rules, readings)
    meta = {
        "started_at": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "duration_s": round(time.monotonic() - clock, 2),
        "server": redact_dsn(dsn),
        "command": command_line(),
    }
    doc = advice_document(result, meta)
    folder = new_run_dir("advise", out_dir)
    if prove_ids:
        rules_to_prove = set(prove_ids) - {RULE}
        prove_findings(result, doc, dsn, rules_to_prove, folder, prove_duration, prove_reps, pace)
    if not rule_ids or RULE in rule_ids:
        indexes = add_index_advice(doc, dsn, queries, cover / 100, folder)
        if indexes is not None and RULE in prove_ids:
            prove_indexes(
                indexes, doc, dsn, queries, synthesis, folder, prove_duration, prove_reps, pace
            )
    doc["duration_s"] = round(time.monotonic() - clock, 2)
    write_atomic(folder / "advice.json", json.dumps(doc, indent=2, default=str) + "\n")
    report = advice_report(doc)
    write_atomic(folder / "report.md", markdown.render_document(report))
    from ..report import html  # matplotlib's import costs a second: only when writing

    write_atomic(folder / "report.html", html.render_document(report, []))
    if output_format == "sql":
        out.print((folder / "indexes.sql").read_text(), end="", markup=False, highlight=False)
        err.print(f"advice: {folder / 'advice.json'}", highlight=False)
        return
    print_document_summary(out, report)
    out.print(f"advice: {folder / 'advice.json'}", highlight=False)
    say_written([folder / "report.md", folder / "report.html", folder / "indexes.sql"])
