"""Each fresh step's data built once, into a template database; every timed run of
the step starts from it.

A fresh step's runs must each start from the same data: what one run wrote must
not be there for the next. Rebuilding the data before every run costs the whole
build again each time (some 13 s a GB); here it is built once:

1. the dataset's setup files (for `pgopt ab`: the copy of the user's database)
   run once into an empty database, per distinct set of the steps' variables;
2. each step's schema files (A's SQL, B's index, then VACUUM ANALYZE) applied
   once to a copy of that, which becomes the step's template; steps with the same
   variables and schema files share one (every profile of `tune --measure`);
3. before each timed run, the lab database is made from the step's template
   (in a round of interleaved slices, every step's clone is made at the round's
   start and renamed in as `pgopt_lab` at each of its turns):
   - a workload that writes gets a clone (`CREATE DATABASE ... TEMPLATE ...
     STRATEGY FILE_COPY`, servers/databases.py), so each run starts from the
     template's data and what it wrote is dropped with it;
   - a workload that writes nothing runs on the template itself, renamed to
     `pgopt_lab`: nothing to undo, no copy to make. It is safe because the
     workload was read (pglast) and holds no statement that writes, and because
     pgbench's sessions run with `default_transaction_read_only = on`, so a
     write the reading missed (a function that writes) fails the run instead of
     changing the template. `pgopt ab` vacuums its templates, so reading them
     sets no hint bits either: every run reads the same pages in the same state.

Every step of a lab gets the same kind of preparation, so the steps of a round are
prepared alike.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from ..lab.spec import Step
from ..observe import snapshots
from ..report.fmt import format_bytes
from ..servers import databases
from ..servers.base import LAB_DATABASE
from ..servers.read_only import READ_ONLY
from ..words import plural
from .context import RunContext
from .script_writes import first_write


@dataclass
class Template:
    """One template database: the steps that start from it, and what it cost."""

    name: str
    steps: list[str]
    build_s: float = 0.0
    bytes: int = 0


@dataclass
class DataTemplates:
    """The templates of a lab's fresh steps: built once, a run's database made from them."""

    ctx: RunContext
    steps: list[Step]
    writes: str | None = field(init=False)  # why runs need clones; None: read only
    templates: list[Template] = field(default_factory=list)
    setup_s: float = 0.0  # the dataset's setup files, once per set of variables
    method: str = ""  # how a clone copies its files, in words
    _of_step: dict[str, Template] = field(default_factory=dict)
    _active: Template | None = None  # read only: the template now named pgopt_lab
    _parked: dict[str, str] = field(default_factory=dict)  # a sliced round's clones, by step
    _in_lab: str | None = None  # the step whose clone is pgopt_lab in a sliced round

    def __post_init__(self) -> None:
        self.writes = first_write(self.steps)
        fs = self.ctx.target.filesystem()
        self.method = databases.clone_method(self.ctx.target.server_version_num, fs)

    @property
    def read_only(self) -> bool:
        return self.writes is None

    def describe(self) -> str:
        """How every run's data is made, and why, for the terminal and the report."""
        if self.read_only:
            return (
                "every run reads its step's template itself: the workload writes nothing "
                "(its statements were read, and its sessions run read-only)"
            )
        return (
            f"every run starts from a clone of its step's template, because {self.writes}; "
            f"the clone is {self.method}"
        )

    # -- once, before the first round --------------------------------------------

    def build(self) -> None:
        """The dataset once per set of variables, then each template from it."""
        groups: dict[tuple[tuple[str, str], ...], list[Step]] = {}
        for step in self.steps:
            groups.setdefault(_variables_key(self.ctx, step), []).append(step)
        for steps in groups.values():
            by_schema: dict[tuple[Path, ...], list[Step]] = {}
            for step in steps:
                by_schema.setdefault(step.schema, []).append(step)
            self._build_group(steps[0], list(by_schema.values()))

    def _build_group(self, first: Step, families: list[list[Step]]) -> None:
        ds = self.ctx.lab.dataset
        copy = self.ctx.lab.copy
        with self._admin() as admin:
            databases.drop(admin)
            # a physical copy of the user's server: the data starts as a file copy of it
            databases.create(admin, template=copy.database if copy is not None else None)
        t0 = time.monotonic()
        variables = self.ctx.step_variables(first)
        for path in ds.setup:
            self.ctx.display.message(f"setting up the dataset: {path.name}")
            self.ctx.run_setup(path, variables)
        self.setup_s += time.monotonic() - t0
        base = None
        if len(families) > 1:
            base = databases.template_name(len(self.templates) + len(families) + 1)
            with self._admin() as admin:
                databases.rename(admin, LAB_DATABASE, base)
        for i, family in enumerate(families):
            template = Template(
                databases.template_name(len(self.templates) + 1), [s.name for s in family]
            )
            t0 = time.monotonic()
            with self._admin() as admin:
                if base is not None and i == len(families) - 1:
                    databases.rename(admin, base, LAB_DATABASE)
                elif base is not None:
                    databases.create(admin, template=base)
            self.ctx.apply_schema(family[0])
            with self.ctx.target.connect() as conn:
                snapshots.statements_available(conn)  # in the template, not in every run
            with self._admin() as admin:
                databases.rename(admin, LAB_DATABASE, template.name)
                template.bytes = databases.size_bytes(admin, template.name)
            template.build_s = time.monotonic() - t0
            self.ctx.display.message(
                f"template for {', '.join(template.steps)}: {format_bytes(template.bytes)}, "
                f"built in {template.build_s:.1f}s"
            )
            self.templates.append(template)
            for step in family:
                self._of_step[step.name] = template

    # -- before every timed run ---------------------------------------------------

    def start_run(self, step: Step) -> None:
        """Make `pgopt_lab` the data `step`'s run starts from."""
        if self._parked:
            self._drop_parked()
        template = self._of_step[step.name]
        with self._admin() as admin:
            if not self.read_only:
                databases.drop(admin)
                databases.create(admin, template=template.name)
            elif self._active is not template:
                if self._active is not None:
                    databases.rename(admin, LAB_DATABASE, self._active.name)
                databases.rename(admin, template.name, LAB_DATABASE)
                self._active = template
            else:
                return
        self.ctx.target.lab_database_replaced()

    def start_round(self, steps: Sequence[Step]) -> None:
        """Before a round of interleaved slices: a clone of each step's template, parked
        under a name of its own until `use` renames it in (read-only templates are
        renamed in themselves)."""
        self._drop_parked()
        if self.read_only:
            return
        with self._admin() as admin:
            databases.drop(admin)
            for number, step in enumerate(steps, 1):
                parked = databases.parked_name(number)
                databases.drop(admin, parked)
                databases.create(admin, parked, template=self._of_step[step.name].name)
                self._parked[step.name] = parked
        self._in_lab = None

    def use(self, step: Step) -> None:
        """Within a round of slices: make `pgopt_lab` `step`'s data, as its last slice
        left it."""
        if self.read_only:
            self.start_run(step)
            return
        if self._in_lab == step.name:
            return
        with self._admin() as admin:
            if self._in_lab is not None:
                databases.rename(admin, LAB_DATABASE, self._parked[self._in_lab])
            databases.rename(admin, self._parked[step.name], LAB_DATABASE)
        self._in_lab = step.name
        self.ctx.target.lab_database_replaced()

    def _drop_parked(self) -> None:
        """The last round's clones: parked ones dropped; the one in use is `pgopt_lab`,
        which the next run replaces."""
        if not self._parked:
            return
        with self._admin() as admin:
            for step, parked in self._parked.items():
                if step != self._in_lab:
                    databases.drop(admin, parked)
        self._parked, self._in_lab = {}, None

    def live_bytes(self, steps: Sequence[Step]) -> int:
        """The data a sliced round of `steps` keeps at once: a clone of each step's
        template, or each template once where runs read the templates themselves."""
        used = [self._of_step[s.name] for s in steps if s.name in self._of_step]
        if self.read_only:
            return sum({id(t): t.bytes for t in used}.values())
        return sum(t.bytes for t in used)

    def client_options(self) -> str:
        """What pgbench's sessions add to PGOPTIONS: read-only where runs share a template."""
        return READ_ONLY if self.read_only else ""

    # -- at the end -----------------------------------------------------------------

    def drop(self) -> None:
        """Drop every template but the one the lab database now is (dropped with it)."""
        self._drop_parked()
        with self._admin() as admin:
            for template in self.templates:
                if template is not self._active:
                    databases.drop(admin, template.name)

    def summary(self) -> str:
        total = sum(t.bytes for t in self.templates)
        return (
            f"{plural(len(self.templates), 'template')} ({format_bytes(total)}): {self.describe()}"
        )

    @contextmanager
    def _admin(self) -> Iterator[psycopg.Connection[Any]]:
        with self.ctx.target.connect(self.ctx.target.admin_database) as admin:
            yield admin


def _variables_key(ctx: RunContext, step: Step) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(ctx.step_variables(step).items()))
