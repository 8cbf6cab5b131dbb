"""The trace contract: every table and column in sqlite_schema.sql is documented."""
import re
import sqlite3

from simulator.tracing.writer import schema_parts, schema_text

CREATE_TABLE = re.compile(r"CREATE TABLE IF NOT EXISTS (\w+) \((.*?)\n\)", re.S)


def _tables():
    return CREATE_TABLE.findall(schema_text())


def test_schema_defines_the_core_tables():
    names = {name for name, _ in _tables()}
    assert {"task", "location", "kind", "run", "metric_bin", "metric_kind_bin", "task_link",
            "instant", "counter_series", "counter"} <= names


def test_every_table_has_a_comment_line_above_it():
    text = schema_text()
    for name, _ in _tables():
        before = text[: text.index(f"CREATE TABLE IF NOT EXISTS {name} (")].rstrip().splitlines()
        assert before and before[-1].startswith("--"), f"table {name} has no comment above it"


def test_every_column_has_a_comment():
    for name, body in _tables():
        for line in body.strip().splitlines():
            line = line.strip()
            if not line or line.startswith(("--", "PRIMARY KEY", "UNIQUE", "FOREIGN KEY")):
                continue
            assert "--" in line, f"{name}: column line without a comment: {line!r}"
            assert len(line.split("--", 1)[1].strip()) > 5, f"{name}: empty comment: {line!r}"


def test_schema_comments_name_the_time_unit():
    for name, body in _tables():
        for line in body.splitlines():
            if "_ps " in line.split("--")[0] + " ":
                assert "ps" in line.split("--", 1)[1], f"{name}: time column without unit: {line}"


def test_schema_and_indexes_apply_to_an_empty_database():
    db = sqlite3.connect(":memory:")
    tables, indexes = schema_parts()
    db.executescript(tables)
    db.executescript(indexes)
    assert db.execute("SELECT count(*) FROM sqlite_master WHERE type = 'index'").fetchone()[0] >= 3


def test_the_app_reads_the_format_version_the_schema_writes():
    from dashapp import queries

    db = sqlite3.connect(":memory:")
    db.executescript(schema_parts()[0])
    assert db.execute("PRAGMA user_version").fetchone()[0] == queries.TRACE_FORMAT >= 1


def test_finalize_builds_the_indexes_a_file_begun_by_an_older_version_lacks(tmp_path):
    """The kernel records' indexes are created with the tables now; a trace an older
    version began (and left unfinalized) has none of them, and finalize adds them."""
    from simulator.tracing.writer import TraceWriter

    path = tmp_path / "old.sqlite"
    writer = TraceWriter(path, command="older version")
    writer.close()
    kernel_indexes = ("kernel_access_launch", "kernel_branch_launch", "kernel_emit_launch")
    db = sqlite3.connect(path)
    for name in kernel_indexes:
        db.execute(f"DROP INDEX {name}")
    db.close()
    again = TraceWriter.reopen(path)
    again.finalize(completed=False)
    again.close()
    db = sqlite3.connect(path)
    names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    db.close()
    assert set(kernel_indexes) | {"task_location_start", "task_parent"} <= names
