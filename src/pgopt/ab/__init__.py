"""`pgopt ab`: the user's own workload and data as a two-step lab (spec.py reads what an
A/B names, lab.py turns it into a lab the engine runs)."""
