"""Plans as people read them and as pgopt compares them (pure, on EXPLAIN's JSON):
one line a node ("Index Scan using orders_customer_idx on public.orders"), its
shape (the lines without costs, to tell a changed plan from the same one), its
total cost, and the indexes it uses."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

Plan = dict[str, Any]


def nodes(plan: Plan, depth: int = 0) -> Iterator[tuple[int, Plan]]:
    """Every node of `plan` with its depth, the top one first."""
    yield depth, plan
    for child in plan.get("Plans", ()):
        yield from nodes(child, depth + 1)


def node_line(node: Plan) -> str:
    """One node as EXPLAIN's text format names it, without figures."""
    kind = str(node.get("Node Type", "?"))
    if node.get("Strategy") in ("Sorted", "Hashed", "Mixed") and kind == "Aggregate":
        kind = {"Sorted": "GroupAggregate", "Hashed": "HashAggregate"}.get(
            node["Strategy"], "MixedAggregate"
        )
    joins = (node.get("Join Type") and "Join" in kind) or kind == "Nested Loop"
    if joins and node.get("Join Type", "Inner") != "Inner":
        kind = f"{kind} {node['Join Type']}"
    if node.get("Scan Direction") == "Backward":
        kind = f"{kind} Backward"
    parts = [kind]
    if "Index Name" in node:
        parts.append(f"using {node['Index Name']}")
    if "Relation Name" in node:
        relation = node["Relation Name"]
        if node.get("Schema"):
            relation = f"{node['Schema']}.{relation}"
        parts.append(f"on {relation}")
    return " ".join(parts)


def plan_lines(plan: Plan, *, costs: bool = True) -> list[str]:
    """The plan as indented lines, with each node's estimated rows and total cost."""
    out = []
    for depth, node in nodes(plan):
        line = ("  " * depth) + ("-> " if depth else "") + node_line(node)
        if costs:
            line += f"  (cost={node.get('Total Cost', 0):.2f} rows={node.get('Plan Rows', 0)})"
        for key in ("Index Cond", "Filter", "Hash Cond", "Sort Key"):
            value = node.get(key)
            if value:
                shown = ", ".join(value) if isinstance(value, list) else str(value)
                line += f"\n{'  ' * (depth + 1)}   {key}: {shown}"
        out.append(line)
    return out


def shape(plan: Plan) -> tuple[str, ...]:
    """What makes two plans the same plan: each node's kind, index and relation, and
    its depth (costs and row estimates left out)."""
    return tuple(f"{depth}:{node_line(node)}" for depth, node in nodes(plan))


def total_cost(plan: Plan) -> float:
    return float(plan.get("Total Cost", 0.0))


def indexes_used(plan: Plan) -> tuple[str, ...]:
    """The indexes the plan scans, in plan order, each once."""
    names: list[str] = []
    for _depth, node in nodes(plan):
        name = node.get("Index Name")
        if name and name not in names:
            names.append(str(name))
    return tuple(names)


def scans(plan: Plan) -> list[str]:
    """The plan's scans of tables and indexes, one line each, in plan order (a bitmap
    scan is two: the table's heap and the index it reads)."""
    return [node_line(n) for _d, n in nodes(plan) if "Relation Name" in n or "Index Name" in n]


def change_summary(before: Plan, after: Plan) -> str | None:
    """How the plan's scans changed ("Seq Scan on public.orders → Index Scan using
    orders_customer_idx on public.orders"), or None when its shape did not."""
    if shape(before) == shape(after):
        return None
    scans_before, scans_after = scans(before), scans(after)
    gone = [s for s in scans_before if s not in scans_after]
    new = [s for s in scans_after if s not in scans_before]
    if gone or new:
        return f"{'; '.join(gone) or '(no scan)'} → {'; '.join(new) or '(no scan)'}"
    return f"{node_line(before)} → {node_line(after)}"
