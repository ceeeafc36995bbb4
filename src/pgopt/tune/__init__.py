"""pgopt tune: a configuration for this machine, with the reason for each value."""
