"""The index advisor: which indexes to add, found in plans, checked on a copy, proved."""
