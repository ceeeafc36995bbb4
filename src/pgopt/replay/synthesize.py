"""A pgbench workload synthesized from the source's pg_stat_statements (pure).

The statements are those selection.py takes; each parameter is drawn per
transaction by the rule of draws.py.

Each statement becomes one block: its draws and its text, tagged with a comment
after its first word (`SELECT /* pgopt q01 */ ...`) by which the replay's
pg_stat_statements row is found again for the fidelity check. Blocks become
scripts as the source ran them: one statement a transaction where its commits
say so (autocommit), else transactions
of the source's statements-per-commit slots, each slot one statement drawn by its
calls, between BEGIN and COMMIT (drawn in advance: scripts.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..source.capture import Capture
from ..source.catalog import Catalog, SourceStatement, SourceWorkload
from ..source.seen import SeenValues
from ..source.shape import TELL_VALUES
from .captured_scripts import Steps, captured_scripts
from .param_binding import ColumnUse
from .parameters import Key, draws_of, new_key
from .replayable import Shape
from .scripts import Block, ScriptText, autocommit_scripts, block, choices, transaction_scripts
from .selection import Candidate, Selection, Skipped
from .values.draws import INTEGER_TYPES, Pool

TRANSACTION_MIN = 1.5  # statements per commit from which transactions are grouped
AUTOCOMMIT = "each statement its own transaction (one script each, weighted by its calls)"
NOT_SAMPLED = SourceWorkload(note="not sampled: each statement its own transaction")


@dataclass(frozen=True)
class Synthesis:
    blocks: tuple[Block, ...]
    scripts: tuple[ScriptText, ...]
    skipped: tuple[Skipped, ...]
    chosen_share: float
    capped: bool
    cover: float
    keys: tuple[Key, ...] = ()
    workload: SourceWorkload = NOT_SAMPLED
    shape: str = AUTOCOMMIT  # how the replay groups its statements into transactions
    source: str = "pg_stat_statements"  # where the workload comes from

    @property
    def replayed_share(self) -> float:
        return sum(b.time_share for b in self.blocks)

    @property
    def dropped_writes(self) -> tuple[Skipped, ...]:
        return tuple(k for k in self.skipped if k.writes)


def synthesize(
    selection: Selection,
    catalog: Catalog,
    pools: dict[tuple[str, str, str], Pool],
    workload: SourceWorkload = NOT_SAMPLED,
    everything: tuple[SourceStatement, ...] = (),
    capture: Capture | None = None,
    seen: SeenValues | None = None,
    written: dict[tuple[str, str, str], Pool] | None = None,
    unread: dict[str, str] | None = None,
) -> Synthesis:
    """The candidates whose parameters all have values, as blocks, then scripts.
    `everything`: the source's statements (ranges are sized from their neighbours');
    `capture`: a log capture, whose values are drawn and whose transactions are run
    as it shows them (captured_scripts.py); else `seen`: the values a watch saw its
    clients send, drawn for the statements it saw often enough; `written`: the keys of
    the rows written during the watch, which UPDATEs and DELETEs draw theirs from;
    `unread`: the tables whose written keys could not be read, and why."""
    kept: list[tuple[str, Candidate]] = []
    skipped = list(selection.skipped)
    called = capture.values if capture else seen.values if seen else {}
    called_from = "the log capture" if capture else "the watch"
    for candidate in selection.candidates:
        if capture is not None and candidate.statement.queryid not in capture.values:
            why = "not run while the log was captured"
            skipped.append(Skipped(candidate.statement, candidate.time_share, why))
            continue
        unbound = candidate.shape.unbound
        calls = called.get(candidate.statement.queryid, [])
        if unbound and not any(all(n in c for n in unbound) for c in calls):
            why = f"${unbound[0]} is compared with no column, and no captured call holds it"
            skipped.append(Skipped(candidate.statement, candidate.time_share, why))
            continue
        empty = _empty_column(candidate.shape, catalog, pools)
        if empty:
            skipped.append(
                Skipped(candidate.statement, candidate.time_share, f"no values of {empty}")
            )
            continue
        kept.append((f"q{len(kept) + 1:02d}", candidate))
    pairs = _pairs(kept, catalog)
    blocks: list[Block] = []
    alone: dict[str, Block] = {}  # a paired INSERT's block when it runs alone
    keys: dict[str, Key] = {}
    for name, candidate in kept:
        captured = called.get(candidate.statement.queryid)
        reuse, export, suffix = {}, None, ""
        for delete, (insert, n_delete, n_insert) in pairs.items():
            if name == insert:
                reuse[n_insert] = (
                    PAIR_KEY,
                    f"the key {delete}, the DELETE before it in the transaction, deleted: "
                    "their calls match, so each DELETE of a key is taken to be followed by "
                    "an INSERT of it (assumed; sysbench's pattern); sent with ON CONFLICT "
                    "DO NOTHING, as two clients that draw one key at once would collide",
                )
                if "on conflict" not in candidate.statement.query.lower():
                    suffix = " ON CONFLICT DO NOTHING"
            elif name == delete:
                export = (n_delete, PAIR_KEY)
        draws, notes = draws_of(
            candidate, catalog, pools, keys, everything, reuse, captured, called_from, written
        )
        blocks.append(block(name, candidate, draws, notes, export, suffix))
        if reuse and capture is not None:
            draws, notes = draws_of(
                candidate, catalog, pools, keys, everything, None, captured, called_from, written
            )
            alone[name] = block(name, candidate, draws, notes)
    skipped.sort(key=lambda s: s.time_share, reverse=True)
    paired = {delete: insert for delete, (insert, _, _) in pairs.items()}
    items = choices(blocks, paired) if capture is None else []
    per_commit = workload.statements_per_commit
    shape, source = AUTOCOMMIT, "pg_stat_statements"
    if capture is not None:
        by_name = {b.name: b for b in blocks}
        steps = Steps(
            {b.statement.queryid: b for b in blocks},
            {delete: by_name[insert] for delete, insert in paired.items()},
            alone,
        )
        replay = captured_scripts(capture, steps)
        scripts = replay.scripts
        workload = SourceWorkload(
            capture.statements_per_transaction,
            capture.sessions,
            capture.protocol,
            capture.note,
            per_commit_from=capture.origin,
            clients_from=f"{capture.origin} (its sessions at once)",
            values_from=f"{capture.origin} ({len(capture.values)} statements' calls)",
            database_share=capture.database_share,
            database_share_from=(
                f"{capture.origin}: its transactions' statements against the time between "
                "them (an upper bound: the time between transactions is not counted)"
                if capture.database_share is not None
                else ""
            ),
            host_busy=capture.host.busy_share if capture.host is not None else None,
            database_cpu_share=capture.host.database_share if capture.host is not None else None,
        )
        source = "pg_stat_statements and a log capture"
        shape = replay.shape
    elif not items:
        scripts = ()
    elif per_commit is not None and per_commit >= TRANSACTION_MIN:
        scripts, slots = transaction_scripts(items, per_commit)
        shape = (
            f"transactions of {slots} statements each, as the source's commits had on "
            f"average, each statement drawn by its share of the calls; {len(scripts)} such "
            f"transactions drawn in advance ({scripts[0].name}.sql to {scripts[-1].name}.sql), "
            "one picked a transaction"
        )
    else:
        scripts = autocommit_scripts(items)
    if capture is None:
        values_from = _values_from(workload, seen)
        if written:
            values_from += (
                "; the keys by which UPDATEs and DELETEs find their rows, from the rows "
                "written during the watch (source/written.py)"
            )
        for table, why in (unread or {}).items():
            values_from += (
                f"; the keys written to {table} during the watch were not read ({why}): "
                "its UPDATEs and DELETEs draw theirs from the statistics"
            )
        workload = replace(workload, values_from=values_from)
    return Synthesis(
        tuple(blocks),
        scripts,
        tuple(skipped),
        selection.chosen_share,
        selection.capped,
        selection.cover,
        tuple(keys.values()),
        workload,
        shape,
        source,
    )


def _values_from(workload: SourceWorkload, seen: SeenValues | None) -> str:
    """Where the replay's values come from, without a log capture."""
    statistics = "the data's statistics (pg_stats, or sampled rows), which know the values "
    statistics += "that exist, not which the clients ask for"
    if seen is not None and seen.values:
        return seen.note
    if workload.protocol == "prepared":
        return (
            f"{statistics}: the clients send prepared statements, whose values a watch "
            f"cannot see (a log capture holds them: {TELL_VALUES})"
        )
    if seen is not None and seen.calls:
        return f"{statistics}: {seen.note}"
    return (
        f"{statistics} (a log capture, --source-log, or a watch of clients that send "
        "their values as literals would tell)"
    )


