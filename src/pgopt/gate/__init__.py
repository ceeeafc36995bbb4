"""The CI gate: whether a comparison of two runs should fail a CI job (decision.py)."""
