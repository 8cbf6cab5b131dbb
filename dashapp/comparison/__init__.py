"""Comparing runs: two traces side by side (``/compare``) and a sweep's many runs (``/sweep``)."""
