"""Why is it slow? Findings on simulated runs, read from the trace contract alone.

The analysis room reads a finished trace (``sqlite_schema.sql``) read-only, with SQL and
numpy, and imports nothing that simulates (``engine``, ``gpu``, ``kernels``, ``runs``),
so the CLI (``python -m simulator analyze``) and the app can both call it. Each analysis
follows a definition of ``reference/why-layer.md`` §9.1 (S1–S13), works in exact integer
picoseconds, and every attribution sums to its window (rule R2).
"""
