"""What every run of a lab needs to know: the lab, the parameters, the server, the
run folder, and each step's variables, settings and clients resolved once."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..binaries import PgBinaries
from ..errors import LabError
from ..lab import expressions
from ..lab.spec import Lab, Step
from ..params import RunParams, select_steps
from ..psql import Psql
from ..servers.base import Target
from .display import Display
from .plan import step_settings


@dataclass
class RunContext:
    lab: Lab
    params: RunParams
    target: Target
    run_dir: Path
    display: Display
    variables: dict[str, str] = field(init=False)
    pooler_port: int | None = None  # where a running pooler listens (servers/pooler.py)
    standbys: tuple[Target, ...] = ()  # the primary's hot standbys (servers/standby.py)
    shards: tuple[Target, ...] = ()  # servers the data is spread over (servers/shards.py)
    client_options: str = ""  # what pgbench's sessions add to PGOPTIONS (engine/templates.py)
    # the pgbench of every step, whatever its server: an A/B across versions keeps its
    # load engine the same, the newer version's (which reads both); None: the
    # server's own. psql and pg_restore are each server's own (a newer pg_restore
    # sends an older server settings it does not know)
    client_binaries: PgBinaries | None = None

    def __post_init__(self) -> None:
        self.variables = dataset_variables(self.lab, self.params.scale)

    def step_variables(self, step: Step) -> dict[str, str]:
        return {**self.variables, **step.variables, "clients": str(self.clients(step))}

    def settings(self, step: Step) -> dict[str, str]:
        return step_settings(self.lab, step, self.params)

    def clients(self, step: Step) -> int:
        """--clients overrides every step's clients, except within a client sweep."""
        if step.sweep is not None:
            return step.clients
        return self.params.clients or step.clients

    def clients_threads(self, step: Step) -> tuple[int, int]:
        """pgbench clients and threads: threads default to min(clients, cores), at most 2."""
        clients = self.clients(step)
        return clients, max(1, min(step.threads or min(clients, 2), clients))

    def client_env(self, step: Step) -> dict[str, str]:
        """pgbench's environment for `step`: the server, or the pooler it goes through."""
        env = self.target.client_env()
        if self.client_options:
            env["PGOPTIONS"] = " ".join(filter(None, (env.get("PGOPTIONS"), self.client_options)))
        if step.pooler is not None:
            assert self.pooler_port is not None, "a pooled step runs with its pooler started"
            env["PGPORT"] = str(self.pooler_port)
        return env

    def pgbench(self) -> Path:
        return (self.client_binaries or self.target.binaries).path("pgbench")

    def psql(self) -> Psql:
        return Psql(self.target.binaries, self.target.client_env())

    def run_setup(self, path: Path, variables: dict[str, str]) -> None:
        """One of the dataset's setup files: a SQL script, or a folder holding a
        pg_dump archive in directory format (Psql.restore)."""
        if not path.is_dir():
            self.psql().run_file(path, variables, what="setup file")
            return
        self.psql().restore(path)

    def apply_schema(self, step: Step) -> None:
        """Run the step's schema files (an index, a migration) on the lab database."""
        for path in step.schema:
            self.display.message(f"{step.name}: applying {path.name}")
            self.psql().run_file(
                path, self.step_variables(step), what=f"step {step.name}: schema file"
            )

    def warmup_s(self, step: Step) -> int:
        """Seconds at the start of a timed pgbench run that its figure leaves out: only
        runs timed by duration have them (a fixed transaction count stays exact)."""
        timed_by_pgbench = not step.phases and step.probe is None
        if not timed_by_pgbench or step.transactions is not None:
            return 0
        return self.params.warmup_s


def dataset_variables(lab: Lab, scale: float) -> dict[str, str]:
    """The variables SQL and pgbench scripts see: the dataset's size variable and the
    lab's variables, which may be computed from it and from `scale`
    (`keys = "{rows // 10000}"`).

    `scale` itself is not one of them: pgbench's built-in scripts read `:scale` as the
    number of branches, and a `--define scale=1` beside a dataset of 2 branches made
    every TPC-B-like transaction update branch 1 (bench/harness_cost.py's lab, whose
    dataset is 2 branches at --scale 1, queued on one row). A lab with shards also
    sees `shards`, their number."""
    ds = lab.dataset
    names: dict[str, float] = {"scale": scale}
    if ds.variable:
        names[ds.variable] = ds.size_at(scale)
    out = {}
    for key, value in ds.variables.items():
        try:
            out[key] = expressions.expand(value, names)
        except expressions.FigureError as e:
            raise LabError(f"lab {lab.name!r}: [dataset]: field 'variables': {key}: {e}") from None
    if ds.variable:
        out[ds.variable] = str(ds.size_at(scale))
    if lab.shards:
        out["shards"] = str(lab.shards)
    return out


def check_figures(lab: Lab, params: RunParams) -> None:
    """Fails before any server starts where the run's figures fail an expression of
    the lab's (a setting's divisor 0 on this machine, a variable's at this scale),
    as the run would once its servers were up."""
    dataset_variables(lab, params.scale)
    for step in select_steps(lab, list(params.steps)):
        step_settings(lab, step, params)
