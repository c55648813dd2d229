"""Stage 5, check: what any generator wrote is checked against the passages it was shown."""
