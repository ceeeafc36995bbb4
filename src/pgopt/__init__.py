"""pgopt: a benchmark-driven PostgreSQL optimization lab."""

__version__ = "0.1.0"
