"""Benchmarks (`make bench`, `make load`): speed, scale and memory, never part of the tests.

Every figure is measured in one run next to its reference (the bare model, llama-index, the
goal) and reported as a ratio as well as a time, because the machines are shared and noisy.
`bench/run.py` prints the table and writes bench/results/bench-<time>.json; see bench/README.md.
"""
