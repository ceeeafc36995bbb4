"""The user's source server and how its clients ran, read for a replay: its statements,
tables and column values, read-only (reader.py), how its clients ran (watch.py: a
watch, what it keeps since a reset; shape.py: each figure with where it came from, or
unknown) or a log capture (log_reader.py, capture.py), held in records (catalog.py).
replay/ writes and judges the replay from them; nothing here imports replay/."""
