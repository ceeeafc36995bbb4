"""The result, built once from the measurements (pure): build.py, with each run's
record (runs.py), a step's timed phases (phases.py) and what the wall time went to
(time_spent.py)."""
