"""report.html: one self-contained page with the run's tables and plots.

A pure function of the result.json document. The page fetches nothing: styles
are inline, plots are inline SVG, and a Content-Security-Policy forbids any
network access or script. Every piece of text from a lab file or the database
goes through `html.escape`.
"""

from __future__ import annotations

from html import escape
from typing import Any

from .. import __version__
from . import fields
from .fmt import (
    format_article,
    format_changes,
    format_checks,
    format_interval,
    format_metric,
    format_ms,
    format_rate,
    format_ratio,
    format_value,
    verdict_reference,
)
from .plots import Plot, all_plots, color

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

STYLE = """
:root { --fg: #1f2328; --muted: #656d76; --line: #d0d7de; --bg-soft: #f6f8fa;
  --green: #1a7f37; --red: #cf222e; --amber: #9a6700; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--fg); background: #fff;
  font: 15px/1.5 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; }
main { max-width: 1080px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 36px 0 12px; padding-bottom: 6px;
  border-bottom: 1px solid var(--line); }
h3 { font-size: 16px; margin: 0 0 8px; }
p { margin: 6px 0; }
.lede { color: var(--muted); max-width: 860px; }
.meta { color: var(--muted); font-size: 14px; }
.banner { border-left: 4px solid var(--amber); background: #fff8c5; padding: 8px 14px;
  margin: 12px 0; }
.banner.bad { border-color: var(--red); background: #ffebe9; }
table { border-collapse: collapse; margin: 8px 0; font-size: 14px; }
th, td { border: 1px solid var(--line); padding: 5px 10px; text-align: left;
  vertical-align: top; }
th { background: var(--bg-soft); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
code, pre { font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
code { background: var(--bg-soft); padding: 1px 5px; border-radius: 4px; }
pre { background: var(--bg-soft); padding: 12px 14px; border-radius: 6px; overflow-x: auto; }
pre code { background: none; padding: 0; }
.caption { color: var(--muted); font-size: 13px; }
.verdict { font-weight: 600; }
.verdict.faster, .ok { color: var(--green); }
.verdict.slower, .failed { color: var(--red); }
.verdict.no-change { color: var(--amber); }
.verdict.n\\/a { color: var(--muted); font-weight: 400; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px;
  margin-right: 6px; }
.plots { display: grid; gap: 20px; }
figure { margin: 0; border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; }
figure h3 { margin-bottom: 6px; }
figure svg { display: block; width: 100%; height: auto; }
figcaption { color: var(--muted); font-size: 13px; margin-top: 6px; }
.step { border: 1px solid var(--line); border-radius: 8px; padding: 14px 18px; margin: 14px 0; }
.step dl { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 8px 0; }
.step dt { color: var(--muted); }
.step dd { margin: 0; }
.warning { color: var(--amber); }
ul.checks { list-style: none; padding: 0; margin: 0; }
details { margin: 10px 0; }
summary { cursor: pointer; color: var(--muted); }
footer { margin-top: 40px; color: var(--muted); font-size: 13px; }
"""


def e(value: object) -> str:
    """Escaped text: the one way lab and database text reaches the page."""
    return escape(str(value), quote=True)


def render_html(result: dict[str, Any]) -> str:
    title = f"{result['lab']}: {result['title']}"
    body = [
        *_header(result),
        "<h2>Summary</h2>",
        *_summary(result),
        *_phase_table(result),
        *_phase_waits_table(result),
        *_listed("Client sweeps", fields.sweep_lines(result)),
        *_listed("Skipped steps", fields.skipped_lines(result)),
        *_plots(all_plots(result)),
        "<h2>Steps</h2>",
        *(_step(i, step) for i, step in enumerate(result["steps"])),
        *_article(result),
        "<h2>Environment</h2>",
        *_environment(result),
        "<h2>Reproduce</h2>",
        f"<pre><code>{e(result.get('command') or '')}</code></pre>",
        f"<footer>Rendered by pgopt {e(__version__)} from result.json "
        f"({e(result['schema'])}). This page loads nothing from the network.</footer>",
    ]
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>pgopt · {e(title)}</title>",
            f"<style>{STYLE}</style>",
            "</head>",
            "<body>",
            "<main>",
            *body,
            "</main>",
            "</body>",
            "</html>",
            "",
        ]
    )


def _header(result: dict[str, Any]) -> list[str]:
    meta = [e(fact) for fact in fields.run_facts(result)]
    if result.get("seed"):
        meta.append(f"article <code>{e(result['seed'])}</code>")
    out = [f"<h1>{e(result['lab'])}: {e(result['title'])}</h1>"]
    if result.get("description"):
        out.append(f'<p class="lede">{e(result["description"])}</p>')
    out.append(f'<p class="meta">{" · ".join(meta)}</p>')
    if not result.get("complete", True):
        error = result.get("error") or "stopped early"
        out.append(
            f'<p class="banner"><strong>Incomplete run</strong> ({e(error)}): '
            "only the runs that finished are shown.</p>"
        )
    if not result.get("passed", True):
        out.append(
            '<p class="banner bad"><strong>A check failed</strong>: '
            "see the checks column and the steps below.</p>"
        )
    return out


