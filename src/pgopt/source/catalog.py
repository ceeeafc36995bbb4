"""What pgopt ab knows of the source it replays (pure records): its statements as
pg_stat_statements counted them, its tables' columns and sizes, and how its
clients ran the statements, sampled."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..sqltree import qualified, quote_ident


@dataclass(frozen=True)
class Table:
    """A table as a statement names it (replay/param_binding.py reads it from the
    statement); `Catalog.key` finds which of the source's tables it is."""

    schema: str | None  # as written; None: found on the search path
    name: str

    @property
    def shown(self) -> str:
        """The name as SQL writes it (quoted where it must be), for the workload's notes."""
        return qualified(self.schema, self.name) if self.schema else quote_ident(self.name)

    def column_shown(self, column: str) -> str:
        return f"{self.shown}.{quote_ident(column)}"


@dataclass(frozen=True)
class SourceStatement:
    queryid: str
    query: str
    calls: int
    total_ms: float
    rows: int = 0
    blocks: int = 0  # shared blocks hit and read
    blocks_read: int = 0  # of them, read into shared buffers: the cache's misses
    max_ms: float = 0.0  # its slowest call

    @property
    def rows_per_call(self) -> float:
        return self.rows / self.calls if self.calls else 0.0

    @property
    def blocks_per_call(self) -> float:
        return self.blocks / self.calls if self.calls else 0.0

    @property
    def ms_per_call(self) -> float:
        return self.total_ms / self.calls if self.calls else 0.0


@dataclass(frozen=True)
class Column:
    position: int
    type: str  # format_type: 'integer', 'text', 'numeric(10,2)', ...
    unique: bool  # in some unique index: an INSERT of an existing value may collide
    largest: str | None = None  # the data's largest value, for a unique integer column


@dataclass(frozen=True)
class Catalog:
    """The source's tables: (schema, name) -> columns; unqualified names go to the
    schema where the source's search path finds them; each table's rows and pages
    (the planner's estimates)."""

    tables: dict[tuple[str, str], dict[str, Column]]
    visible: dict[str, str]  # name -> schema
    sizes: dict[tuple[str, str], tuple[float, float]] = field(default_factory=dict)

    def key(self, table: Table) -> tuple[str, str] | None:
        schema = table.schema or self.visible.get(table.name)
        return (schema, table.name) if schema and (schema, table.name) in self.tables else None

    def columns(self, table: Table) -> dict[str, Column]:
        key = self.key(table)
        return self.tables[key] if key else {}

    def column_names(self, table: Table) -> list[str]:
        """In the table's order: an INSERT without a column list fills them so."""
        columns = self.columns(table)
        return sorted(columns, key=lambda name: columns[name].position)

    def pages(self, table: Table) -> float:
        return self.sizes.get(self.key(table) or ("", ""), (0.0, 0.0))[1]

    def rows_per_page(self, table: Table) -> float:
        rows, pages = self.sizes.get(self.key(table) or ("", ""), (0.0, 0.0))
        return rows / pages if pages else 0.0


@dataclass(frozen=True)
class SourceWorkload:
    """How the source's clients ran its statements (None: not known), each figure with
    where it came from (shape.py)."""

    statements_per_commit: float | None = None
    clients: int | None = None
    protocol: str | None = None  # 'simple', or 'prepared' where statements carry $n
    note: str = ""  # how it was read, or why it is not known
    per_commit_from: str = ""
    clients_from: str = ""
    # where the clients are unknown, about the fewest at once its sessions' time gives
    clients_estimated: int | None = None
    database_share: float | None = None  # of its busy sessions' time, the database's
    database_share_from: str = ""
    values_from: str = ""  # where the replay's values come from
    # the source's machine, where it is this one: how busy its CPUs were over the
    # watch, and the source server's share of that busy time
    host_busy: float | None = None
    database_cpu_share: float | None = None
