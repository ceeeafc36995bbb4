"""The results store: one folder per run, written so that nothing is lost.

`pgopt-runs/<UTC timestamp>-<lab>/` holds result.json (written atomically:
a temporary file, then a rename), the raw pgbench outputs under raw/, and the
reports. Listing and loading stored runs needs no server; a loaded result is
checked against its schema and read into records by model/codec.py, older
files too.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .errors import UsageError
from .model.codec import DecodeError, decode, encode
from .model.result import LabResult

RESULT_FILE = "result.json"
DEFAULT_RUNS_DIR = Path("pgopt-runs")


def utc_stamp(now: datetime | None = None) -> str:
    return (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")


def new_run_dir(lab: str, out: Path | None, runs_dir: Path = DEFAULT_RUNS_DIR) -> Path:
    """Create the folder of a new run: `out` as given, or a fresh timestamped one."""
    if out is None:
        base = runs_dir / f"{utc_stamp()}-{lab}"
        path, n = base, 1
        while path.exists():
            n += 1
            path = base.with_name(f"{base.name}-{n}")
    else:
        path = out
        if path.exists() and any(path.iterdir()):
            raise UsageError(f"--out {path} exists and is not empty")
    try:
        (path / "raw").mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"cannot create run folder {path}: {e.strerror}") from e
    # absolute: pgbench runs in its scripts' folder and writes its logs here
    return path.resolve()


def write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file in the same folder and a rename: never half a file."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp's 0600 would hide reports from others
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_result(run_dir: Path, result: LabResult) -> Path:
    path = run_dir / RESULT_FILE
    write_atomic(path, json.dumps(encode(result), indent=2, default=str) + "\n")
    return path


def load_document(run_dir: Path) -> dict[str, Any]:
    """A stored result.json as its JSON document, checked against its schema."""
    document, _ = _load(run_dir)
    return document


def load_result(run_dir: Path) -> LabResult:
    """A stored result as records, older files too."""
    _, result = _load(run_dir)
    return result


def _load(run_dir: Path) -> tuple[dict[str, Any], LabResult]:
    path = run_dir / RESULT_FILE if run_dir.is_dir() else run_dir
    try:
        document = json.loads(path.read_text())
    except FileNotFoundError:
        if path.parent.joinpath("raw").is_dir():
            raise UsageError(
                f"{run_dir}: no {RESULT_FILE}: the run stopped before any of its runs "
                "finished (raw/ holds what pgbench wrote)"
            ) from None
        raise UsageError(f"{run_dir}: no {RESULT_FILE} (not a pgopt run folder)") from None
    except json.JSONDecodeError as e:
        raise UsageError(f"{path}: not valid JSON: {e}") from e
    try:
        return document, decode(document)
    except DecodeError as e:
        raise UsageError(f"{path}: {e}") from None


@dataclass(frozen=True)
class StoredRun:
    path: Path
    result: LabResult


def list_runs(runs_dir: Path = DEFAULT_RUNS_DIR) -> list[StoredRun]:
    """Stored runs under `runs_dir`, oldest first; unreadable folders are skipped."""
    if not runs_dir.is_dir():
        return []
    runs: list[StoredRun] = []
    for result_file in sorted(runs_dir.glob(f"*/{RESULT_FILE}")):
        try:
            runs.append(StoredRun(result_file.parent, load_result(result_file.parent)))
        except UsageError:
            continue
    runs.sort(key=lambda r: r.result.started_at)
    return runs


def save_raw(run_dir: Path, name: str, text: str) -> None:
    (run_dir / "raw" / name).write_text(text)
