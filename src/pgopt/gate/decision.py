"""The CI gate: whether a comparison of two runs should fail a CI job, and why (pure).

It reads a comparison (report/compare.py) and says, step by step, whether B
passes against A; it renders that as terminal lines, JUnit XML and a Markdown
table for $GITHUB_STEP_SUMMARY. The command line prints and writes them
(cli/gate_output.py).

The rule, for each compared step (B/A is the geometric-mean ratio of the metric):

- It FAILS when its verdict is `slower` (the test of B/A rejects "no change" at
  5% after Benjamini-Hochberg across the compared steps, so its 95% interval
  excludes 1) AND its estimated slowdown is at least the threshold
  (`--fail-on-regression PCT`): 1 - B/A for a higher-is-better metric (tx/s),
  B/A - 1 for a lower-is-better one (seconds).
- `inconclusive` and `n/a` fail only when a decision is required
  (`--require-decision`).
- `no-change` and `faster` never fail; nor does `slower` without a threshold.
- With neither option the gate is off and fails nothing.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass

from ..analysis.verdicts import ratio_of
from ..markup import md_text as text
from ..model.result import Ratio
from ..model.verdict import Verdict
from ..report.compare import Comparison
from ..report.fmt import format_ratio, format_verdict_word
from ..words import plural

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


@dataclass(frozen=True)
class Gate:
    """When a comparison fails CI; `fail_on_regression` is a fraction (0.05 for 5%)."""

    fail_on_regression: float | None = None
    require_decision: bool = False

    @property
    def on(self) -> bool:
        return self.fail_on_regression is not None or self.require_decision

    @property
    def description(self) -> str:
        """'fails a step slower by ≥ 5%; a decision is required (inconclusive fails)'."""
        if not self.on:
            return "off"
        parts = []
        if self.fail_on_regression is not None:
            parts.append(f"fails a step slower by ≥ {_threshold(self.fail_on_regression)}")
        if self.require_decision:
            parts.append("a decision is required (inconclusive fails)")
        return "; ".join(parts)


@dataclass(frozen=True)
class GateItem:
    """One compared step as the gate sees it: B/A with its 95% interval, and the verdict."""

    name: str
    ratio: Ratio | None  # None when a side had no positive figures to compare
    verdict: Verdict
    higher_is_better: bool

    @property
    def slowdown(self) -> float | None:
        """How much worse B is than A as a fraction: 0.09 for 9% slower (negative: better)."""
        if self.ratio is None:
            return None
        if self.higher_is_better:
            return 1 - self.ratio.median
        return self.ratio.median - 1


@dataclass(frozen=True)
class StepGate:
    """The gate's decision on one step, and why."""

    item: GateItem
    failed: bool
    reason: str  # '' when the verdict says it all (faster, no-change)

    @property
    def line(self) -> str:
        """'select_only: slower ×0.91 [0.88–0.94] in 4 rounds, 9.0% slower ≥ 5%: FAIL':
        the rounds say how long the decision took (sequential looks stop at the first
        look where every comparison is decided)."""
        item = self.item
        verdict = format_verdict_word(item.ratio, str(item.verdict))
        took = ""
        if item.ratio is not None and item.ratio.rounds:
            took = f" in {plural(item.ratio.rounds, 'round')}"
        reason = f", {self.reason}" if self.reason else ""
        return f"{item.name}: {verdict} {format_ratio(item.ratio)}{took}{reason}: {self.outcome}"

    @property
    def outcome(self) -> str:
        return "FAIL" if self.failed else "pass"


@dataclass(frozen=True)
class GateResult:
    gate: Gate
    steps: tuple[StepGate, ...]

    @property
    def failed(self) -> bool:
        return any(step.failed for step in self.steps)

    def lines(self) -> list[str]:
        return [step.line for step in self.steps]

    def message(self) -> str:
        """One line for the error a failed gate ends with."""
        failed = [step.item.name for step in self.steps if step.failed]
        names = ", ".join(failed)
        return f"the CI gate failed for {len(failed)} of {plural(len(self.steps), 'step')}: {names}"


def items_of(comparison: Comparison) -> tuple[GateItem, ...]:
    """The gate's view of every step compared in both runs."""
    return tuple(
        GateItem(
            name=step.name,
            ratio=ratio_of(step.decision) if step.decision else None,
            verdict=step.decision.verdict if step.decision else Verdict.NOT_APPLICABLE,
            higher_is_better=comparison.higher_is_better,
        )
        for step in comparison.steps
    )


def evaluate(gate: Gate, items: Iterable[GateItem]) -> GateResult:
    """Apply the rule of this module's docstring to each step."""
    return GateResult(gate, tuple(_judge(gate, item) for item in items))


def _judge(gate: Gate, item: GateItem) -> StepGate:
    if not item.verdict.decided:
        if gate.require_decision:
            return StepGate(item, True, "no decision, and one is required")
        return StepGate(item, False, "no decision")
    if item.verdict is not Verdict.SLOWER:
        return StepGate(item, False, "")
    threshold, slowdown = gate.fail_on_regression, item.slowdown
    if threshold is None or slowdown is None:
        return StepGate(item, False, "no regression threshold")
    if slowdown >= threshold or math.isclose(slowdown, threshold):  # 1 - 0.9 < 0.1
        return StepGate(item, True, f"{slowdown:.1%} slower ≥ {_threshold(threshold)}")
    return StepGate(item, False, f"{slowdown:.1%} slower < {_threshold(threshold)}")


def _threshold(fraction: float) -> str:
    """The threshold as it was given: 0.05 -> '5%', 0.025 -> '2.5%'."""
    return f"{fraction * 100:g}%"


def junit_xml(result: GateResult, suite_name: str) -> str:
    """One <testsuite>, one <testcase> per step, a <failure> for each failing one."""
    suite = ET.Element(
        "testsuite",
        name=_xml_text(suite_name),
        tests=str(len(result.steps)),
        failures=str(sum(step.failed for step in result.steps)),
        errors="0",
    )
    for step in result.steps:
        case = ET.SubElement(
            suite, "testcase", name=_xml_text(step.item.name), classname=_xml_text(suite_name)
        )
        if step.failed:
            failure = ET.SubElement(case, "failure", message=_xml_text(step.reason))
            failure.text = _xml_text(step.line)
    ET.indent(suite)
    return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"


def _xml_text(value: str) -> str:
    """Text XML 1.0 can hold: the control characters it forbids become U+FFFD."""
    return _NOT_XML.sub("\ufffd", value)


def step_summary_markdown(result: GateResult, title: str) -> str:
    """A short Markdown table for $GITHUB_STEP_SUMMARY: step, B/A, verdict, gate."""
    status = "❌ failed" if result.failed else "✅ passed"
    lines = [
        f"### {text(title)}: {status}",
        "",
        f"CI gate: {text(result.gate.description)}.",
        "",
        "| step | B / A | verdict | gate |",
        "| --- | ---: | --- | --- |",
    ]
    for step in result.steps:
        item = step.item
        verdict = format_verdict_word(item.ratio, str(item.verdict))
        gate = f"{step.outcome}: {step.reason}" if step.reason else step.outcome
        gate = f"❌ {gate}" if step.failed else gate
        cells = (item.name, format_ratio(item.ratio), verdict, gate)
        lines.append("| " + " | ".join(text(cell) for cell in cells) + " |")
    return "\n".join(lines) + "\n"
