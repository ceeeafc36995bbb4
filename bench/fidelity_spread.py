"""Fidelity spread: how far a faithful replay's per-call figures fall from its
source's, so that the thresholds of src/pgopt/replay/fidelity.py come from a
distribution and not from one run.

A faithful source is one whose replay knows the clients' values: a log capture
(`--source-capture S`) of sysbench or of the Django shop (bench/truth_clients.py),
or a watch of clients that send literals (sysbench `--db-ps-mode=disable`; the
shop, whose ORM sends literals). For each source, on one throwaway PostgreSQL 18
(bench/replay_truth.py's source: its log kept as files), the application's data is
prepared once and `pgopt ab --source-dsn ... --synthesize` replays it `--repeats`
times, each with its own watch or capture of the application running and a fresh
copy of the source, B being `synchronous_commit = off`. Every replayed statement
the check judges (at least judged_share of the source's time) gives one
statement-replay: its rows, server time, shared blocks and blocks read into shared
buffers a call, replay and source, straight from result.json's
`fidelity.statements`.

Left out of a figure's spread (`left_out`, each printed with its figures): a
statement whose values the replay drew from the data's statistics (a watch that saw
too few of its calls: the workload's README says so); a list pg_stat_statements
squashed, which the replay sends with one value (the shop's order lines, found
here: a defect, not a spread); from the server time, a source time that is one
call's wait (the check says so and counts it, by design). Prints, per figure, the
quantiles of |ln(replay / source)| and of |replay - source| by the source's
magnitude (decades: a floor matters where the values are small), then what the
rule gives (the rule, once: docs/method.md, "How the fidelity thresholds were
set"):

- the ratio: the 99th percentile of |ln(replay / source)| over the
  statement-replays whose source figure is at least Figure.large, its exp rounded
  up to a tenth;
- the floor: for each statement-replay, the floor it needs under that ratio (0 if
  within it, else |replay - source|); their 99th percentile, rounded up to one
  significant digit; for the cache misses, whether the share of the source's
  blocks a call (`misses_share`) lowers that floor: kept if it does;
- neither below its value now: the bench measures faithful replays only, so how
  often a tighter bound would be right is not measured here;

and how many statement-replays and replays the current THRESHOLDS and the rule's
pass. The load average is noted before, around every run and after. `--json FILE`
keeps every statement-replay; `--from-json FILE` (repeatable: pooled) prints the
analysis of kept runs again (under the THRESHOLDS of the code it runs with). Run from the
repository root (the shop needs `pip install -e '.[bench]'`):

    .venv/bin/python bench/fidelity_spread.py [--sources rw_capture,shop_watch,...]
        [--repeats 4] [--wait-load 1.5] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common import stop_cleanly_on_signals
from replay_truth import Case, Source, pgopt_ab

from pgopt.binaries import find_binaries
from pgopt.replay.fidelity import THRESHOLDS
from pgopt.servers.embedded import EmbeddedTarget

SYNC = ("synchronous_commit=off",)
LITERAL = ("--db-ps-mode=disable",)  # sysbench sends its values in the statements' text
UNIFORM = ("--rand-type=uniform",)


@dataclass(frozen=True)
class Faithful:
    """A source whose replay knows the clients' values, and how pgopt reads it."""

    name: str
    case: Case
    way: str  # "capture" or "watch" (replay_truth's ways)


