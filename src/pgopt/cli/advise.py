"""`pgopt advise`: a read-only look at a live server; findings from rules kept as data."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
from rich.markup import escape
from rich.table import Table

from ..advise.advice import Advice, advice_document, advice_markdown, advise
from ..advise.evidence import read_server
from ..advise.rules import all_rules
from ..errors import UsageError
from ..redact import redact_dsn, redactor
from ..store import new_run_dir, write_atomic
from .advise_proof import prove_findings
from .app import cli, err, out, say_written
from .running import password_of

COLOURS = {"critical": "bold red", "warning": "yellow", "info": "cyan"}


@cli.command("advise")
@click.option("--dsn", required=True, help="The server to look at (read-only).")
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
@click.option("--out", "out_dir", type=click.Path(path_type=Path), help="Folder for this run.")
def advise_cmd(
    dsn: str,
    sample: float,
    rule_ids: tuple[str, ...],
    prove_ids: tuple[str, ...],
    prove_duration: int,
    out_dir: Path | None,
) -> None:
    """Look at a live server, read-only, and say what the seed articles' problems and
    the standard ones look like there, each with its evidence and the source of its
    threshold. Nothing is written to the server."""
    redactor.add(password_of(dsn))
    rules = all_rules()
    known = {r.id for r in rules}
    for flag, ids in (("--rule", rule_ids), ("--prove", prove_ids)):
        unknown = [r for r in ids if r not in known]
        if unknown:
            names = ", ".join(sorted(known))
            raise UsageError(f"{flag} {unknown[0]}: no such rule (known: {names})")
    if rule_ids:
        rules = tuple(r for r in rules if r.id in rule_ids)
    started = datetime.now(UTC)
    clock = time.monotonic()
    readings = read_server(dsn, rules, sample, lambda m: err.print(f"[advise] {m}", markup=False))
    result = advise(rules, readings)
    meta = {
        "started_at": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "duration_s": round(time.monotonic() - clock, 2),
        "server": redact_dsn(dsn),
    }
    doc = advice_document(result, meta)
    folder = new_run_dir("advise", out_dir)
    if prove_ids:
        prove_findings(result, doc, dsn, set(prove_ids), folder, prove_duration)
    write_atomic(folder / "advice.json", json.dumps(doc, indent=2, default=str) + "\n")
    write_atomic(folder / "report.md", advice_markdown(doc))
    _print(result, doc)
    out.print(f"advice: {folder / 'advice.json'}", highlight=False)
    say_written([folder / "report.md"])


def _print(result: Advice, doc: dict[str, Any]) -> None:
    e = doc["evidence"]
    out.print(
        f"[bold]advise[/]: {escape(doc['server'])} · PostgreSQL {e['server_version_num'] // 10000}"
        f" · sample {e['sample_s']:g} s · {len(result.checked)} rules checked",
        highlight=False,
    )
    for w in result.warnings():
        out.print(f"[dim]note: {escape(w)}[/]", highlight=False)
    if not result.findings:
        out.print("no findings", highlight=False)
    else:
        table = Table(show_lines=False)
        table.add_column("severity")
        table.add_column("rule")
        table.add_column("finding", overflow="fold")
        for f in result.findings:
            colour = COLOURS[f.severity.value]
            table.add_row(f"[{colour}]{f.severity.value}[/]", f.rule.id, escape(f.message))
        out.print(table)
        for f in result.findings:
            sources = "; ".join(t.source for t in f.rule.thresholds) or (f.rule.source or "")
            out.print(f"[dim]{f.rule.id}: thresholds from {escape(sources)}[/]", highlight=False)
    for entry in doc["findings"]:
        if "proof_run" in entry or entry["proof"].startswith("not testable"):
            out.print(f"proof of {entry['rule']}: {escape(entry['proof'])}", highlight=False)
    if result.not_checked:
        out.print("not checked:", highlight=False)
        for n in result.not_checked:
            out.print(f"  {n.rule.id}: {escape(n.reason)}", highlight=False)
