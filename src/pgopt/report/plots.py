"""The figures of report.html: what each one draws from a result (medians,
throughput over time, latency, waits, phases, monitored series). Each function
takes the result and returns a `Plot` (figure.py makes it SVG), or None when
there is nothing to draw.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from matplotlib.axes import Axes
from matplotlib.ticker import MaxNLocator

from ..model.result import LabResult, Run
from . import fields
from .figure import Plot, color, figure

OTHER_COLOR = "#d0d0d0"
# Wait events take their hue from their class (Tableau 20 pairs), so that the
# eye groups IO, locks and so on; step colours are not reused for events.
WAIT_CLASS_COLORS = {
    "CPU": ("#59a14f", "#8cd17d"),
    "IO": ("#4e79a7", "#a0cbe8"),
    "LWLock": ("#b07aa1", "#d4a6c8"),
    "Lock": ("#e15759", "#ff9d9a"),
    "Client": ("#79706e", "#bab0ac"),
    "IPC": ("#499894", "#86bcb6"),
    "Timeout": ("#9d7660", "#d7b5a6"),
}
WAIT_OTHER_CLASSES = ("#f1ce63", "#b6992d", "#fabfd2", "#d37295", "#f28e2b", "#ffbe7d")
MAX_WAIT_EVENTS = 8


def all_plots(result: LabResult) -> list[Plot]:
    """Every figure this run has data for, in reading order."""
    makers: list[Callable[[LabResult], Plot | None]] = [
        medians,
        throughput,
        latency,
        waits,
        phases,
    ]
    plots = [plot for make in makers if (plot := make(result)) is not None]
    return plots + monitored(result)


def _step_axis(ax: Axes, names: list[str]) -> None:
    ax.set_xticks(range(len(names)), names)
    if len(names) > 4 or max((len(n) for n in names), default=0) > 14:
        for label in ax.get_xticklabels():
            label.set_rotation(20)
            label.set_horizontalalignment("right")


def medians(result: LabResult) -> Plot:
    steps = result.steps
    metric = result.metric
    base = steps[0].metric.median
    names = [s.name for s in steps]
    values = [s.metric.median for s in steps]
    errors = [
        [max(0.0, v - s.metric.ci95[0]) for v, s in zip(values, steps, strict=True)],
        [max(0.0, s.metric.ci95[1] - v) for v, s in zip(values, steps, strict=True)],
    ]
    with figure("medians", 3.6) as (ax, out):
        x = list(range(len(steps)))
        ax.bar(x, values, color=[color(i) for i in x], width=0.6)
        ax.errorbar(x, values, yerr=errors, fmt="none", ecolor="#333333", capsize=5, lw=1.2)
        article = {
            i: base * s.reported.ratio_vs_baseline
            for i, s in enumerate(steps)
            if s.reported and s.reported.ratio_vs_baseline is not None
        }
        if article:
            ax.hlines(
                list(article.values()),
                [i - 0.38 for i in article],
                [i + 0.38 for i in article],
                colors="#222222",
                linestyles="dashed",
                lw=1.6,
                label="article's ratio × our baseline",
            )
            ax.legend(loc="upper left")
        for i, step in enumerate(steps):
            if step.ratio_vs_previous is None:  # a baseline: no ratio to show
                continue
            top = max(values[i] + errors[1][i], article.get(i, 0.0))
            ax.annotate(
                f"×{step.ratio_vs_baseline.median:.2f}",
                (i, top),
                textcoords="offset points",
                xytext=(0, 4),
                ha="center",
                fontsize=9,
            )
        _step_axis(ax, names)
        ax.set_ylabel(fields.unit_header(result) or "each step's own unit")
        ax.set_ylim(bottom=0)
        ax.margins(y=0.12)
        ax.grid(axis="x", visible=False)
    direction = "higher" if metric.higher_is_better else "lower"
    return Plot(
        "medians",
        f"Median {metric.name} per step",
        f"Bars: median of the runs ({direction} is better); whiskers: the 95% interval of "
        "their geometric mean; label: ratio to the baseline"
        + ("; dashed line: the article's ratio applied to our baseline." if article else "."),
        out[0],
    )


MIN_SERIES_POINTS = 5  # a line of fewer seconds shows no course worth a plot


def _rate_over_time(run: Run) -> tuple[list[float], list[float]]:
    """A run's per-second pgbench rate in the step's own unit (logins, orders: pgbench's
    transactions times what the run counts per transaction)."""
    per_tx = run.value / run.tps if run.tps else 1.0
    points = run.progress or ()
    return [p[0] for p in points], [p[1] * per_tx for p in points]


def throughput(result: LabResult) -> Plot | None:
    series = []
    for index, step in enumerate(result.steps):
        runs = [r for r in step.runs if len(r.progress or ()) >= MIN_SERIES_POINTS]
        if runs:
            median = step.metric.median
            typical = min(runs, key=lambda r: abs(r.value - median))
            series.append((index, step.name, typical, runs))
    if not series:
        return None
    # the legend sits beside the axes: give it room when a lab has many steps
    legend_rows = len(series) if len(series) <= 18 else (len(series) + 1) // 2
    with figure("throughput", max(3.6, 0.9 + 0.24 * legend_rows)) as (ax, out):
        for index, name, typical, runs in series:
            for run in runs:
                t, tps = _rate_over_time(run)
                bold = run is typical
                ax.plot(
                    t,
                    tps,
                    color=color(index),
                    lw=1.8 if bold else 1.0,
                    alpha=1.0 if bold else 0.3,
                    marker="o" if len(t) <= 12 else None,
                    markersize=3,
                    label=name if bold else None,
                )
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("seconds into the run")
        units = {result.steps[i].metric.unit or result.metric.unit for i, _, _, _ in series}
        ax.set_ylabel(units.pop() if len(units) == 1 else "per second, each step's unit")
        ax.set_ylim(bottom=0)
        ax.legend(
            loc="upper left",
            bbox_to_anchor=(1.0, 1.0),
            ncols=1 if len(series) <= 18 else 2,
            fontsize=9 if len(series) <= 18 else 8,
        )
    return Plot(
        "throughput",
        "Throughput over time",
        "Each second of each detailed run (by default the first round's; runs of at "
        f"least {MIN_SERIES_POINTS} s), from pgbench's transaction log (sampled: each "
        "second's lines over the sampling rate) in the step's unit: the run nearest the "
        "step's median in bold, the other runs faint. A dip or a climb means the run was "
        "not steady.",
        out[0],
    )


def latency(result: LabResult) -> Plot | None:
    rows = [(s.name, lat) for s in result.steps if (lat := fields.latency(s))]
    if not rows:
        return None
    keys = ("p50", "p95", "p99")
    shades = ("#4e79a7", "#f28e2b", "#e15759")
    width = 0.26
    with figure("latency", 3.0) as (ax, out):
        for k, (key, shade) in enumerate(zip(keys, shades, strict=True)):
            xs = [i + (k - 1) * width for i in range(len(rows))]
            ys = [float(lat.get(key) or 0.0) for _, lat in rows]
            ax.bar(xs, ys, width=width, color=shade, label=key)
        _step_axis(ax, [name for name, _ in rows])
        ax.set_ylabel("ms")
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
        ax.grid(axis="x", visible=False)
    return Plot(
        "latency",
        "Latency percentiles per step",
        "Transaction latency in ms over the detailed runs of a step (by default the "
        "first round's): median (p50), p95 and p99.",
        out[0],
    )


def _stacked(
    key: str,
    rows: list[tuple[str, dict[str, float]]],
    order: list[str],
    colors: dict[str, str],
    xlabel: str,
) -> str:
    """Horizontal stacked bars: one bar per step, one segment per part, first step on top."""
    with figure(key, 1.2 + 0.42 * len(rows)) as (ax, out):
        y = list(range(len(rows)))
        left = [0.0] * len(rows)
        for part in order:
            widths = [parts.get(part, 0.0) for _, parts in rows]
            ax.barh(y, widths, left=left, color=colors[part], label=part, height=0.6)
            left = [a + b for a, b in zip(left, widths, strict=True)]
        ax.set_yticks(y, [name for name, _ in rows])
        ax.invert_yaxis()
        ax.set_xlabel(xlabel)
        ax.grid(axis="y", visible=False)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=9)
    return out[0]


def waits(result: LabResult) -> Plot | None:
    rows = [(s.name, dict(w)) for s in result.steps if (w := fields.wait_shares(s))]
    if not rows:
        return None
    weight: dict[str, float] = {}
    for _, shares in rows:
        for event, share in shares.items():
            weight[event] = max(weight.get(event, 0.0), share)
    top = sorted(weight, key=lambda e: -weight[e])[:MAX_WAIT_EVENTS]
    percent_rows = []
    for name, shares in rows:
        parts = {event: 100 * shares.get(event, 0.0) for event in top}
        rest = 100 * sum(v for e, v in shares.items() if e not in top)
        if rest > 0:
            parts["other"] = rest
        percent_rows.append((name, parts))
    order = top + (["other"] if any("other" in p for _, p in percent_rows) else [])
    colors = _wait_colors(top) | {"other": OTHER_COLOR}
    svg = _stacked("waits", percent_rows, order, colors, "% of sampled backend time")
    return Plot(
        "waits",
        "Where the time went: wait events per step",
        "Share of the sampled time of pgbench's backends per wait event (CPU = active "
        f"with no wait event); the {MAX_WAIT_EVENTS} largest events, the rest as 'other'.",
        svg,
    )


def _wait_colors(events: list[str]) -> dict[str, str]:
    """A colour per event: its class's family, shades taken in turn within a class."""
    taken: dict[str, int] = {}
    out = {}
    for event in events:
        wait_class = event.split(":", 1)[0]
        family_key = wait_class if wait_class in WAIT_CLASS_COLORS else ""
        family = WAIT_CLASS_COLORS.get(family_key, WAIT_OTHER_CLASSES)
        n = taken.get(family_key, 0)
        taken[family_key] = n + 1
        out[event] = family[n % len(family)]
    return out


