"""Frozen records shared across pgopt: no I/O, no behaviour beyond their own fields."""
