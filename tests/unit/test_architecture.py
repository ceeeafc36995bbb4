"""The code's layout holds what ARCHITECTURE.md says of it: a module whose docstring
calls it pure is in the import contract that forbids it I/O (make typecheck runs
import-linter on both contracts), and no module outside the command line imports it."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
PYPROJECT = SRC.parent / "pyproject.toml"
# "(pure)", "(pure records)", "(pure: text in, ...)", or a sentence that opens with "Pure"
SAYS_PURE = re.compile(r"\(pure\b|(?:^|[.:]\s+)Pure\b")


def _modules() -> dict[str, str]:
    """Every pgopt module's dotted name and its docstring."""
    out = {}
    for path in sorted((SRC / "pgopt").rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = ast.get_docstring(ast.parse(path.read_text())) or ""
    return out


def _pure_contract() -> list[str]:
    config = tomllib.loads(PYPROJECT.read_text())
    contracts = config["tool"]["importlinter"]["contracts"]
    (pure,) = [c for c in contracts if c["name"].startswith("Pure modules")]
    return list(pure["source_modules"])


def test_every_module_that_says_it_is_pure_is_held_to_it() -> None:
    contract = _pure_contract()

    def held(name: str) -> bool:
        return any(name == m or name.startswith(m + ".") for m in contract)

    loose = [name for name, doc in _modules().items() if SAYS_PURE.search(doc) and not held(name)]
    assert not loose, f"say they are pure, not in the import contract: {loose}"


def test_the_contract_names_only_modules_that_exist() -> None:
    modules = _modules()
    assert [m for m in _pure_contract() if m not in modules] == []


def test_every_module_says_what_it_is_for() -> None:
    assert [name for name, doc in _modules().items() if not doc.strip()] == []


def test_the_command_line_is_imported_by_nothing_but_its_entry_point() -> None:
    importing = []
    for path in (SRC / "pgopt").rglob("*.py"):
        if "cli" in path.relative_to(SRC / "pgopt").parts or path.name == "__main__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and "cli" in node.module.split("."):
                importing.append(str(path))
    assert importing == []
