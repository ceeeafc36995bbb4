"""The replay of a log capture's transactions as pgbench scripts (pure).

Each captured transaction is the sequence of its replayed statements (a DELETE
of a key followed by the INSERT of it is one step, with one key). Transactions
of one kind (between BEGIN and COMMIT or alone) and one number of steps make one
script, weighted by how many the capture holds: step by step, the statement the
capture ran at that step, drawn by how often it did. Where every transaction of
a length is the same sequence, the script is that sequence; where the same
sequence runs on one of several tables (sysbench picks a table per step), each
step draws the table as the capture's calls did. At most MAX_SCRIPTS scripts:
the rarest lengths are left out, and their share said. Inside a transaction, the
application's own time between its statements (the capture's median for that
script, from 1 ms a gap on: less is the round trip pgbench makes too) is replayed
as pgbench's \\sleep, spread over its gaps: the
transaction holds its locks and its session as long as the application's did. A
script of fewer than MIN_KIND captured transactions takes the median of
all the capture's instead: one or two transactions' gaps are no estimate (a kind
seen once in a sysbench capture had 4.4 s between its statements, where the other
1,317 had under a millisecond; replayed, its \\sleep held a client and its rows
for 4.4 s each of the fifteen times a run drew it, and the replay ran at a third
of its rate).
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass

from ..markup import comment
from ..source.capture import MIN_KIND, Capture
from ..words import plural
from .scripts import Block, Choice, ScriptText, pick, scaled, weights_of

MAX_SCRIPTS = 100  # pgbench takes at most 128 scripts
# a transaction's time between two of its statements below this is the round trip
# pgbench makes too; from it on, the application's own work inside the transaction
THINK_MIN_MS = 1.0


@dataclass(frozen=True)
class Steps:
    """How the replay runs a capture's statements: its blocks by queryid; DELETE
    blocks whose next statement, when it inserts the key they deleted, goes with
    them (delete name -> the INSERT's block, with the key); the INSERT's block
    when it runs alone (a new key)."""

    blocks: dict[str, Block]  # queryid -> block
    pairs: dict[str, Block]  # DELETE block name -> its paired INSERT block
    alone: dict[str, Block]  # INSERT block name -> the block it runs alone


@dataclass(frozen=True)
class CapturedScripts:
    scripts: tuple[ScriptText, ...]
    transactions: int  # replayed, of the capture's
    left_out: int  # transactions of lengths past MAX_SCRIPTS, or with nothing replayed
    statements_per_transaction: float
    think_ms: float = 0.0  # the replayed transactions' median time between statements

    @property
    def shape(self) -> str:
        """How the replay groups its statements, in words."""
        left = (
            f" ({self.left_out:,} left out: rarer lengths, or no statement replayed)"
            if self.left_out
            else ""
        )
        think = (
            f"; inside them the application's own time between statements, "
            f"{self.think_ms:.3g} ms a transaction, as \\sleep"
            if self.think_ms
            else ""
        )
        return (
            f"transactions as the log capture ran them: {plural(len(self.scripts), 'script')}, "
            "one per kind and length of transaction, each step the statement the capture "
            f"ran there, drawn by how often it did; {self.transactions:,} of its "
            f"{self.transactions + self.left_out:,} transactions{left}{think}"
        )


def _steps(queryids: tuple[str, ...], steps: Steps) -> tuple[Choice, ...]:
    names = [steps.blocks[q] for q in queryids if q in steps.blocks]
    out: list[Choice] = []
    i = 0
    while i < len(names):
        here = names[i]
        paired = steps.pairs.get(here.name)
        if paired is not None and i + 1 < len(names) and names[i + 1].name == paired.name:
            out.append(Choice(f"{here.name}_{paired.name}", 0, here.lines + paired.lines, 2))
            i += 2
            continue
        own = steps.alone.get(here.name, here)
        out.append(Choice(here.name, 0, own.lines))
        i += 1
    return tuple(out)


def captured_scripts(capture: Capture, steps: Steps) -> CapturedScripts:
    """One script per kind and length of the capture's transactions."""
    groups: dict[tuple[bool, int], list[Counter[Choice]]] = {}
    counts: Counter[tuple[bool, int]] = Counter()
    thinks: dict[tuple[bool, int], list[float]] = {}
    left_out = 0
    for transaction, count in capture.transactions.items():
        sequence = _steps(transaction.queryids, steps)
        if not sequence:
            left_out += count
            continue
        key = (transaction.explicit, len(sequence))
        positions = groups.setdefault(key, [Counter() for _ in sequence])
        for position, choice in zip(positions, sequence, strict=True):
            position[choice] += count
        counts[key] += count
        thinks.setdefault(key, []).extend(capture.think.get(transaction, ()))
    kept = counts.most_common(MAX_SCRIPTS)
    left_out += sum(counts.values()) - sum(n for _, n in kept)
    scripts: list[ScriptText] = []
    statements = think_total = 0.0
    everyone = [t for samples in thinks.values() for t in samples]
    for (explicit, length), count in kept:
        header = f"{plural(count, 'captured transaction')} of {plural(length, 'step')}"
        header += ", between BEGIN and COMMIT" if explicit else ", each statement alone"
        lines = ["BEGIN;"] if explicit else []
        think = _think(thinks[(explicit, length)], everyone)
        pause = _pause(think, length) if explicit and think / (length + 1) >= THINK_MIN_MS else []
        if pause:
            think_total += think * count
            header += f"; {think:.3g} ms of the application's own time between statements"
        for position in groups[(explicit, length)]:
            items = [Choice(c.name, n, c.lines, c.statements) for c, n in position.most_common()]
            lines += pause
            lines += pick(items, weights_of(items))
            per_step = sum(c.statements * n for c, n in position.items())
            statements += count * per_step / sum(position.values())
        lines += [*pause, "COMMIT;"] if explicit else []
        lines.insert(0, comment(header))
        name = f"{'tx' if explicit else 'alone'}{length:02d}"
        scripts.append(ScriptText(name, count, "\n".join(lines) + "\n"))
    replayed = sum(n for _, n in kept)
    weights = scaled([s.weight for s in scripts])
    return CapturedScripts(
        tuple(ScriptText(s.name, w, s.text) for s, w in zip(scripts, weights, strict=True)),
        replayed,
        left_out,
        statements / replayed if replayed else 0.0,
        think_total / replayed if replayed else 0.0,
    )


def _think(own: list[float], everyone: list[float]) -> float:
    """A script's time between statements: its transactions' median, or, from fewer
    than MIN_KIND of them, the whole capture's."""
    samples = own if len(own) >= MIN_KIND else everyone
    return statistics.median(samples) if samples else 0.0


def _pause(think_ms: float, length: int) -> list[str]:
    """The application's time inside a transaction of `length` steps, spread evenly
    over its gaps: after BEGIN, between the steps, before COMMIT."""
    return [f"\\sleep {round(think_ms * 1000 / (length + 1))} us"]
