"""The source's workload as a replay sees it, one way through: the source read
(source_reader.py; a log capture: log_reader.py, capture.py) into a catalog
(catalog.py), each statement's parameters bound (param_binding.py) and judged
replayable (replayable.py), drawn (parameters.py, draws.py), written as pgbench
scripts (scripts.py, captured_scripts.py, synthesize.py) and files
(workload_files.py), then held against the source (fidelity.py)."""
