"""The command line: parse, wire, map errors to exit codes; one small module per
group of commands (lab.py, ab.py, advise.py, stored.py; running.py runs a lab for them), main.py
for exit codes."""

from . import ab, advise, lab, stored, tune  # noqa: F401 - registers their commands on the group
from .app import cli
from .main import main, run

__all__ = ["cli", "main", "run"]