def phases(result: LabResult) -> Plot | None:
    rows = [(s.name, {p.name: p.seconds for p in s.phases}) for s in result.steps if s.phases]
    if not rows:
        return None
    order = list(dict.fromkeys(name for _, parts in rows for name in parts))
    colors = {name: color(i) for i, name in enumerate(order)}
    svg = _stacked("phases", rows, order, colors, "seconds (median per phase)")
    return Plot(
        "phases",
        "Seconds per phase",
        "Median seconds of each timed phase per step, stacked: shorter is faster.",
        svg,
    )


def monitored(result: LabResult) -> list[Plot]:
    """One figure per series a step's `monitor` sampled every second (replication
    lag, queue depth, backends): each step's run nearest its median."""
    names = sorted(
        {name for step in result.steps for run in step.runs for name in run.monitor or {}}
    )
    plots = []
    for name in names:
        key = "monitor-" + re.sub(r"[^A-Za-z0-9_-]", "_", name)
        with figure(key, 3.2) as (ax, out):
            for index, step in enumerate(result.steps):
                runs = [r for r in step.runs if (r.monitor or {}).get(name)]
                if not runs:
                    continue
                typical = min(runs, key=lambda r: abs(r.value - step.metric.median))
                points = (typical.monitor or {})[name]
                ax.plot(
                    [p[0] for p in points],
                    [p[1] for p in points],
                    color=color(index),
                    marker="o" if len(points) <= 30 else None,
                    markersize=3,
                    label=step.name,
                )
            ax.set_xlabel("seconds into the run")
            ax.set_ylabel(name)
            ax.set_ylim(bottom=0)
            ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=9)
        plots.append(
            Plot(
                key,
                f"Monitored every second: {name}",
                f"The lab's `{name}` query, read every second during each step's run "
                "nearest its median; the step's facts give its median and maximum over "
                "all runs.",
                out[0],
            )
        )
    return plots
