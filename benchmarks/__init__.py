"""kiln's benchmarks: ``python -m benchmarks`` prints the W1-W7 table (see harness.py)."""
