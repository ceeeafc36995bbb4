"""`python -m pgopt`."""

from .cli import run

run()