def sources() -> list[Faithful]:
    def sysbench(workload: str, options: tuple[str, ...]) -> Case:
        return Case(
            workload, "sysbench", workload, "synchronous_commit = off", SYNC, options=options
        )

    # bench/replay_truth.py's aged_rw: 60 s of sysbench's writes first, ranges of 1,000
    # rows reading hundreds of blocks a call (the case misses_share was added for)
    aged = Case(
        "aged_rw",
        "sysbench",
        "oltp_read_write",
        "synchronous_commit = off on an aged source",
        SYNC,
        options=("--range_size=1000",),
        aged_s=60.0,
    )
    shop = Case("shop", "shop", "shop", "synchronous_commit = off", SYNC)
    return [
        Faithful("rw_capture", sysbench("oltp_read_write", ()), "capture"),
        Faithful("rw_literal_watch", sysbench("oltp_read_write", LITERAL), "watch"),
        Faithful("rw_uniform_capture", sysbench("oltp_read_write", UNIFORM), "capture"),
        Faithful("wo_capture", sysbench("oltp_write_only", ()), "capture"),
        Faithful("wo_literal_watch", sysbench("oltp_write_only", LITERAL), "watch"),
        Faithful(
            "wo_uniform_literal_watch", sysbench("oltp_write_only", UNIFORM + LITERAL), "watch"
        ),
        Faithful("aged_rw_capture", aged, "capture"),
        Faithful("shop_watch", shop, "watch"),
        Faithful("shop_capture", shop, "capture"),
    ]


@dataclass(frozen=True)
class Figure:
    """One per-call figure of fidelity.statements, and its thresholds' keys."""

    name: str
    unit: str
    ratio: str  # THRESHOLDS' key
    floor: str
    # the source's figure from which the ratio alone is judged: 5 times the floor of
    # before this bench (rows 0.5, 0.02 ms, 2 blocks, 0.3 blocks read a call)
    large: float


FIGURES = (
    Figure("rows", "rows", "rows_ratio", "rows_floor", 2.5),
    Figure("ms", "ms", "time_ratio", "time_floor_ms", 0.1),
    Figure("blocks", "blocks", "blocks_ratio", "blocks_floor", 10.0),
    Figure("blocks_read", "blocks", "misses_ratio", "misses_floor", 1.5),
)
QUANTILES = (0.5, 0.9, 0.95, 0.99, 1.0)


