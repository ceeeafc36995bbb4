"""The `pgopt` command group, each command imported when it runs, and how an error is
printed."""

from __future__ import annotations

import importlib

import click

from .. import __version__
from ..redact import redactor

# each command's module, imported only when the command runs: `pgopt --version` and a
# command's --help need not load scipy, matplotlib and the driver
COMMANDS = {
    "ab": "ab:ab_cmd",
    "advise": "advise:advise_cmd",
    "compare": "stored:compare_cmd",
    "lab": "lab:lab",
    "report": "stored:report_cmd",
    "runs": "stored:runs_cmd",
    "tune": "tune:tune_cmd",
}


class LazyGroup(click.Group):
    """A group whose commands are imported by name when asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, name = COMMANDS[cmd_name].split(":")
        command = getattr(importlib.import_module(f"{__package__}.{module}"), name)
        assert isinstance(command, click.Command)
        return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="pgopt")
@click.option("--debug", is_flag=True, help="Show the traceback of an internal error.")
def cli(debug: bool) -> None:
    """pgopt: will this change make PostgreSQL faster, by how much, and why?"""


def print_error(message: str) -> None:
    lines = redactor(message).strip().splitlines() or ["unknown error"]
    click.echo(f"pgopt: error: {lines[0]}", err=True)
    for line in lines[1:]:
        click.echo(f"  {line}", err=True)
