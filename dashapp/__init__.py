"""GPUscope's trace explorer: a read-only Dash app over SQLite trace files.

Data flows one way: ``queries`` (all read SQL) → ``metrics``/``layout`` (exact
numbers and row placement) → ``figures`` (pure Plotly builders) → ``pages`` (thin
callbacks, behind one shared preamble). The whole view state lives in the URL
(``urls``); ``catalog`` keeps each trace's metadata and ``damage`` its damage check. The package never
imports the simulator: the trace schema (``sqlite_schema.sql``) is the only contract.
"""
