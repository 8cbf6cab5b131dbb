"""Canonical task lists of a trace file, for comparing traces across formats."""
import sqlite3

CANONICAL = (
    "SELECT coalesce(t.ext_id, CAST(t.id AS TEXT)),"
    " CASE WHEN p.id IS NULL THEN NULL ELSE coalesce(p.ext_id, CAST(p.id AS TEXT)) END,"
    " k.category, k.action, l.name, t.start_ps, t.end_ps, {details}"
    " FROM task t JOIN kind k ON k.id = t.kind JOIN location l ON l.id = t.location"
    " LEFT JOIN task p ON p.id = t.parent")


def canonical_tasks(path, details=True):
    """Sorted (id, parent id, category, action, location, start_ps, end_ps[, details])."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        sql = CANONICAL.format(details="t.details" if details else "NULL")
        return sorted(db.execute(sql).fetchall(), key=repr)
    finally:
        db.close()


def table_digests(path):
    """Every table's rows, sorted, as (row count, SHA-256), by table name; of the run table
    only what the run decided (its configuration, workload, seed, outcome and span)."""
    import hashlib

    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        digests = {}
        for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
            columns = [row[1] for row in db.execute("SELECT * FROM pragma_table_info(?)", (name,))]
            if name == "run":
                columns = [c for c in columns if c in RUN_DECIDED]
            rows = sorted(repr(row) for row in db.execute(
                f"SELECT {', '.join(columns)} FROM {name}"))  # noqa: S608 (names from the schema)
            digests[name] = (len(rows), hashlib.sha256("\n".join(rows).encode()).hexdigest())
        return digests
    finally:
        db.close()


RUN_DECIDED = ("config", "workload", "seed", "completed", "open_tasks", "virtual_end_ps")
