"""What an A/B names, read from ab.toml and the command line, checked like a lab file.

An A/B is: the data (a copy of the user's database, `source_dsn`, or a dump
file of it, `dump`, and/or SQL
files that build it, run in pgopt's own database: the migrations and seed data of
a CI job; or each variant's own schema, as when base and pull request differ in
their migrations), the workload (the user's pgbench scripts
with weights, or, with `synthesize`, scripts made from the source's
pg_stat_statements: replay/synthesize.py), and two variants, A and B, each a set of
settings, SQL applied to the data (an index, a migration) and/or replacement
scripts. B starts from A: it keeps A's settings and scripts unless it names its
own. Files in ab.toml are relative to its folder; files given as flags, to the current folder.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import LabError
from ..lab.table import Table, file_field, read_toml
from ..pgbench.command import ScriptRef
from ..servers.dsn import accept


@dataclass(frozen=True)
class Variant:
    title: str
    sql: tuple[Path, ...] = ()
    settings: dict[str, str] = field(default_factory=dict)
    scripts: tuple[ScriptRef, ...] = ()
    mode: str | None = None  # pgbench's protocol (-M), when not the default


@dataclass(frozen=True)
class AbSpec:
    title: str
    setup: tuple[Path, ...]
    scripts: tuple[ScriptRef, ...]
    a: Variant
    b: Variant
    run: dict[str, Any]  # clients, duration, reps, warmup: as a lab's [run] takes them
    source_dsn: str | None = None  # the database to copy (pg_dump), before the setup files
    dump: Path | None = None  # or a dump file of it (any pg_dump format)
    tables: tuple[str, ...] = ()  # pg_dump --table patterns: copy only these
    sample: float | None = None  # percent of each big table's rows to copy
    copy: str = "auto"  # physical where it can be (ab/copying.py), physical or logical
    margin: float | None = None  # percent, as --margin takes it
    fail_on_regression: float | None = None  # percent
    require_decision: bool = False
    synthesize: bool = False  # the workload from the source's pg_stat_statements
    cover: float = 90.0  # percent of the source's execution time the synthesis takes


@dataclass(frozen=True)
class AbFlags:
    """What the command line adds to (or, for single values, puts in place of) ab.toml."""

    title: str | None = None
    source_dsn: str | None = None
    dump: str | None = None
    tables: tuple[str, ...] = ()
    sample: float | None = None
    setup: tuple[str, ...] = ()
    scripts: tuple[str, ...] = ()
    a_sql: tuple[str, ...] = ()
    b_sql: tuple[str, ...] = ()
    a_settings: tuple[str, ...] = ()
    b_settings: tuple[str, ...] = ()
    a_scripts: tuple[str, ...] = ()
    b_scripts: tuple[str, ...] = ()
    synthesize: bool = False
    cover: float | None = None
    copy: str | None = None


RUN_KEYS = ("clients", "duration", "reps", "warmup")
COPIES = ("auto", "physical", "logical")  # ab/copying.py says what each means


def read_spec(path: Path | None, flags: AbFlags, cwd: Path) -> AbSpec:
    """The A/B of `path` (an ab.toml, or None) with the flags applied; LabError (exit 2)
    names the file and field of anything wrong."""
    raw: dict[str, Any] = {}
    folder = cwd
    where = "pgopt ab"
    if path is not None:
        missing = f"{path}: no such file"
        if path.is_dir():
            inside = sorted(str(p.parent) for p in path.glob("*/ab.toml"))
            missing = f"{path}: no ab.toml in this folder" + (
                f" (one is in {', '.join(inside)})" if inside else ""
            )
            path = path / "ab.toml"
        where = str(path)
        folder = path.resolve().parent
        raw = read_toml(path, missing)
    top = Table(raw, where)
    data = Table(top.table("data", {}), f"{where}: [data]")
    workload = Table(top.table("workload", {}), f"{where}: [workload]")
    gate = Table(top.table("gate", {}), f"{where}: [gate]")
    title = str(top.text("title", "A/B"))
    source_dsn = flags.source_dsn or data.text("source_dsn", None)
    if source_dsn:
        accept(source_dsn, f"{where}: [data] source_dsn")
    spec = AbSpec(
        title=flags.title or title,
        setup=_files(data, "setup", folder) + _flag_files(flags.setup, cwd, "--setup"),
        scripts=_scripts(workload, folder) + _flag_scripts(flags.scripts, cwd, "--script"),
        a=_variant(top, "a", "A", folder, cwd, flags.a_sql, flags.a_settings, flags.a_scripts),
        b=_variant(top, "b", "B", folder, cwd, flags.b_sql, flags.b_settings, flags.b_scripts),
        run={k: workload.raw(k) for k in RUN_KEYS if workload.has(k)},
        source_dsn=source_dsn,
        dump=_dump(data, folder, flags.dump, cwd),
        tables=tuple(str(t) for t in data.array("tables", [])) + flags.tables,
        sample=_sample(data, flags.sample),
        copy=flags.copy or str(data.text("copy", "auto")),
        margin=_optional_number(gate, "margin"),
        fail_on_regression=_percent(gate, "fail_on_regression"),
        require_decision=bool(gate.flag("require_decision", False)),
        synthesize=flags.synthesize or bool(workload.flag("synthesize", False)),
        cover=_cover(workload, flags.cover),
    )
    for t in (data, workload, gate, top):
        t.done()  # a misspelt field first: it often explains what seems missing
    if spec.tables and not spec.source_dsn:
        raise LabError(f"{where}: tables name what to copy from a source: give source_dsn")
    if spec.copy not in COPIES:
        raise LabError(f"{where}: [data] copy: one of {', '.join(COPIES)}, not {spec.copy!r}")
    if spec.copy == "physical" and not spec.source_dsn:
        raise LabError(f"{where}: a physical copy is made of a source: give source_dsn")
    if spec.sample is not None and not spec.source_dsn:
        raise LabError(f"{where}: a sample is taken from a source: give source_dsn")
    if spec.source_dsn and spec.dump:
        raise LabError(f"{where}: the data comes from a source database or a dump file, not both")
    if not (spec.setup or spec.source_dsn or spec.dump or spec.a.sql or spec.b.sql):
        raise LabError(
            f"{where}: the data: a database to copy ([data] source_dsn, --source-dsn; or a "
            "dump file: dump, --dump) "
            "and/or SQL files that build it ([data] setup, --setup; or each variant's sql)"
        )
    if spec.synthesize and not spec.source_dsn:
        raise LabError(
            f"{where}: a synthesized workload comes from a source's pg_stat_statements: "
            "give source_dsn (--source-dsn)"
        )
    if spec.synthesize and spec.scripts:
        raise LabError(f"{where}: the workload is your scripts or a synthesized one, not both")
    if not (spec.scripts or spec.synthesize):
        raise LabError(
            f"{where}: the workload: name pgbench scripts ([workload] scripts, --script), "
            "or synthesize them from the source's pg_stat_statements (synthesize, --synthesize)"
        )
    return spec


def _variant(
    top: Table,
    key: str,
    name: str,
    folder: Path,
    cwd: Path,
    sql: tuple[str, ...],
    settings: tuple[str, ...],
    scripts: tuple[str, ...],
) -> Variant:
    t = Table(top.table(key, {}), f"{top.where}: [{key}]")
    own_settings = {str(k): str(v) for k, v in t.table("settings", {}).items()}
    variant = Variant(
        title=str(t.text("title", name)),
        sql=_files(t, "sql", folder) + _flag_files(sql, cwd, f"--{key}-sql"),
        settings={**own_settings, **flag_settings(settings, f"--{key}-setting")},
        scripts=_scripts(t, folder) + _flag_scripts(scripts, cwd, f"--{key}-script"),
    )
    t.done()
    return variant


def _dump(t: Table, folder: Path, flag: str | None, cwd: Path) -> Path | None:
    """A dump file or, for pg_dump's directory format, a folder."""
    if flag is not None:
        path, where = (cwd / flag).resolve(), f"--dump {flag}"
    elif t.has("dump"):
        name = t.text("dump")
        path, where = (folder / name).resolve(), f"{t.where}: field 'dump': {name}"
    else:
        return None
    if not path.exists():
        raise LabError(f"{where}: no such file")
    return path