def _verdict(verdict: str, reference: str | None = None) -> str:
    against = f" vs {e(reference)}" if reference else ""
    return f'<span class="verdict {e(verdict)}">{e(verdict)}</span>{against}'


def _summary(result: dict[str, Any]) -> list[str]:
    unit = result["metric"]["unit"]
    rows = []
    for i, step in enumerate(result["steps"]):
        checks, ok = format_checks(step)
        rows.append(
            "<tr>"
            f'<td><span class="swatch" style="background:{color(i)}"></span>'
            f"<strong>{e(step['name'])}</strong></td>"
            f"<td><code>{e(format_changes(step))}</code></td>"
            f'<td class="num">{e(format_metric(step["metric"]))}</td>'
            f'<td class="num">{e(format_ratio(step["ratio_vs_baseline"]))}</td>'
            f"<td>{_verdict(step['verdict_vs_previous'], verdict_reference(result, i))}</td>"
            f'<td class="num">{e(format_article(step))}</td>'
            f'<td class="{"ok" if ok else "failed"}">{e(checks)}</td>'
            "</tr>"
        )
    return [
        "<table>",
        "<thead><tr><th>step</th><th>what changed</th>"
        f'<th class="num">{e(unit)}</th><th class="num">× baseline</th><th>verdict</th>'
        '<th class="num">article</th><th>checks</th></tr></thead>',
        "<tbody>",
        *rows,
        "</tbody>",
        "</table>",
        '<p class="caption">Median ± 95% interval half-width; × baseline with its 95% '
        "interval; verdict vs the step it derives from, called only when the interval "
        "excludes 1.</p>",
    ]


def _phase_table(result: dict[str, Any]) -> list[str]:
    names, rows = fields.phase_table(result)
    if not rows:
        return []

    def cell(c: tuple[float, str] | None) -> str:
        text = e(fields.phase_cell(c))
        return f'<span class="verdict {e(c[1])}">{text}</span>' if c else text

    def article(value: str) -> str:
        return f'<span class="caption">{e(value)}</span>'

    table = []
    for r in rows:
        table.append(
            [f"<strong>{e(r.step)}</strong>", *(cell(c) for c in r.cells), format_rate(r.total)]
        )
        if r.article is not None:
            table.append([article("article"), *(article(v) for v in fields.article_cells(r))])
    header = ["step", *(e(n) for n in names), "total"]
    return [
        "<h3>Seconds per phase</h3>",
        _table(header, table, set(range(1, len(names) + 2))),
        f'<p class="caption">{e(fields.PHASE_LEGEND)}</p>',
    ]


def _phase_waits_table(result: dict[str, Any]) -> list[str]:
    names, rows = fields.phase_waits_table(result)
    if not rows:
        return []
    table = [
        [f"<strong>{e(r.step)}</strong>", *("<br>".join(map(e, c)) if c else "—" for c in r.cells)]
        for r in rows
    ]
    return [
        "<h3>Where each phase spent its time</h3>",
        _table(["step", *(e(n) for n in names)], table),
        f'<p class="caption">{e(fields.PHASE_WAITS_LEGEND)}</p>',
    ]


def _listed(title: str, items: list[str]) -> list[str]:
    if not items:
        return []
    return [
        f"<p><strong>{e(title)}:</strong></p><ul>{''.join(f'<li>{e(i)}</li>' for i in items)}</ul>"
    ]


def _plots(plots: list[Plot]) -> list[str]:
    out = ["<h2>Plots</h2>", '<div class="plots">']
    for plot in plots:
        out += [
            f'<figure id="plot-{e(plot.key)}">',
            f"<h3>{e(plot.title)}</h3>",
            plot.svg,
            f"<figcaption>{e(plot.caption)}</figcaption>",
            "</figure>",
        ]
    return [*out, "</div>"]


