"""The replay of the source's workload (source/ reads the source), one way through:
the source read in one session (from_source.py), each statement's parameters bound
(param_binding.py) and judged replayable (replayable.py), drawn (parameters.py,
values/), written as pgbench scripts (scripts.py, captured_scripts.py,
synthesize.py) and files (workload_files.py), then held against the source
(fidelity.py)."""