def _files(t: Table, key: str, folder: Path) -> tuple[Path, ...]:
    return tuple(file_field(t, key, name, folder) for name in t.array(key, []))


def _scripts(t: Table, folder: Path) -> tuple[ScriptRef, ...]:
    out = []
    for item in t.array("scripts", []):
        if not isinstance(item, str):
            raise t.fail("scripts", f"expected 'file' or 'file@weight', got {item!r}")
        name, weight = _weighted(item, lambda m: t.fail("scripts", m))
        out.append(ScriptRef(file_field(t, "scripts", name, folder), weight=weight))
    return tuple(out)


def _flag_files(names: tuple[str, ...], cwd: Path, flag: str) -> tuple[Path, ...]:
    out = []
    for name in names:
        path = (cwd / name).resolve()
        if not path.is_file():
            raise LabError(f"{flag} {name}: no such file")
        out.append(path)
    return tuple(out)


def _flag_scripts(items: tuple[str, ...], cwd: Path, flag: str) -> tuple[ScriptRef, ...]:
    out = []
    for item in items:
        name, weight = _weighted(item, lambda m, item=item: LabError(f"{flag} {item}: {m}"))
        out.append(ScriptRef(_flag_files((name,), cwd, flag)[0], weight=weight))
    return tuple(out)


