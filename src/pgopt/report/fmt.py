"""Number formatting shared by every report, so all of them show the same figures."""

from __future__ import annotations

from ..model.result import LabResult, MetricSummary, Ratio, StepResult


def format_rate(value: float) -> str:
    """Compact, readable magnitudes: 987, 12.3k, 4.55M."""
    a = abs(value)
    if a >= 1e9:
        return f"{value / 1e9:.2f}G"
    if a >= 1e6:
        return f"{value / 1e6:.2f}M"
    if a >= 1e4:
        return f"{value / 1e3:.1f}k"
    if a >= 100:
        return f"{value:,.0f}"
    if a >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def format_metric(metric: MetricSummary) -> str:
    """'4,476 ±3%': the median and the run-to-run coefficient of variation."""
    med = metric.median
    cv = metric.cv
    if cv is None and len(metric.samples) > 1 and med:
        low, high = metric.ci95  # results written before cv
        cv = (high - low) / 2 / med
    return f"{format_rate(med)} ±{cv:.0%}" if cv is not None else format_rate(med)


def format_ratio(ratio: Ratio | None) -> str:
    """'×2.31 [2.20–2.45]'; '×2.31 (1 round)' where one round gives no interval."""
    if ratio is None:
        return "—"
    if ratio.rounds is not None and ratio.rounds < 2:
        return f"×{ratio.median:.2f} (1 round)"
    low, high = ratio.ci95
    return f"×{ratio.median:.2f} [{low:.2f}–{high:.2f}]"


def format_changes(step: StepResult) -> str:
    """A short human description of what a step changed, computed settings resolved."""
    parts: list[str] = []
    resolved = step.settings or {}
    for key, value in step.changes.items():
        if key == "settings":
            parts += [f"{k}={resolved.get(k, v)}" for k, v in value.items()]
        elif key == "mode":
            parts.append(f"-M {value}")
        elif key == "scripts":
            parts.append("scripts " + ", ".join(value))
        elif key == "schema":
            parts.append("schema " + ", ".join(value))
        elif key == "pgbench_args":
            parts.append(" ".join(value) or "no extra flags")
        elif key == "phases":
            parts.append("phases " + ", ".join(value))
        elif key == "standby_settings":
            parts += [f"standby {k}={v}" for k, v in value.items()]
        elif isinstance(value, dict):  # probe_args
            parts.append(f"{key} " + ", ".join(f"{k}={v}" for k, v in value.items()))
        elif isinstance(value, list):  # monitor
            parts.append(f"{key} " + ", ".join(str(v) for v in value))
        else:
            parts.append(f"{key}={value}")
    return "; ".join(parts) or "—"


def format_seconds(value: float) -> str:
    if value >= 60:
        minutes, seconds = divmod(value, 60)
        return f"{int(minutes)}m{seconds:04.1f}s"
    return f"{value:.2f}s"


def format_interval(low: float, high: float) -> str:
    """'1,394–1,522': a 95% interval in the same magnitudes as its median."""
    return f"{format_rate(low)}–{format_rate(high)}"


def format_ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.3g}"


def format_bytes(value: float) -> str:
    """'23.5 GiB', '1,010 MiB': three significant digits, never an exponent."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(value) < 1024:
            return f"{_three_digits(value)} {unit}"
        value /= 1024
    return f"{_three_digits(value)} TiB"


def _three_digits(value: float) -> str:
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def format_article(step: StepResult) -> str:
    """The article's figure for a step, with its ratio to the article's baseline: '312 (×2.10)'."""
    reported = step.reported
    if reported is None:
        return "—"
    text = format_rate(reported.value)
    if reported.ratio_vs_baseline is not None:
        text += f" (×{reported.ratio_vs_baseline:.2f})"
    return text


def format_checks(step: StepResult) -> tuple[str, bool]:
    """('2 ok', True), ('FAILED: name', False), or ('—', True) for a step without checks."""
    failed = [c for c in step.checks if not c.passed]
    if failed:
        return f"FAILED: {failed[0].name}", False
    return (f"{len(step.checks)} ok" if step.checks else "—"), True


def format_value(value: object) -> str:
    """A setting or parameter as text: lists comma-separated."""
    return ", ".join(map(str, value)) if isinstance(value, list | tuple) else str(value)


def format_verdict_word(ratio: Ratio | None, verdict: str, *, detectable: bool = True) -> str:
    """'faster', 'no-change', 'inconclusive (could detect ≥7%)' or 'inconclusive (needs 3
    rounds)': an inconclusive verdict says what this run could have seen (`detectable`
    False where the evidence beside it says so already)."""
    if verdict != "inconclusive" or ratio is None:
        return verdict
    if ratio.rounds is not None and ratio.rounds < 3:
        return "inconclusive (needs 3 rounds)"
    if ratio.detectable is None or not detectable:
        return verdict
    return f"inconclusive (could detect ≥{ratio.detectable:.0%})"


def is_a_baseline(step: StepResult) -> bool:
    """The lab's first step, or one that starts a family: compared with no step before it."""
    return step.ratio_vs_previous is None


def format_vs_baseline(result: LabResult, step: StepResult) -> str:
    """The summary's "× baseline" cell: the ratio alone (its verdict is not the row's),
    naming the baseline where it is not the lab's first step; '—' for a baseline."""
    if is_a_baseline(step):
        return "—"
    text = format_ratio(step.ratio_vs_baseline)
    first = result.steps[0].name if result.steps else None
    return f"{text} vs {step.baseline}" if step.baseline and step.baseline != first else text


def format_rounds(ratio: Ratio | None) -> str:
    """'6 rounds, paired, run-to-run CV 2.1%, could detect ≥3.4%': the evidence behind a
    comparison, where recorded ('' otherwise)."""
    if ratio is None or ratio.rounds is None:
        return ""
    parts = [f"{ratio.rounds} round{'s' if ratio.rounds != 1 else ''}"]
    parts.append("paired" if ratio.paired else "unpaired")
    if ratio.cv is not None:
        parts.append(f"run-to-run CV {ratio.cv:.1%}")
    if ratio.detectable is not None:
        parts.append(f"could detect ≥{ratio.detectable:.1%}")
    return ", ".join(parts)
