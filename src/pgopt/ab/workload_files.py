"""A synthesized workload as files a user can read, edit and reuse: one pgbench
script per statement and a README.md that says what was taken, with what weight,
and what was skipped and why (in the run folder, `workload/`)."""

from __future__ import annotations

from pathlib import Path

from .spec import Script
from .synthesize import MAX_SCRIPTS, Synthesis


def write_workload(synthesis: Synthesis, folder: Path) -> tuple[Script, ...]:
    """Write the scripts and README.md into `folder`; the scripts with their weights."""
    folder.mkdir(parents=True, exist_ok=True)
    scripts = []
    for s in synthesis.scripts:
        path = folder / f"{s.name}.sql"
        path.write_text(s.text)
        scripts.append(Script(path.resolve(), s.weight))
    (folder / "README.md").write_text(workload_markdown(synthesis))
    return tuple(scripts)


def workload_markdown(synthesis: Synthesis) -> str:
    """What the synthesis took from pg_stat_statements, and what it left and why."""
    flags = " ".join(f"-f {s.name}.sql@{s.weight}" for s in synthesis.scripts)
    lines = [
        "# Workload synthesized from pg_stat_statements",
        "",
        f"The statements that make up {synthesis.cover:.0%} of the source's execution time "
        f"({synthesis.chosen_share:.1%} looked at), heaviest first; "
        f"{synthesis.replayed_share:.1%} of the time is replayed. Each statement is one "
        "pgbench script, weighted by its calls; each parameter is drawn per transaction "
        "from the column it is compared with (pg_stats, or sampled rows).",
        "",
        "Run them yourself: `pgbench -n " + flags + " ...`, or name them in an ab.toml "
        "([workload] scripts) after editing.",
        "",
        "| script | weight | time | calls | statement |",
        "|---|--:|--:|--:|---|",
    ]
    for s in synthesis.scripts:
        lines.append(
            f"| {s.name}.sql | {s.weight} | {s.time_share:.1%} | {s.statement.calls:,} "
            f"| `{flat_query(s.statement.query)}` |"
        )
    if synthesis.capped:
        stop = f"Stopped at {MAX_SCRIPTS} statements, before {synthesis.cover:.0%} of the time."
        lines += ["", stop]
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
                f"| `{flat_query(k.statement.query)}` | {k.reason} |"
            )
    return "\n".join(lines) + "\n"


def flat_query(query: str, width: int = 90) -> str:
    """A statement on one line, cut to `width`, safe in a Markdown table cell."""
    flat = " ".join(query.split()).replace("|", "\\|").replace("`", "'")
    return flat if len(flat) <= width else flat[: width - 1] + "…"