def load() -> str:
    """The machine's load averages (1, 5, 15 minutes), as uptime gives them."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def wait_for_load(
    below: float, for_s: float = 60.0, poll_s: float = 30.0, most_s: float = 1500.0
) -> str:
    """Wait until the 1-minute load average has stayed below `below` for `for_s` (polled
    every `poll_s`, at most `most_s`); what happened, in words."""
    started = time.monotonic()
    quiet_since: float | None = None
    while True:
        now = time.monotonic()
        one = float(load().split()[0])
        if one < below:
            quiet_since = now if quiet_since is None else quiet_since
            if now - quiet_since >= for_s:
                return f"load below {below} for {for_s:.0f} s after {now - started:.0f} s: {load()}"
        else:
            quiet_since = None
        if now - started >= most_s:
            return (
                f"load not below {below} for {for_s:.0f} s in {most_s:.0f} s; ran anyway: {load()}"
            )
        time.sleep(poll_s)


DATA_ORIGINS = ("from pg_stats", "from sampled rows")  # replay/values/draws.py's, as said
SQUASHED = "/*, ... */"  # a list of constants pg_stat_statements squashed (PostgreSQL 18)


def draws(readme: Path) -> dict[str, list[str]]:
    """How each statement's parameters were drawn, as the workload's README says."""
    said: dict[str, list[str]] = {}
    text = readme.read_text() if readme.exists() else ""
    for line in text.split("## How each parameter is drawn", 1)[-1].splitlines():
        name, sep, how = line.removeprefix("- ").partition(": ")
        if line.startswith("- q") and sep:
            said.setdefault(name, []).append(how)
    return said


def from_data(query: str, how: list[str]) -> bool:
    """Whether a parameter by which the statement finds its rows was drawn from the
    data's statistics (what it writes is work by its size, not counted: an INSERT's
    values, a value the README says is written)."""
    if query.lstrip().upper().startswith("INSERT"):
        return False
    return any(o in h and "what is written" not in h for h in how for o in DATA_ORIGINS)


def statement_replays(
    document: dict[str, Any], drawn: dict[str, list[str]]
) -> list[dict[str, Any]]:
    """The judged statements of a replay's result.json, their per-call figures, and
    how their values were drawn (`drawn`: the workload's README)."""
    keep = ("name", "query", "share", "source_calls", "replay_calls", "within", "why")
    rows = []
    for s in (document.get("fidelity") or {}).get("statements", ()):
        if not s.get("judged") or not s.get("replay_calls"):
            continue
        row = {k: s.get(k) for k in keep}
        row["squashed"] = SQUASHED in str(row["query"])
        row["draws"] = drawn.get(str(row["name"]), [])
        row["values_from_data"] = from_data(row["query"], row["draws"])
        for f in FIGURES:
            row[f"source_{f.name}"] = s.get(f"source_{f.name}")
            row[f"replay_{f.name}"] = s.get(f"replay_{f.name}")
        rows.append(row)
    return rows


def measure(args: argparse.Namespace, chosen: list[Faithful]) -> list[dict[str, Any]]:
    """Every replay of every chosen source: its verdict, reasons and statement-replays."""
    replays: list[dict[str, Any]] = []
    work = Path(tempfile.mkdtemp(prefix="pgopt-fidelity-spread-"))
    settings = {"logging_collector": "on", "log_destination": "stderr,csvlog"}
    try:
        with EmbeddedTarget(find_binaries(None), base_settings=settings) as server:
            source = Source(server, args)
            for faithful in chosen:
                started = time.monotonic()
                client = source.prepare(faithful.case)
                for repeat in range(1, args.repeats + 1):
                    seed = args.seed + repeat  # each replay its own draws
                    source.args = argparse.Namespace(
                        **{**vars(args), "pgopt_arg": [*args.pgopt_arg, "--seed", str(seed)]}
                    )
                    out = work / f"{faithful.name}-{repeat}"
                    before = load()
                    result = pgopt_ab(source, client, faithful.case, faithful.way, "auto", out)
                    replay: dict[str, Any] = {
                        "source": faithful.name,
                        "way": faithful.way,
                        "repeat": repeat,
                        "load_before": before,
                        "load_after": load(),
                    }
                    if "error" in result:
                        replay["error"] = result["error"]
                    else:
                        document = json.loads((out / "result.json").read_text())
                        replay |= {
                            "fidelity": result["fidelity"],
                            "reasons": result["reasons"],
                            "statements": statement_replays(
                                document, draws(out / "workload" / "README.md")
                            ),
                        }
                    shutil.rmtree(out, ignore_errors=True)
                    replays.append(replay)
                    said = replay.get("fidelity") or replay.get("error")
                    print(
                        f"{faithful.name} #{repeat}: {said}, "
                        f"{len(replay.get('statements', []))} statements judged; load "
                        f"{replay['load_before']} -> {replay['load_after']}",
                        flush=True,
                    )
                print(f"  {faithful.name}: {time.monotonic() - started:.0f} s", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return replays


def quantile(values: Sequence[float], p: float) -> float:
    """The smallest of `values` at or below which at least `p` of them lie."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p * len(ordered)) - 1)]


def tenth_up(value: float) -> float:
    """A ratio rounded up to a tenth: 1.22 -> 1.3."""
    return math.ceil(round(value * 10, 6)) / 10


def digit_up(value: float) -> float:
    """A floor rounded up to one significant digit: 0.23 -> 0.3, 12.2 -> 20."""
    if value <= 0:
        return 0.0
    unit = 10.0 ** math.floor(math.log10(value))
    return float(f"{math.ceil(round(value / unit, 6)) * unit:.3g}")


def left_out(s: dict[str, Any], figure: str) -> str:
    """Why a statement-replay's `figure` is not a faithful replay's spread ('' where it
    is): its values not the clients', a defect of the replay found here, or an event of
    the source's the replay cannot meet (which the check says and counts, by design)."""
    if s["values_from_data"]:
        return "its values drawn from the data's statistics, not the clients' calls"
    if s.get("squashed"):  # the shop's log capture: IN (one value) where calls sent 3 or so
        return "a list pg_stat_statements squashed, which the replay sends with one value"
    if figure == "ms" and "its slowest call took" in (s.get("why") or ""):
        return "the source's time a call is one call's wait (a lock, a deadlock, a stall)"
    return ""


def _judged(s: dict[str, Any], f: Figure) -> tuple[float, float, float] | None:
    """(source, replay, the source's blocks a call) where the check judges the figure:
    the blocks' and the misses' only where the source touched any."""
    src, rep, blocks = s[f"source_{f.name}"], s[f"replay_{f.name}"], s["source_blocks"] or 0.0
    if src is None or rep is None or (f.name.startswith("blocks") and blocks <= 0):
        return None
    return float(src), float(rep), float(blocks)


def pairs(
    replays: list[dict[str, Any]], f: Figure, leave_out: bool = True
) -> list[tuple[float, float, float]]:
    """Each statement-replay's figure where judged and, with `leave_out`, where it is a
    faithful replay's."""
    every = (s for r in replays for s in r.get("statements", ()))
    judged = (_judged(s, f) for s in every if not (leave_out and left_out(s, f.name)))
    return [x for x in judged if x is not None]


def within(src: float, rep: float, ratio: float, floor: float) -> bool:
    """replay/fidelity.py's test: within `ratio` either way, or less than `floor` apart."""
    if abs(rep - src) < floor:
        return True
    return src > 0 and rep > 0 and 1 / ratio <= rep / src <= ratio


def _row(label: str, values: list[float], fmt: Callable[[float], str]) -> str:
    if not values:
        return f"  {label:<30} n 0"
    shown = "  ".join(f"p{round(q * 100)} {fmt(quantile(values, q))}" for q in QUANTILES)
    return f"  {label:<30} n {len(values):<4} {shown}".replace("p100", "max")


def _decade(value: float) -> float:
    return 0.0 if value <= 0 else 10.0 ** math.floor(math.log10(value))


def _log_ratio(src: float, rep: float) -> float:
    return abs(math.log(rep / src)) if rep > 0 else math.inf


def spread(
    got: list[tuple[float, float, float]], f: Figure, now: dict[str, float], say: bool = True
) -> dict[str, Any]:
    """One figure's spread and what the rule makes of it: the ratio from the
    statement-replays whose source figure is large, then the floor each needs under
    that ratio; neither below its value now (see the module's docstring)."""
    tell = print if say else lambda *_: None
    large = [_log_ratio(s, r) for s, r, _ in got if s >= f.large]
    tell(f"\n{f.name} a call ({f.unit}), {len(got)} statement-replays:")
    tell(_row(f"|ln(r/s)|, source >= {f.large:g}", large, lambda v: f"{v:.3f}"))
    for low in sorted({_decade(s) for s, _, _ in got}):
        apart = [abs(r - s) for s, r, _ in got if _decade(s) == low]
        where = f"[{low:g}, {low * 10:g})" if low else "0"
        tell(_row(f"|r-s|, source {where}", apart, lambda v: f"{v:.3g}"))
    ratio_p99 = math.exp(quantile(large, 0.99)) if large else None
    ratio = max(now[f.ratio], tenth_up(ratio_p99)) if ratio_p99 else now[f.ratio]
    needed = [0.0 if within(s, r, ratio, 0.0) else abs(r - s) for s, r, _ in got]
    floor_p99 = quantile(needed, 0.99) if needed else None
    out: dict[str, Any] = {"n": len(got), "n_large": len(large), "ratio_p99": ratio_p99}
    out |= {"ratio": ratio, "floor_p99": floor_p99}
    share = now.get("misses_share", 0.0)
    if f.name == "blocks_read":  # the share now in force: does it lower the floor?
        rest = [0.0 if n < share * b else n for n, (_, _, b) in zip(needed, got, strict=True)]
        out["floor_p99_alone"] = floor_p99
        out["floor_p99_with_share"] = quantile(rest, 0.99) if rest else None
        out["share_needed"] = bool(rest) and max(
            now[f.floor], digit_up(quantile(rest, 0.99))
        ) < max(now[f.floor], digit_up(floor_p99 or 0.0))
        if out["share_needed"]:
            floor_p99 = out["floor_p99"] = out["floor_p99_with_share"]
    floor = max(now[f.floor], digit_up(floor_p99)) if floor_p99 is not None else now[f.floor]
    out["floor"] = floor
    if f.name == "blocks_read":
        beyond = sorted(n / b for n, (_, _, b) in zip(needed, got, strict=True) if n >= floor)
        let = [x for x in beyond if x < share]
        tell(
            f"  the floor needed with the share of {share:g} of the source's blocks a call, "
            f"p99 {out['floor_p99_with_share']:.3g}, without {out['floor_p99_alone']:.3g}: "
            f"the share {'is' if out['share_needed'] else 'is not'} needed; {len(beyond)} "
            f"need more than the floor {floor:g}, {len(let)} of them under the share"
            + (f" (needing {let[0]:.2%} to {let[-1]:.2%} of their blocks)" if let else "")
        )
    tell(
        f"  the rule: x{ratio:g} (p99 {ratio_p99 or math.nan:.3g}, now x{now[f.ratio]:g}), "
        f"floor {floor:g} (the floor each needs under x{ratio:g}: p99 "
        f"{floor_p99 if floor_p99 is not None else math.nan:.3g}; now {now[f.floor]:g})"
    )
    return out


def analyse(replays: list[dict[str, Any]], now: dict[str, float]) -> dict[str, Any]:
    """Each figure's spread, the thresholds the rule gives, and what passes under the
    thresholds now and the rule's."""
    print("\nreplays (their verdicts, on every reason):")
    for name in dict.fromkeys(r["source"] for r in replays):
        said = [r.get("fidelity") or "error" for r in replays if r["source"] == name]
        print(f"  {name}: {', '.join(said)}")
    done = [r for r in replays if r.get("statements")]
    print(f"{sum(len(r['statements']) for r in done)} statement-replays in {len(done)} replays")
    print("left out of a figure's spread (left_out), with their figures:")
    for r in done:
        for s in r["statements"]:
            why = {f.name: left_out(s, f.name) for f in FIGURES}
            if any(why.values()):
                shown = ", ".join(
                    f"{f.name} {s['replay_' + f.name]:.3g}/{s['source_' + f.name]:.3g}"
                    for f in FIGURES
                )
                which = ", ".join(k for k, v in why.items() if v)
                print(
                    f"  {r['source']} #{r['repeat']} {s['name']} ({which}): "
                    f"{next(v for v in why.values() if v)}; replay/source {shown}"
                )
    figures = {f.name: spread(pairs(done, f), f, now) for f in FIGURES}
    everything = {f.name: spread(pairs(done, f, False), f, now, say=False) for f in FIGURES}
    rule = {**now}
    for f in FIGURES:
        rule |= {f.ratio: figures[f.name]["ratio"], f.floor: figures[f.name]["floor"]}
    if not figures["blocks_read"]["share_needed"]:
        rule["misses_share"] = 0.0
    print("\n| threshold | now | p99 of the faithful replays (nothing left out) | the rule | n |")
    print("|---|---|---|---|---|")
    for f in FIGURES:
        fig, every = figures[f.name], everything[f.name]
        print(
            f"| {f.ratio} | {now[f.ratio]:g} | {fig['ratio_p99'] or math.nan:.3g} "
            f"({every['ratio_p99'] or math.nan:.3g}) | {rule[f.ratio]:g} | {fig['n_large']} |"
        )
        print(
            f"| {f.floor} | {now[f.floor]:g} | {fig['floor_p99'] or 0:.3g} "
            f"({every['floor_p99'] or 0:.3g}) | {rule[f.floor]:g} | {fig['n']} |"
        )
    print(f"| misses_share | {now.get('misses_share', 0):g} | | {rule['misses_share']:g} | |")
    counted = {}
    judged = [
        [s for s in r["statements"] if not all(left_out(s, f.name) for f in FIGURES)] for r in done
    ]
    for label, t in (("now", now), ("the rule", rule)):
        each = sum(_passes(s, t) for statements in judged for s in statements)
        whole = sum(all(_passes(s, t) for s in statements) for statements in judged)
        counted[label] = {"statements": each, "replays": whole}
        print(
            f"{label}: {each} of {sum(map(len, judged))} statement-replays within every bound "
            f"(their figures not left out), {whole} of {len(done)} replays (on these figures)"
        )
    return {"figures": figures, "everything": everything, "rule": rule, "passes": counted}


def _passes(s: dict[str, Any], t: dict[str, float]) -> bool:
    for f in FIGURES:
        judged = None if left_out(s, f.name) else _judged(s, f)
        if judged is None:
            continue
        src, rep, blocks = judged
        floor = t[f.floor]
        if f.name == "blocks_read":
            floor = max(floor, t.get("misses_share", 0.0) * blocks)
        if not within(src, rep, t[f.ratio], floor):
            return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sources", default="all", help="comma-separated names, or all")
    parser.add_argument("--repeats", type=int, default=4, help="replays of each source")
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--table-size", type=int, default=100_000)
    parser.add_argument("--threads", type=int, default=4, help="sysbench's, the shop's workers")
    parser.add_argument("--rounds", type=int, default=2, help="pgopt's --reps")
    parser.add_argument("--seconds", type=int, default=8, help="pgopt's --duration")
    parser.add_argument("--sample", type=int, default=8, help="seconds of watch or capture")
    parser.add_argument("--seed", type=int, default=44)
    parser.add_argument("--wait-load", type=float, help="first wait for a 1-minute load below this")
    parser.add_argument("--pgopt-arg", action="append", default=[], help="one more argument")
    parser.add_argument("--keep", type=Path, help="a folder to keep each pgopt run's folder in")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--from-json", type=Path, action="append", help="analyse kept runs (pooled), run nothing"
    )
    args = parser.parse_args()
    print("command:", " ".join(["bench/fidelity_spread.py", *sys.argv[1:]]), flush=True)
    if args.from_json:  # several: their replays pooled
        replays = []
        for path in args.from_json:
            kept = json.loads(path.read_text())
            print(f"{path}: {' '.join(kept['command'])}; load {kept['load']}")
            replays += kept["replays"]
        analyse(replays, dict(THRESHOLDS))
        return
    names = [s.name for s in sources()]
    chosen = [s for s in sources() if args.sources == "all" or s.name in args.sources.split(",")]
    if not chosen:
        raise SystemExit(f"--sources: none of {', '.join(names)}")
    stop_cleanly_on_signals()
    loads = {"start": load()}
    print(f"load average (1, 5, 15 min): {loads['start']}", flush=True)
    if args.wait_load:
        loads["waited"] = wait_for_load(args.wait_load)
        print(loads["waited"], flush=True)
    started = time.monotonic()
    replays = measure(args, chosen)
    loads["end"] = load()
    print(f"\nload average at the end: {loads['end']} ({time.monotonic() - started:.0f} s)")
    analysed = analyse(replays, dict(THRESHOLDS))
    if args.json:
        document = {"command": sys.argv, "load": loads, "replays": replays, **analysed}
        args.json.write_text(json.dumps(document, indent=2))


if __name__ == "__main__":
    main()
