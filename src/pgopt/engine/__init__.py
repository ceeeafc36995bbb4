"""The one engine that runs workloads: plan.py decides the runs without I/O, then
execute.py performs them on a target."""
