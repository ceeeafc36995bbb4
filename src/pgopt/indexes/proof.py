"""`pgopt advise --prove missing-index`: the chosen indexes measured on a throwaway
copy under the source's own workload, replayed with its writes (as `pgopt ab
--synthesize` replays it), or the `--queries` statements with values drawn from
the data. One A/B lab: A as is, B with the set; then each index left out of B
in turn (does it earn its place?) and each candidate rejected only by the write
estimate added to B (was the estimate right?). Every step runs from its own
template, so an index never leaks into another step's runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..ab.conclusion import verdict_of
from ..ab.reading import DEFAULT_PACE, CopyPace
from ..ab.run import AbOptions, run_ab
from ..ab.spec import AbSpec, Variant
from ..consoles import err
from ..replay.from_source import scripts_for
from ..replay.synthesize import Synthesis
from ..replay.workload_files import write_scripts
from .outcome import RULE, IndexAdvice
from .proof_reading import ADDED, LEFT_OUT, statement_effects, wal_per_tx, worded
from .selection import Weighed
from .workload import Statement


def prove_indexes(
    advice: IndexAdvice,
    doc: dict[str, Any],
    dsn: str,
    queries: list[Statement] | None,
    synthesis: Synthesis | None,
    folder: Path,
    duration: int,
    reps: int | None,
    pace: CopyPace = DEFAULT_PACE,
) -> None:
    """Measure the chosen set (a physical copy at `pace`); the proofs go into `doc`'s
    missing-index findings."""
    choice = advice.choice
    if choice is None or not choice.chosen:
        err.print(f"[advise] --prove {RULE}: no index to add, nothing to prove", markup=False)
        return
    where = folder / "proofs" / RULE
    where.mkdir(parents=True, exist_ok=True)
    chosen, added = list(choice.chosen), list(choice.write_rejected)
    files = {"b": _ddl_file(where / "b.sql", chosen)}
    left_out = {}
    if len(chosen) > 1:
        for i, w in enumerate(chosen, start=1):
            left_out[f"without_{i}"] = w
            files[f"without_{i}"] = _ddl_file(
                where / f"without_{i}.sql", [x for x in chosen if x is not w]
            )
    adding = {}
    for i, w in enumerate(added, start=1):
        adding[f"plus_{i}"] = w
        files[f"plus_{i}"] = _ddl_file(where / f"plus_{i}.sql", [*chosen, w])
    titles = {"b": f"with the {len(chosen)} chosen index(es)"}
    titles |= {k: f"without {w.checked.name}" for k, w in left_out.items()}
    titles |= {
        k: f"plus {w.checked.name} (rejected by the write estimate)" for k, w in adding.items()
    }

    def steps_of(a: dict[str, Any]) -> list[dict[str, Any]]:
        analyze = a["schema"][-1:]  # A's analyze.sql; none on a physical copy
        steps = [a]
        for name, path in files.items():
            step = {
                "name": name,
                "title": titles[name],
                "fresh": True,
                "schema": [str(path), *analyze],
            }
            if name != "b":
                step["from"] = "b"
            steps.append(step)
        return steps

    spec = _spec(advice, dsn, queries, synthesis, where, duration)
    err.print(
        f"[advise] proving {RULE}: {len(chosen)} index(es) against none on the replayed workload"
        + (", each left out in turn" if left_out else "")
        + (f", {len(adding)} rejected one(s) added" if adding else ""),
        markup=False,
    )
    result = run_ab(spec, AbOptions.proof(reps, where / "run", synthesis, pace), steps_of)
    assert result is not None
    verdict = verdict_of(result)
    fidelity = result.fidelity
    if fidelity is not None and fidelity.verdict == "unfaithful":
        verdict += "; on an unfaithful replay: " + "; ".join(fidelity.reasons[:2])
    effects = statement_effects(result, "a", "b")
    # the statements the replay runs (a --queries proof runs every one planned)
    replayed = {b.statement.query for b in synthesis.blocks} if synthesis is not None else None
    wal = {name: wal_per_tx(result.step(name)) for name in ("a", "b")}
    for entry in doc["findings"]:
        if entry["rule"] != RULE:
            continue
        name = entry["index"]["name"]
        entry["proof"] = verdict
        entry["proof_run"] = str(where / "run")
        entry["index"]["proof"] = {
            "set": verdict,
            "statements": effects,
            "wal_bytes_per_tx": wal,
            "left_out": next(
                (
                    worded(result.step(k), LEFT_OUT)
                    for k, w in left_out.items()
                    if w.checked.name == name
                ),
                "the only index of the set: the set's proof is its own",
            ),
        }
        served = [s["query"] for s in entry["index"]["statements"]]
        if replayed is not None and not set(served) & replayed:
            entry["index"]["proof"]["replayed"] = False
            entry["index"]["proof"]["left_out"] = (
                "not measured: none of the statements it serves is in the replay (why: "
                f"{where / 'run' / 'workload' / 'README.md'})"
            )
    doc["indexes"]["proof"] = {
        "run": str(where / "run"),
        "set": verdict,
        "fidelity": fidelity.verdict if fidelity is not None else None,
        "statements": effects,
        "wal_bytes_per_tx": wal,
        "added": [
            {"ddl": w.checked.candidate.ddl(), "verdict": worded(result.step(k), ADDED)}
            for k, w in adding.items()
        ],
    }


def _ddl_file(path: Path, indexes: list[Weighed]) -> Path:
    lines = [w.checked.candidate.ddl(concurrently=False) for w in indexes]
    path.write_text("\n".join(lines or ["-- no index"]) + "\n")
    return path.resolve()


def _spec(
    advice: IndexAdvice,
    dsn: str,
    queries: list[Statement] | None,
    synthesis: Synthesis | None,
    where: Path,
    duration: int,
) -> AbSpec:
    run = {"clients": 2, "duration": duration}
    if queries is None:
        assert synthesis is not None
        return AbSpec(
            title=f"advise --prove {RULE}: the chosen indexes on the replayed workload",
            setup=(),
            scripts=(),
            a=Variant("as is"),
            b=Variant("with the indexes"),
            run=run,
            source_dsn=dsn,
            synthesize=True,
        )
    planned = [s.query for s in queries if s.id not in advice.refused]
    scripts, keys = write_scripts(scripts_for(dsn, planned), where / "workload", False)
    return AbSpec(
        title=f"advise --prove {RULE}: the chosen indexes on the --queries statements",
        setup=keys,
        scripts=scripts,
        a=Variant("as is"),
        b=Variant("with the indexes"),
        run=run,
        source_dsn=dsn,
    )
