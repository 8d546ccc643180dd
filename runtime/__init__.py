"""Stage 4: build generated sources, load them, and run compiled programs."""
