"""Pure analysis of measurements: statistics, verdicts, summaries; no I/O."""