def _weighted(item: str, fail: Any) -> tuple[str, int]:
    """'file.sql@3' -> ('file.sql', 3), as pgbench's -f takes a weight."""
    name, at, weight = item.rpartition("@")
    if not at:
        return item, 1
    if not weight.isdigit() or int(weight) < 1:
        raise fail(f"the weight after @ must be a whole number from 1, got {weight!r}")
    return name, int(weight)


def flag_settings(items: tuple[str, ...], flag: str) -> dict[str, str]:
    out = {}
    for item in items:
        name, eq, value = item.partition("=")
        if not eq or not name.strip():
            raise LabError(f"{flag} {item}: expected NAME=VALUE")
        out[name.strip()] = value.strip()
    return out


def _sample(t: Table, flag: float | None) -> float | None:
    """The percentage of each big table's rows to copy: above 0, below 100."""
    own = _optional_number(t, "sample")
    value = flag if flag is not None else own
    if value is not None and not 0 < value < 100:
        where = "--sample" if flag is not None else f"{t.where}: field 'sample'"
        raise LabError(f"{where}: expected a percentage above 0 and below 100, got {value:g}")
    return value


def _cover(t: Table, flag: float | None) -> float:
    """How much of the source's execution time to synthesize, in percent (1 to 100)."""
    own = _optional_number(t, "cover")
    value = flag if flag is not None else own
    if value is None:
        return 90.0
    if not 0 < value <= 100:
        where = "--cover" if flag is not None else f"{t.where}: field 'cover'"
        raise LabError(f"{where}: expected a percentage from 1 to 100, got {value:g}")
    return value


def _optional_number(t: Table, key: str) -> float | None:
    if not t.has(key):
        return None
    return float(t.number(key))


def _percent(t: Table, key: str) -> float | None:
    """A percentage strictly between 0 and 100, as the command line takes it."""
    value = _optional_number(t, key)
    if value is not None and not 0 < value < 100:
        raise t.fail(key, f"expected a percentage between 0 and 100, got {value:g}")
    return value
