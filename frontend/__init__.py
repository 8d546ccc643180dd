"""Stage 1: trace a Python function on Tracers into the Graph IR (and interpret it)."""