PAIR_KEY = "pgopt_key"  # the variable a DELETE's key passes to its INSERT
PAIR_CALLS = 0.10  # a DELETE and an INSERT of one key: their calls within this


def _pairs(kept: list[tuple[str, Candidate]], catalog: Catalog) -> dict[str, tuple[str, int, int]]:
    """DELETEs of one key of a unique integer column, each with an INSERT of that column
    on the same table whose calls match: delete's name -> (insert's name, the key's $n
    in the DELETE, in the INSERT)."""
    out: dict[str, tuple[str, int, int]] = {}
    taken: set[str] = set()
    for name, c in kept:
        uses = [(n, u) for n, u in c.shape.params.items() if isinstance(u, ColumnUse)]
        if c.shape.kind != "delete" or len(uses) != 1 or uses[0][1].written:
            continue
        n_delete, use = uses[0]
        column = catalog.columns(use.table).get(use.column)
        if column is None or not column.unique or column.type not in INTEGER_TYPES:
            continue
        for other, d in kept:
            if other in taken or d.shape.kind != "insert":
                continue
            calls = c.statement.calls, d.statement.calls
            if abs(calls[0] - calls[1]) > PAIR_CALLS * max(calls):
                continue
            written = [
                n
                for n, u in d.shape.params.items()
                if isinstance(u, ColumnUse)
                and u.written
                and u.column == use.column
                and catalog.key(u.table) == catalog.key(use.table)
            ]
            if written:
                out[name] = (other, n_delete, written[0])
                taken.add(other)
                break
    return out


def _empty_column(
    shape: Shape, catalog: Catalog, pools: dict[tuple[str, str, str], Pool]
) -> str | None:
    for use in shape.params.values():
        if isinstance(use, ColumnUse) and not new_key(use, catalog):
            key = catalog.key(use.table)
            assert key is not None
            pool = pools.get((*key, use.column))
            if pool is None or pool.empty:
                return f"{use.table.column_shown(use.column)} (an empty table, or no statistics)"
    return None
