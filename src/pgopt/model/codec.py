"""Between the result records and result.json: the one place that knows the schema
name and how older files differ.

`encode` turns a `LabResult` into the JSON document; `decode` reads a stored
document back, after checking it against schemas/lab-result-1.json. Older files
lack the fields added since (verdicts, plan, observer, waits...): the records give
those defaults, so every reader sees one shape. Unknown keys, from a newer pgopt,
are ignored. cattrs does the structuring; a field declared `absent()` is left out
of the JSON when it has no value, and a ratio without evidence is written as its
estimate and interval alone, as result.json always did.
"""

from __future__ import annotations

import json
from dataclasses import fields, is_dataclass
from functools import cache
from importlib.resources import files
from typing import Any

from cattrs import Converter
from cattrs.errors import BaseValidationError
from cattrs.gen import make_dict_unstructure_fn, override
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from .absent import OMIT_IF_NONE
from .result import LabResult, Ratio

SCHEMA = "pgopt.lab-result/1"
SCHEMA_FILE = "lab-result-1.json"  # in pgopt/schemas/


class DecodeError(ValueError):
    """A document that is not a readable pgopt.lab-result/1."""


@cache
def _converter() -> Converter:
    converter = Converter()

    def unstructure_record(cls: type) -> Any:
        omitted: dict[str, Any] = {
            f.name: override(omit_if_default=True)
            for f in fields(cls)
            if f.metadata.get(OMIT_IF_NONE)
        }
        return make_dict_unstructure_fn(cls, converter, **omitted)

    converter.register_unstructure_hook_factory(is_dataclass, unstructure_record)
    ratio = make_dict_unstructure_fn(Ratio, converter)

    def unstructure_ratio(r: Ratio) -> dict[str, Any]:
        # a ratio without evidence (a step against itself) is written as it always was
        if r.rounds is None:
            return {"median": r.median, "ci95": list(r.ci95)}
        out: dict[str, Any] = ratio(r)
        return out

    converter.register_unstructure_hook(Ratio, unstructure_ratio)
    return converter


def encode(result: LabResult) -> dict[str, Any]:
    """The result.json document of a result."""
    data: dict[str, Any] = _converter().unstructure(result)
    return data


def decode(data: object) -> LabResult:
    """A stored document as records; DecodeError says what is wrong with it."""
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise DecodeError(f"not a {SCHEMA} result")
    problem = schema_problem(data)
    if problem is not None:
        raise DecodeError(f"not a valid {SCHEMA} result: {problem}")
    try:
        return _converter().structure(data, LabResult)
    except BaseValidationError as e:  # the schema let through what the records cannot hold
        raise DecodeError(f"not a readable {SCHEMA} result: {_first(e)}") from None


def _first(error: BaseException) -> str:
    while isinstance(error, BaseValidationError) and error.exceptions:
        error = error.exceptions[0]
    return str(error)


@cache
def _validator() -> Draft202012Validator:
    schema = json.loads(files("pgopt.schemas").joinpath(SCHEMA_FILE).read_text())
    return Draft202012Validator(schema)


def schema_problem(document: dict[str, Any]) -> str | None:
    """The first way `document` breaks schemas/lab-result-1.json, or None."""
    error = best_match(_validator().iter_errors(document))
    if error is None:
        return None
    where = "/".join(map(str, error.absolute_path)) or "the top level"
    return f"{where}: {error.message}"
