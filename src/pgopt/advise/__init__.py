"""`pgopt advise`: a read-only look at a live server, its findings from rules kept as data."""