def _table(header: list[str], rows: list[list[str]], numeric: set[int] | None = None) -> str:
    """A table from already-escaped cells; columns in `numeric` are right-aligned."""
    numeric = numeric or set()

    def cell(tag: str, i: int, value: str) -> str:
        cls = ' class="num"' if i in numeric else ""
        return f"<{tag}{cls}>{value}</{tag}>"

    head = "".join(cell("th", i, h) for i, h in enumerate(header))
    body = "".join(
        "<tr>" + "".join(cell("td", i, v) for i, v in enumerate(row)) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _step(index: int, step: dict[str, Any]) -> str:
    metric = step["metric"]
    low, high = metric["ci95"]
    samples = ", ".join(format_rate(v) for v in metric["samples"])
    changed = f"<code>{e(format_changes(step))}</code>"
    if step.get("clients"):
        changed += f" · {e(step['clients'])} clients"
    items = [
        ("what changed", changed),
        (
            e(metric["unit"]),
            f"<strong>{format_rate(metric['median'])}</strong> median, 95% interval "
            f"{format_interval(low, high)} ({len(metric['samples'])} runs: {samples})",
        ),
        ("× baseline", e(format_ratio(step["ratio_vs_baseline"]))),
    ]
    if step.get("ratio_vs_previous"):
        items.append(
            (
                f"× {e(step.get('compared_with') or 'previous')}",
                f"{e(format_ratio(step['ratio_vs_previous']))} "
                f"{_verdict(step['verdict_vs_previous'])}",
            )
        )
    lat = fields.latency(step)
    if lat:
        items.append(("latency (ms)", " · ".join(f"{k} {format_ms(v)}" for k, v in lat.items())))
    items += [("bottleneck", f"<strong>{e(why)}</strong>") for why in fields.why_lines(step)]
    waits = fields.wait_shares(step)
    if waits:
        items.append(("waits", " · ".join(f"{e(ev)} {share:.0%}" for ev, share in waits)))
    checks = step.get("checks") or []
    if checks:
        marks = "".join(
            f'<li class="{"ok" if c["passed"] else "failed"}">'
            f"{'✔' if c['passed'] else '✘'} {e(c['name'])}"
            + (f": {e(c['detail'])}" if c.get("detail") and not c["passed"] else "")
            + "</li>"
            for c in checks
        )
        items.append(("checks", f'<ul class="checks">{marks}</ul>'))
    items += [("warning", f'<span class="warning">⚠ {e(w)}</span>') for w in fields.warnings(step)]
    out = [
        f'<section class="step" id="step-{e(step["name"])}">',
        f'<h3><span class="swatch" style="background:{color(index)}"></span>'
        f"{index + 1}. {e(fields.step_label(step))}</h3>",
    ]
    if step.get("note"):
        out.append(f"<p>{e(step['note'])}</p>")
    out.append("<dl>" + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in items) + "</dl>")
    phases = fields.phases(step)
    if phases:
        rows = [
            [
                e(p.name),
                f"{p.seconds:.3f}",
                f"{p.ci95[0]:.3f}–{p.ci95[1]:.3f}" if p.ci95 else "—",
                e(p.why) or "—",
            ]
            for p in phases
        ]
        header = ["phase", "seconds (median)", "95% interval", "waits and WAL"]
        out.append(_table(header, rows, {1, 2}))
    step_facts = fields.facts(step)
    if step_facts:
        rows = [[e(k), f"<code>{e(v)}</code>"] for k, v in step_facts]
        out.append(_table(["fact", "value"], rows))
    out.append("</section>")
    return "\n".join(out)


def _article(result: dict[str, Any]) -> list[str]:
    rows = fields.article_rows(result)
    if not rows:
        return []
    cells = [
        [
            e(row.step),
            f"{format_rate(row.value)} {e(row.unit)}",
            f"×{row.article_ratio:.2f}" if row.article_ratio is not None else "—",
            e(format_ratio(row.our_ratio)),
            e(row.note) or "—",
        ]
        for row in rows
    ]
    out = ["<h2>The article's figures beside ours</h2>"]
    if result.get("seed"):
        out.append(f"<p>Article: <code>{e(result['seed'])}</code></p>")
    out += [
        _table(
            ["step", "article", "article × its baseline", "ours × baseline", "article's setup"],
            cells,
            {1, 2, 3},
        ),
        '<p class="caption">Compare ratios, not absolute figures: '
        "the article ran on other hardware.</p>",
    ]
    return out


def _environment(result: dict[str, Any]) -> list[str]:
    target = dict(result.get("target", {}))
    settings = target.pop("non_default_settings", None) or {}
    machine = result.get("machine", {})
    params = result.get("params", {})
    items = [
        (
            "server",
            f"{e(target.get('kind', '?'))} PostgreSQL {e(target.get('server_version', '?'))}",
        ),
        ("machine", ", ".join(map(e, fields.machine_parts(machine))) or "—"),
    ]
    if params:
        items.append(
            (
                "parameters",
                ", ".join(
                    f"{e(k)} <code>{e(format_value(v))}</code>"
                    for k, v in params.items()
                    if v is not None
                ),
            )
        )
    out = [
        '<div class="step"><dl>'
        + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in items)
        + "</dl></div>"
    ]
    if target:
        rows = [[e(k), f"<code>{e(format_value(v))}</code>"] for k, v in target.items()]
        out.append(
            f"<details><summary>Target</summary>{_table(['field', 'value'], rows)}</details>"
        )
    if settings:
        rows = [[f"<code>{e(k)}</code>", f"<code>{e(v)}</code>"] for k, v in settings.items()]
        out.append(
            f"<details><summary>Non-default server settings ({len(settings)})</summary>"
            f"{_table(['setting', 'value'], rows)}</details>"
        )
    return out
