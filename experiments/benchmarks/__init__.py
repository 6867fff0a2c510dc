"""Benchmark sections of ``make bench``: each module has ``run(quick: bool) -> list[Row]``."""
