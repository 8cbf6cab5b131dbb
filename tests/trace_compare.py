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
