"""The one engine that runs workloads: plan (pure), then execute on a target."""
