"""The command line: parse, wire, map errors to exit codes; one small module per
group of commands (lab.py, ab.py, advise.py, stored.py, tune.py; running.py runs a lab for
them), each imported when its command runs (app.COMMANDS); main.py for exit codes."""

from .app import cli
from .main import main, run

__all__ = ["cli", "main", "run"]
