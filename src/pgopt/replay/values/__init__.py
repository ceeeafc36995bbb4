"""The values a replay sends for a statement's parameters (pure): how each `$n` is
drawn (draws.py: from the data's statistics, a watch's or a capture's calls, a
sequence), rendered as pgbench `\\set` lines, and, for text, which pgbench cannot
hold, written out as variants of the statement that pgbench picks (variants.py)."""
