"""GPU timing simulator that writes Daisen-style task traces into SQLite.

Data flows one way: kernels → instruction streams → timing model → tracing API →
trace file. Nothing here imports the web app.
"""

__version__ = "0.1.0"
