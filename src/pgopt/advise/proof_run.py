"""`pgopt advise --prove RULE`: each finding of the rule measured by an A/B on a
throwaway copy of the objects it names (advise/prove.py plans it, ab/run.py runs it).
The live server is only read: pg_dump copies the objects, the statements' values
come from its statistics."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..ab.conclusion import verdict_of
from ..ab.reading import DEFAULT_PACE, CopyPace
from ..ab.run import AbOptions, run_ab
from ..ab.spec import AbSpec, Variant
from ..consoles import err
from ..errors import UsageError
from ..pgbench.command import ScriptRef
from ..replay.from_source import scripts_for, statements_naming
from ..replay.workload_files import write_scripts
from .advice import Advice
from .prove import ProofPlan, plan_proof


def prove_findings(
    advice: Advice,
    doc: dict[str, Any],
    dsn: str,
    rules: set[str],
    folder: Path,
    duration: int,
    reps: int | None,
    pace: CopyPace = DEFAULT_PACE,
) -> None:
    """Measure the findings of `rules`, each in `reps` rounds (None: until decided, as
    `pgopt ab` looks), a physical copy at `pace`; their proofs go into `doc`'s findings."""
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
        result = run_ab(spec, AbOptions.proof(reps, where / "run", pace=pace))
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
