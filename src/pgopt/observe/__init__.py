"""One run observed: wait events sampled (sampler.py), statistics diffed
(snapshots.py), a lab's own SQL as time series (monitor.py), together in
observer.py."""
