"""`pgopt advise --prove RULE`: each finding of the rule measured by an A/B on a
throwaway copy of the objects it names (advise/prove.py plans it, `run_ab` runs it).
The live server is only read: pg_dump copies the objects, the statements' values
come from its statistics."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from ..ab.spec import AbSpec, Variant
from ..advise.advice import Advice
from ..advise.prove import ProofPlan, plan_proof, verdict_of
from ..errors import UsageError
from ..pgbench.command import ScriptRef
from ..replay.source_reader import scripts_for, statements_naming
from ..replay.synthesize import Synthesis
from ..replay.workload_files import write_workload
from .ab import run_ab
from .app import err

PROOF_OPTIONS: dict[str, Any] = {
    "quick": False,
    "duration": None,
    "margin": None,
    "clients": None,
    "dsn": None,
    "allow_settings": False,
    "pg_bin": None,
    "seed": 1,
    "workdir": None,
    "keep": False,
    "no_sampler": False,
    "latencies": "first",
    "dry_run": False,
}


def prove_findings(
    advice: Advice,
    doc: dict[str, Any],
    dsn: str,
    rules: set[str],
    folder: Path,
    duration: int,
    reps: int | None,
) -> None:
    """Measure the findings of `rules`, each in `reps` rounds (None: until decided, as
    `pgopt ab` looks); their proofs go into `doc`'s findings."""
    proved = 0
    for finding, entry in zip(advice.findings, doc["findings"], strict=True):
        if finding.rule.id not in rules:
            continue
        plan = plan_proof(finding)
        if isinstance(plan, str):
            entry["proof"] = f"not testable here: {plan}"
            continue
        proved += 1
        where = folder / "proofs" / f"{finding.rule.id}-{proved}"
        err.print(f"[advise] proving {finding.rule.id}: {plan.title}", markup=False)
        try:
            spec = _spec(plan, dsn, where, duration)
        except UsageError as e:
            entry["proof"] = f"not testable here: {e}"
            continue
        if plan.assumption:
            entry["proof_assumption"] = plan.assumption
        options = {**PROOF_OPTIONS, "reps": reps, "out_dir": where / "run"}
        result = run_ab(spec, options)
        assert result is not None
        entry["proof"] = verdict_of(result)
        entry["proof_run"] = str(where / "run")
    missing = rules - {f.rule.id for f in advice.findings}
    for rule in sorted(missing):
        err.print(f"[advise] --prove {rule}: no finding of this rule to prove", markup=False)


def _spec(plan: ProofPlan, dsn: str, where: Path, duration: int) -> AbSpec:
    """The A/B of `plan`; UsageError when the source holds nothing to replay."""
    workload = where / "workload"
    scripts: tuple[ScriptRef, ...] = ()
    keys: tuple[Path, ...] = ()
    if plan.statements:
        scripts, keys = write_scripts(
            scripts_for(dsn, list(plan.statements)), workload, plan.transaction
        )
    elif plan.naming:
        scripts, keys = write_scripts(
            statements_naming(dsn, plan.naming), workload, plan.transaction
        )
    workload.mkdir(parents=True, exist_ok=True)
    for i, text in enumerate(plan.scripts, start=len(scripts) + 1):
        path = workload / f"p{i:02d}.sql"
        path.write_text(text)
        scripts += (ScriptRef(path.resolve()),)
    b_scripts: tuple[ScriptRef, ...] = ()
    if plan.b_statements:
        synthesis = scripts_for(dsn, list(plan.b_statements))
        b_scripts, b_keys = write_scripts(synthesis, where / "workload-b", plan.transaction)
        keys += b_keys
    fix: tuple[Path, ...] = ()
    if plan.fix_sql:
        (where / "fix.sql").write_text(plan.fix_sql)
        fix = ((where / "fix.sql").resolve(),)
    return AbSpec(
        title=f"advise --prove: {plan.title}",
        setup=keys,
        scripts=scripts,
        a=Variant("as is"),
        b=Variant(plan.fix_title, sql=fix, scripts=b_scripts, mode=plan.b_mode),
        run={"clients": plan.clients, "duration": duration},  # cold clones, as any A/B
        source_dsn=dsn,
        tables=plan.tables,
    )


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
