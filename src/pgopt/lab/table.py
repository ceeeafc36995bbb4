"""A TOML table being validated: typed reads with defaults, errors that name the file,
the step and the field, and a refusal of fields nobody read (typos)."""

from __future__ import annotations

import tomllib
from enum import StrEnum
from pathlib import Path
from typing import Any, TypeVar

from ..errors import LabError

MISSING: Any = object()
E = TypeVar("E", bound=StrEnum)


class Table:
    """A TOML table being validated; remembers which keys were read."""

    def __init__(self, data: Any, where: str) -> None:
        if not isinstance(data, dict):
            raise LabError(f"{where}: expected a table")
        self.data: dict[str, Any] = data
        self.where = where
        self.read: set[str] = set()

    def _get(self, key: str, default: Any) -> Any:
        self.read.add(key)
        if key in self.data:
            return self.data[key]
        if default is MISSING:
            raise LabError(f"{self.where}: field '{key}' is required")
        return default

    def raw(self, key: str) -> Any:
        """The value of `key` as TOML gave it (None when absent), for fields of many shapes."""
        return self._get(key, None)

    def fail(self, key: str, message: str) -> LabError:
        return LabError(f"{self.where}: field '{key}': {message}")

    def text(self, key: str, default: Any = MISSING) -> Any:
        value = self._get(key, default)
        if value is not default and not isinstance(value, str):
            raise self.fail(key, f"expected a string, got {value!r}")
        return value

    def choice(self, key: str, vocabulary: type[E], default: Any = MISSING) -> E:
        """One word of a closed vocabulary (an enum), or the error that lists them."""
        value = self._get(key, default)
        try:
            return vocabulary(value)
        except ValueError:
            words = ", ".join(vocabulary)
            raise self.fail(key, f"must be one of {words}, got {value!r}") from None

    def integer(self, key: str, default: Any = MISSING, minimum: int = 1) -> Any:
        value = self._get(key, default)
        if value is default:
            return value
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(key, f"expected an integer, got {value!r}")
        if value < minimum:
            raise self.fail(key, f"must be at least {minimum}, got {value}")
        return value

    def number(self, key: str, default: Any = MISSING) -> Any:
        value = self._get(key, default)
        if value is default:
            return value
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(key, f"expected a number, got {value!r}")
        if value <= 0:
            raise self.fail(key, f"must be positive, got {value}")
        return float(value)

    def flag(self, key: str, default: Any = MISSING) -> Any:
        value = self._get(key, default)
        if value is not default and not isinstance(value, bool):
            raise self.fail(key, f"expected true or false, got {value!r}")
        return value

    def array(self, key: str, default: Any = MISSING) -> Any:
        value = self._get(key, default)
        if value is default:
            return value
        if isinstance(value, str):
            return [value]
        if not isinstance(value, list):
            raise self.fail(key, f"expected a list, got {value!r}")
        return value

    def table(self, key: str, default: Any = MISSING) -> Any:
        value = self._get(key, default)
        if value is default:
            return value
        if not isinstance(value, dict):
            raise self.fail(key, f"expected a table, got {value!r}")
        return value

    def has(self, key: str) -> bool:
        return key in self.data

    def done(self) -> None:
        unknown = sorted(set(self.data) - self.read)
        if unknown:
            raise LabError(f"{self.where}: unknown field '{unknown[0]}'")


def read_toml(path: Path, missing: str) -> dict[str, Any]:
    """The tables of a TOML file; LabError with `missing` when there is no such file, or
    with the parser's line and column when it is not valid TOML."""
    try:
        return tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise LabError(missing) from None
    except tomllib.TOMLDecodeError as e:
        raise LabError(f"{path}: invalid TOML: {e}") from e


def file_field(t: Table, key: str, name: Any, folder: Path) -> Path:
    if not isinstance(name, str):
        raise t.fail(key, f"expected a file name, got {name!r}")
    path = (folder / name).resolve()
    if not path.is_file():
        raise t.fail(key, f"file {name!r} not found in {folder}")
    return path


def setup_field(t: Table, key: str, name: Any, folder: Path) -> Path:
    """A SQL file, or a folder holding a pg_dump archive in directory format (restored
    with pg_restore -j)."""
    if isinstance(name, str) and (folder / name / "toc.dat").is_file():
        return (folder / name).resolve()
    return file_field(t, key, name, folder)


def sql_text(t: Table, folder: Path) -> str:
    if t.has("file"):
        return file_field(t, "file", t.text("file"), folder).read_text()
    return str(t.text("sql"))
