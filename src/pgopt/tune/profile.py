"""Tuning profiles as data (tune/profiles/*.toml) and what they derive (pure).

A profile names intermediate figures (`[vars]`, evaluated in order) and settings,
each a value template in the lab expression language (`"{ram_mb // 4}MB"`), an
optional condition (`when`), and the reason for it, which may quote figures too.
The inputs are the machine's and the server's facts (`Inputs.names`): memory and
CPUs as the container sees them, connections, server version, database size
(each with whether it is known: given, or read from the user's server, rather than
a throwaway server's stand-in), the server's platform (`linux`, `mac`, `windows`),
the storage class and what the storage probe measured (and its filesystem: `cow`
for btrfs and zfs), the size of /dev/shm, and the database type pgtune asks for.
`derive` turns a profile and inputs into settings with reasons; which of them the
server accepts is settings_check.py's question.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib.resources import files

from ..errors import LabError
from ..lab.expressions import evaluate, expand
from ..lab.table import Table

STORAGE = ("hdd", "ssd", "san", "nvme")
DB_TYPES = ("web", "oltp", "dw", "mixed", "desktop")
PLATFORMS = ("linux", "mac", "windows")  # pgtune's; another is none of them


@dataclass(frozen=True)
class Inputs:
    """What a profile may use, each figure with where it came from."""

    ram_mb: int
    cpus: int
    connections: int
    version: int  # the server's major version
    db_mb: int
    storage: str  # one of STORAGE
    db_type: str  # one of DB_TYPES (pgtune's question)
    disk_free_mb: int
    read_us: float  # a random 8 kB read at queue depth 1
    seq_page_us: float  # an 8 kB page read in sequence
    read_gain: float  # random reads served at queue depth 8 over depth 1
    fsync_us: float  # a WAL flush (pg_test_fsync's fdatasync)
    connections_known: bool  # given, or the user's server's max_connections
    db_known: bool  # given, or the user's server's databases
    platform: str = "linux"  # the server's: linux, mac, windows or other
    shm_mb: int = 0  # the size of /dev/shm (0: unknown)
    filesystem: str = ""  # of the data disk, where probed

    def names(self) -> dict[str, float]:
        out: dict[str, float] = {
            "ram_mb": self.ram_mb,
            "cpus": self.cpus,
            "connections": self.connections,
            "version": self.version,
            "db_mb": self.db_mb,
            "disk_free_mb": self.disk_free_mb,
            "read_us": round(self.read_us, 1),
            "seq_page_us": round(self.seq_page_us, 1),
            "random_cost": round(self.read_us / max(self.seq_page_us, 0.1), 2),
            "read_gain": round(self.read_gain, 2),
            "fsync_us": round(self.fsync_us, 1),
            "connections_known": float(self.connections_known),
            "db_known": float(self.db_known),
            "shm_mb": self.shm_mb,
            "cow": float(self.filesystem in ("btrfs", "zfs")),
        }
        # pgtune's "Total Data Size": less than RAM, 1x to 3x RAM (its default, taken
        # when the size is not known), more than 3x RAM
        out["db_less"] = float(self.db_known and self.db_mb < self.ram_mb)
        out["db_greater"] = float(self.db_known and self.db_mb > 3 * self.ram_mb)
        out.update({p: float(p == self.platform) for p in PLATFORMS})
        out.update({s: float(s == self.storage) for s in STORAGE})
        out.update({t: float(t == self.db_type) for t in DB_TYPES})
        return out


@dataclass(frozen=True)
class SettingRule:
    name: str
    value: str
    reason: str
    when: str | None = None


@dataclass(frozen=True)
class Profile:
    name: str
    title: str
    description: str
    source: str
    variables: tuple[tuple[str, str], ...]
    settings: tuple[SettingRule, ...]


@dataclass(frozen=True)
class Derived:
    name: str
    value: str
    reason: str


def read_profile(name: str, text: str, where: str) -> Profile:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise LabError(f"{where}: {e}") from None
    t = Table(raw, where)
    rules = []
    for i, item in enumerate(t.array("setting")):
        s = Table(item, f"{where}: setting {i + 1}")
        rules.append(
            SettingRule(
                name=str(s.text("name")),
                value=str(s.text("value")),
                reason=str(s.text("reason")),
                when=s.text("when", None),
            )
        )
        s.done()
    profile = Profile(
        name=name,
        title=str(t.text("title")),
        description=str(t.text("description")),
        source=str(t.text("source")),
        variables=tuple((str(k), str(v)) for k, v in t.table("vars", {}).items()),
        settings=tuple(rules),
    )
    t.done()
    return profile


@cache
def profiles() -> dict[str, Profile]:
    """The profiles shipped with pgopt, by name (pgopt, pgtune)."""
    folder = files(__package__).joinpath("profiles")
    out = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            name = entry.name.removesuffix(".toml")
            out[name] = read_profile(name, entry.read_text(), f"tune/profiles/{entry.name}")
    return out


def derive(profile: Profile, inputs: Inputs) -> tuple[Derived, ...]:
    """The settings `profile` gives for `inputs`, in its order, each with its reason."""
    names = inputs.names()
    for var, expression in profile.variables:
        names[var] = _evaluate(expression, names, f"{profile.name}: vars.{var}")
    out = []
    for rule in profile.settings:
        where = f"{profile.name}: {rule.name}"
        if rule.when is not None and not _evaluate(rule.when, names, where):
            continue
        try:
            value = expand(rule.value, names, decimals=2)
            reason = expand(rule.reason, names, decimals=2)
        except LabError as e:  # a FigureError: it divides by zero for these inputs
            raise LabError(f"{where}: {e}") from None
        out.append(Derived(rule.name, value, reason))
    return tuple(out)


def _evaluate(expression: str, names: dict[str, float], where: str) -> float:
    try:
        return evaluate(expression, names)
    except LabError as e:
        raise LabError(f"{where}: {e}") from None
