"""The rules of `pgopt advise`, one TOML file each in advise/rules/, read and checked.

A rule names its evidence query (queries/NAME.sql, chosen by server version; or,
with `sampled`, a query run at every sample of the window, row_locks.py's), the
statements behind each finding it wants named (`behind`, behind.py), the server
versions it applies to, what evidence it needs (pg_stat_statements,
pg_stats, statistics old enough), how rows are followed across the sample (`key`)
and which counters become rates (`rates`: `NAME_per_s`), which sampled wait events
make its `wait_share`, a named SQL check on the statement text (`filter`), derived
figures (lab expressions), and its thresholds, each with where it comes from. A
row that meets every threshold (or any, with `any = true`) is a finding, told by
`message`, with its `fix` and the lab `experiment` that shows the mechanism.

Every rule also says how its fix is proved (`[proof]`): an A/B on a throwaway copy
of the objects the finding names (templates over the finding's evidence: the fix's
SQL, the tables to copy, the statements or scripts to run, a rewrite of the
statement or a protocol for B), or why it cannot be proved on a copy.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from importlib.resources import files
from typing import Any

from ..errors import LabError
from ..lab.expressions import evaluate
from ..lab.table import Table
from ..queries import find
from . import row_locks
from .behind import BEHIND
from .sql_checks import FILTERS, REWRITES

SAMPLED = (row_locks.QUERY,)  # the queries a sampler runs during the window

OPS = ("<", "<=", ">", ">=", "==", "!=", "abs<")
NEEDS = ("statements", "pg_stats", "history", "pgstattuple")
MODES = ("simple", "extended", "prepared")


class Severity(StrEnum):
    CRITICAL = "critical"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return list(Severity).index(self)


@dataclass(frozen=True)
class Threshold:
    field: str
    op: str
    value: float | str
    source: str

    def holds(self, row: dict[str, Any]) -> bool:
        actual = row.get(self.field)
        if actual is None:
            return False
        if self.op in ("==", "!="):
            return (str(actual) == str(self.value)) == (self.op == "==")
        a, v = float(actual), float(self.value)
        return {
            "<": a < v,
            "<=": a <= v,
            ">": a > v,
            ">=": a >= v,
            "abs<": abs(a) < v,
        }[self.op]

    def describe(self) -> str:
        op = "|x| <" if self.op == "abs<" else self.op
        return f"{self.field} {op} {self.value}"


@dataclass(frozen=True)
class ProofSpec:
    """How a finding's fix is measured; `{field}` templates take the finding's evidence."""

    not_testable: str | None = None  # or why no copy can show it
    title: str = ""
    fix: str = ""  # B's title
    fix_sql: str = ""  # B's schema change, if any
    tables: tuple[str, ...] = ()  # pg_dump --table patterns
    tables_of: str | None = None  # or: the tables an evidence field's statement names
    statements: tuple[str, ...] = ()  # normalized (with $n), values drawn from the data
    scripts: tuple[str, ...] = ()  # pgbench scripts as they are
    naming: str = ""  # or: the source's statements that name this table
    rewrite: str | None = None  # B runs the statements rewritten (REWRITES)
    b_mode: str | None = None  # B's pgbench protocol (simple, extended, prepared)
    transaction: bool = False  # each script one transaction
    clients: int = 2
    assumption: str = ""  # what the copy cannot know about the real workload


@dataclass(frozen=True)
class Rule:
    id: str
    title: str
    severity: Severity
    query: str
    message: str
    fix: str
    thresholds: tuple[Threshold, ...] = ()
    any: bool = False
    versions: tuple[int, int] = (13, 99)
    needs: tuple[str, ...] = ()
    key: tuple[str, ...] = ()
    rates: tuple[str, ...] = ()
    waits: tuple[str, ...] = ()
    filter: str | None = None
    sampled: bool = False  # its rows are a summary of samples taken during the window
    behind: str | None = None  # the statements behind each finding (behind.BEHIND)
    derived: tuple[tuple[str, str], ...] = ()
    seed: str | None = None
    source: str | None = None  # for a rule without thresholds: what defines it
    experiment: str | None = None
    proof: ProofSpec = ProofSpec(not_testable="no experiment for this rule")

    def applies_to(self, major: int) -> bool:
        return self.versions[0] <= major <= self.versions[1]

    def met_by(self, row: dict[str, Any]) -> bool:
        if not self.thresholds:
            return True
        held = [t.holds(row) for t in self.thresholds]
        return any(held) if self.any else all(held)

    def derive(self, row: dict[str, Any]) -> dict[str, Any]:
        """The row with the rule's derived figures (None where they divide by zero or
        overflow for this row)."""
        out = dict(row)
        numbers = {k: float(v) for k, v in row.items() if isinstance(v, int | float)}
        for name, expression in self.derived:
            try:
                out[name] = evaluate(expression, numbers)
            except LabError:
                out[name] = None
        return out


def read_rule(text: str, where: str) -> Rule:
    import tomllib

    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise LabError(f"{where}: {e}") from None
    t = Table(raw, where)
    thresholds = tuple(
        _threshold(item, f"{where}: [[threshold]]") for item in t.array("threshold", [])
    )
    versions = t.array("versions", [13, 99])
    rule = Rule(
        id=str(t.text("id")),
        title=str(t.text("title")),
        severity=t.choice("severity", Severity),
        query=str(t.text("query")),
        message=str(t.text("message")),
        fix=str(t.text("fix")),
        thresholds=thresholds,
        any=bool(t.flag("any", False)),
        versions=(int(versions[0]), int(versions[1])),
        needs=tuple(str(n) for n in t.array("needs", [])),
        key=tuple(str(k) for k in t.array("key", [])),
        rates=tuple(str(r) for r in t.array("rates", [])),
        waits=tuple(str(w) for w in t.array("waits", [])),
        filter=t.text("filter", None),
        sampled=bool(t.flag("sampled", False)),
        behind=t.text("behind", None),
        derived=tuple((str(k), str(v)) for k, v in t.table("derived", {}).items()),
        seed=t.text("seed", None),
        source=t.text("source", None),
        experiment=t.text("experiment", None),
        proof=_proof(t.table("proof"), f"{where}: [proof]"),
    )
    t.done()
    if find(rule.query, 10**6) is None:
        raise t.fail("query", f"no query {rule.query}.sql")
    for need in rule.needs:
        if need not in NEEDS:
            raise t.fail("needs", f"unknown {need!r} (known: {', '.join(NEEDS)})")
    if rule.sampled and rule.query not in SAMPLED:
        raise t.fail("sampled", f"no sampler runs {rule.query} (known: {', '.join(SAMPLED)})")
    if rule.behind is not None and rule.behind not in BEHIND:
        raise t.fail("behind", f"unknown {rule.behind!r} (known: {', '.join(BEHIND)})")
    if rule.filter is not None and rule.filter not in FILTERS:
        raise t.fail("filter", f"unknown {rule.filter!r} (known: {', '.join(FILTERS)})")
    if rule.rates and not rule.key:
        raise t.fail("rates", "rates follow rows across the sample: name their key")
    if not rule.thresholds and not rule.source:
        raise t.fail("source", "a rule without thresholds says what defines it")
    return rule


def _proof(item: Any, where: str) -> ProofSpec:
    t = Table(item, where)
    if t.has("not_testable"):
        proof = ProofSpec(not_testable=str(t.text("not_testable")))
        t.done()
        return proof
    proof = ProofSpec(
        title=str(t.text("title")),
        fix=str(t.text("fix")),
        fix_sql=str(t.text("fix_sql", "")),
        tables=tuple(str(x) for x in t.array("tables", [])),
        tables_of=t.text("tables_of", None),
        statements=tuple(str(x) for x in t.array("statements", [])),
        scripts=tuple(str(x) for x in t.array("scripts", [])),
        naming=str(t.text("naming", "")),
        rewrite=t.text("rewrite", None),
        b_mode=t.text("b_mode", None),
        transaction=bool(t.flag("transaction", False)),
        clients=int(t.integer("clients", 2)),
        assumption=str(t.text("assumption", "")),
    )
    t.done()
    if not (proof.statements or proof.scripts or proof.naming):
        raise t.fail("statements", "a proof runs statements, scripts, or a table's statements")
    if not (proof.tables or proof.tables_of):
        raise t.fail("tables", "a proof names the tables to copy (tables, or tables_of)")
    if not (proof.fix_sql or proof.rewrite or proof.b_mode):
        raise t.fail("fix_sql", "B differs from A: a fix_sql, a rewrite, or a b_mode")
    if proof.rewrite is not None and proof.rewrite not in REWRITES:
        raise t.fail("rewrite", f"unknown {proof.rewrite!r} (known: {', '.join(REWRITES)})")
    if proof.b_mode is not None and proof.b_mode not in MODES:
        raise t.fail("b_mode", f"expected one of {', '.join(MODES)}")
    return proof


def _threshold(item: Any, where: str) -> Threshold:
    t = Table(item, where)
    threshold = Threshold(
        field=str(t.text("field")),
        op=str(t.text("op")),
        value=t.raw("value"),
        source=str(t.text("source")),
    )
    t.done()
    if threshold.op not in OPS:
        raise t.fail("op", f"expected one of {', '.join(OPS)}, got {threshold.op!r}")
    return threshold


@cache
def all_rules() -> tuple[Rule, ...]:
    """Every rule shipped with pgopt, most severe first, then by id."""
    folder = files(__package__).joinpath("rules")
    rules = [
        read_rule(entry.read_text(), f"advise/rules/{entry.name}")
        for entry in folder.iterdir()
        if entry.name.endswith(".toml")
    ]
    ids = [r.id for r in rules]
    if len(set(ids)) != len(ids):
        raise LabError(f"advise/rules: duplicate rule ids in {sorted(ids)}")
    return tuple(sorted(rules, key=lambda r: (r.severity.rank, r.id)))
