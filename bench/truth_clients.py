"""The applications bench/replay_truth.py holds pgopt against, both written by others:
sysbench (its OLTP Lua scripts in a C client) and a Django web shop (bench/shop_load.py:
the ORM writes its SQL). Each prepares its data on the source, runs for some seconds
and says its own rate (transactions or requests a second), or runs in the background
while pgopt watches (how far pgopt's ratio is from theirs: bench/truth_goal.py)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

SHOP_LOAD = Path(__file__).resolve().parent / "shop_load.py"


class Client(Protocol):
    name: str

    def prepare(self) -> None: ...

    def rate(self, seconds: float) -> float: ...

    def start(self, seconds: float) -> subprocess.Popen[bytes]: ...


@dataclass(frozen=True)
class Sysbench:
    """sysbench's `workload` on the database `database` of the server at `port`."""

    port: int
    database: str
    workload: str
    tables: int
    table_size: int
    threads: int
    options: tuple[str, ...] = ()  # e.g. --range_size=1000
    secondary: bool = True  # its index on k, made at prepare
    name: str = "sysbench"

    def command(self, workload: str, command: str, *options: str) -> list[str]:
        return [
            "sysbench",
            "--db-driver=pgsql",
            "--pgsql-host=127.0.0.1",
            f"--pgsql-port={self.port}",
            "--pgsql-user=postgres",
            f"--pgsql-db={self.database}",
            f"--tables={self.tables}",
            f"--table-size={self.table_size}",
            *self.options,
            *options,
            workload,
            command,
        ]

    def prepare(self) -> None:
        # select_random_ranges has no prepare of its own: oltp_common's tables serve it
        secondary = f"--create_secondary={'on' if self.secondary else 'off'}"
        prepare = self.command("oltp_read_write", "prepare", secondary)
        subprocess.run(prepare, check=True, capture_output=True)

    def age(self, seconds: float) -> None:
        """sysbench's own updates, deletes and inserts for `seconds`: an aged source."""
        run = self.command("oltp_write_only", "run", f"--threads={self.threads}")
        subprocess.run([*run, f"--time={int(seconds)}"], check=True, capture_output=True)

    def rate(self, seconds: float) -> float:
        out = subprocess.run(
            self.command(
                self.workload, "run", f"--threads={self.threads}", f"--time={int(seconds)}"
            ),
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        match = re.search(r"transactions:\s+\d+\s+\(([\d.]+) per sec", out)
        if match is None:
            raise SystemExit(f"sysbench printed no transactions:\n{out}")
        return float(match.group(1))

    def start(self, seconds: float) -> subprocess.Popen[bytes]:
        run = self.command(self.workload, "run", f"--threads={self.threads}")
        return subprocess.Popen([*run, f"--time={int(seconds)}"], stdout=subprocess.DEVNULL)


@dataclass(frozen=True)
class Shop:
    """The Django shop of bench/shop/ on the database at `dsn`, `workers` processes."""

    dsn: str
    workers: int = 4
    name: str = "shop"

    def _command(self, *args: str) -> list[str]:
        return [sys.executable, str(SHOP_LOAD), "--dsn", self.dsn, *args]

    def prepare(self) -> None:
        subprocess.run(self._command("prepare"), check=True, capture_output=True)

    def rate(self, seconds: float) -> float:
        out = subprocess.run(
            self._command("run", "--workers", str(self.workers), "--seconds", str(seconds)),
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        return float(json.loads(out.strip().splitlines()[-1])["requests_per_s"])

    def start(self, seconds: float) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            self._command("run", "--workers", str(self.workers), "--seconds", str(seconds)),
            stdout=subprocess.DEVNULL,
        )
