"""A synthesized workload as files a user can read, edit and reuse: the pgbench
scripts, keys.sql (the sequences its inserts of unique keys draw from, made once
in the copy) and a README.md that says what was taken, how each parameter is
drawn and what that assumes, and what was left out and why (in the run folder,
`workload/`)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..markup import md_code, md_text
from ..pgbench.command import ScriptRef
from ..source.catalog import SourceWorkload
from ..sqltree import qualified
from ..words import short_query
from .parameters import KEYS_SCHEMA
from .scripts import DRAWN
from .selection import MAX_SCRIPTS
from .synthesize import Synthesis


def write_workload(synthesis: Synthesis, folder: Path) -> tuple[tuple[ScriptRef, ...], Path | None]:
    """Write the scripts, keys.sql and README.md into `folder`: the scripts with their
    weights, and keys.sql when the inserts need one."""
    folder.mkdir(parents=True, exist_ok=True)
    scripts = []
    for s in synthesis.scripts:
        path = folder / f"{s.name}.sql"
        path.write_text(s.text)
        scripts.append(ScriptRef(path.resolve(), weight=s.weight))
    keys = None
    if synthesis.keys:
        keys = folder / "keys.sql"
        keys.write_text(keys_sql(synthesis))
    (folder / "README.md").write_text(workload_markdown(synthesis))
    return tuple(scripts), keys.resolve() if keys else None


def keys_sql(synthesis: Synthesis) -> str:
    """The sequences new unique keys come from, each starting above the data's largest."""
    lines = [
        "-- pgopt ab: new values of unique columns, above the data's largest: inserts of the",
        "-- replay never collide with the data or with each other",
        f"create schema if not exists {KEYS_SCHEMA};",
    ]
    for key in synthesis.keys:
        schema, _, name = key.sequence.partition(".")
        lines.append(f"create sequence {qualified(schema, name)} start with {key.start};")
    return "\n".join(lines) + "\n"


def workload_markdown(synthesis: Synthesis) -> str:
    """What the synthesis took from pg_stat_statements, how, and what it left and why."""
    flags = " ".join(f"-f {s.name}.sql@{s.weight}" for s in synthesis.scripts)
    drawn = [s for s in synthesis.scripts if s.name.startswith(DRAWN)]
    if len(drawn) > 1 and len(drawn) == len(synthesis.scripts):
        flags = f"$(printf -- '-f %s ' {DRAWN}*.sql)"  # one weight each
    work = synthesis.workload
    lines = [
        f"# Workload synthesized from {synthesis.source}",
        "",
        f"The statements that make up {synthesis.cover:.0%} of the source's execution time "
        f"({synthesis.chosen_share:.1%} looked at), heaviest first, and every statement that "
        f"writes; {synthesis.replayed_share:.1%} of the time is replayed. Replayed as "
        f"{synthesis.shape}.",
        "",
        f"How the source ran them: {work.note or 'not sampled'}.",
        "",
        *_where_from(work),
        "Run them yourself: `pgbench -n "
        + flags
        + " ...`"
        + (" after `psql -f keys.sql`" if synthesis.keys else "")
        + ", or name them in an ab.toml ([workload] scripts) after editing.",
        "",
        "| statement | time | calls | rows a call | ms a call | query |",
        "|---|--:|--:|--:|--:|---|",
    ]
    for b in synthesis.blocks:
        st = b.statement
        lines.append(
            f"| {b.name} | {b.time_share:.1%} | {st.calls:,} | {st.rows_per_call:.3g} "
            f"| {st.ms_per_call:.3g} | {md_code(short_query(st.query, 90), in_table=True)} |"
        )
    lines += ["", "## How each parameter is drawn, and what that assumes", ""]
    for b in synthesis.blocks:
        for note in b.assumptions:
            lines.append(f"- {b.name}: {md_text(note)}")
    if synthesis.capped:
        stop = f"Stopped at {MAX_SCRIPTS} statements, before {synthesis.cover:.0%} of the time."
        lines += ["", stop]
    if synthesis.dropped_writes:
        lines += [
            "",
            "## Writes not replayed",
            "",
            "A change that touches these tables (an index, a fillfactor, a WAL setting) is "
            "not measured on their writes:",
            "",
        ]
        for k in synthesis.dropped_writes:
            query = md_code(short_query(k.statement.query, 90))
            lines.append(f"- {query} ({k.time_share:.1%}): {md_text(k.reason)}")
    if synthesis.skipped:
        lines += [
            "",
            "## Not replayed",
            "",
            "| time | calls | statement | why |",
            "|--:|--:|---|---|",
        ]
        for k in synthesis.skipped:
            lines.append(
                f"| {k.time_share:.1%} | {k.statement.calls:,} "
                f"| {md_code(short_query(k.statement.query, 90), in_table=True)} "
                f"| {md_text(k.reason)} |"
            )
    return "\n".join(lines) + "\n"


def write_scripts(
    synthesis: Synthesis, folder: Path, transaction: bool
) -> tuple[tuple[ScriptRef, ...], tuple[Path, ...]]:
    """The synthesized scripts as files, each one transaction when `transaction`, and
    the keys file their inserts need, if any."""
    if transaction:
        wrapped = tuple(replace(s, text=f"begin;\n{s.text}commit;\n") for s in synthesis.scripts)
        synthesis = replace(synthesis, scripts=wrapped)
    scripts, keys = write_workload(synthesis, folder)
    return scripts, (keys,) if keys else ()


def _where_from(work: SourceWorkload) -> list[str]:
    """Each figure of how the source ran, with where it came from (unknown: said)."""
    share = (
        f"{work.database_share:.0%}, from {work.database_share_from}"
        if work.database_share is not None
        else "unknown"
    )
    per_commit = (
        f"{work.statements_per_commit:.3g}, from {work.per_commit_from}"
        if work.statements_per_commit is not None
        else "unknown (each statement replayed as its own transaction)"
    )
    clients = f"{work.clients}, from {work.clients_from}" if work.clients else "unknown"
    if not work.clients and work.clients_estimated:
        clients += (
            f"; about {work.clients_estimated} at once at some time, from the sessions' "
            "time connected since the reset (pg_stat_database: an estimate)"
        )
    values = work.values_from or "the data's statistics"
    return [
        "| of the source | value, and where it came from |",
        "|---|---|",
        f"| statements a commit | {per_commit} |",
        f"| clients at once | {clients} |",
        f"| protocol | {work.protocol or 'unknown'} |",
        f"| the database's share of its sessions' busy time | {share} |",
        f"| the values its clients send | {values} |",
        "",
    ]
