"""Damage named in the app (issue 17): real byte damage to a real synth trace (one 4 KiB
page overwritten, 100 bytes flipped) is found once per file version by a background
``PRAGMA quick_check``, and every page of that trace, and its CSV export, says
"damaged: ..." instead of drawing it; a query that hits the damage says so too."""
import random
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import dash_client as client
import pytest
from app_server import serve
from test_run_queue import _until

from dashapp import damage, queries

ROOT = Path(__file__).resolve().parents[1]
PAGE = 4096


def _overwrite_page(path, index, seed=1):
    data = bytearray(path.read_bytes())
    rnd = random.Random(seed)
    data[index * PAGE:(index + 1) * PAGE] = bytes(rnd.randrange(256) for _ in range(PAGE))
    path.write_bytes(data)


def _flip_bytes(path, count=100, seed=2):
    data = bytearray(path.read_bytes())
    for offset in random.Random(seed).sample(range(len(data)), count):
        data[offset] ^= 0xFF
    path.write_bytes(data)


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    directory = tmp_path_factory.mktemp("damage")
    sound = directory / "sound.sqlite"
    subprocess.run([sys.executable, "-m", "simulator", "synth", "--tasks", "20000", "-o",
                    str(sound)], cwd=ROOT, check=True, capture_output=True)
    assert sqlite3.connect(sound).execute("PRAGMA page_size").fetchone()[0] == PAGE
    pages = sound.stat().st_size // PAGE
    shutil.copy(sound, directory / "page.sqlite")
    _overwrite_page(directory / "page.sqlite", 3 * pages // 4)
    shutil.copy(sound, directory / "flipped.sqlite")
    _flip_bytes(directory / "flipped.sqlite")
    return directory


@pytest.mark.parametrize("name", ["page.sqlite", "flipped.sqlite"])
def test_the_check_names_the_damage_once_per_file_version(traces, tmp_path, name):
    checker = damage.Checker()
    copy = tmp_path / name
    shutil.copy(traces / name, copy)
    found = checker.verdict(copy, wait=60)
    assert found.damaged and found.message.startswith(f"damaged: {name}: "), found
    assert checker.verdict(copy, wait=0) is found  # remembered, not checked again
    # The same name, now a sound file (another inode, size and time): checked again.
    shutil.copy(traces / "sound.sqlite", tmp_path / "sound-copy")
    (tmp_path / "sound-copy").replace(copy)
    assert checker.verdict(copy, wait=60).state == "ok"


def test_a_long_check_holds_back_only_the_pages_of_its_first_moments(traces, tmp_path):
    path = tmp_path / "busy.sqlite"
    shutil.copy(traces / "sound.sqlite", path)
    writer = sqlite3.connect(path)  # a real writer's lock: the check waits for it
    writer.execute("BEGIN EXCLUSIVE")
    checker = damage.Checker()
    began = time.monotonic()
    assert checker.verdict(path, wait=0.5).state == "checking"
    assert time.monotonic() - began >= 0.5
    again = time.monotonic()
    assert checker.verdict(path, wait=0.5).state == "checking"  # past its moment: no wait
    assert time.monotonic() - again < 0.4
    writer.rollback()
    writer.close()
    assert checker.verdict(path, wait=60).state == "ok"


def test_a_query_that_hits_the_damage_says_so(traces, tmp_path):
    # The overwritten page is the root of the task table here: every task query reads it.
    path = tmp_path / "root.sqlite"
    shutil.copy(traces / "sound.sqlite", path)
    root = sqlite3.connect(path).execute(
        "SELECT rootpage FROM sqlite_master WHERE name = 'task'").fetchone()[0]
    _overwrite_page(path, root - 1)  # pages count from 1
    with queries.open_trace(path) as db:
        with pytest.raises(queries.TraceError, match="root.sqlite: damaged: "):
            db.fetch("SELECT count(*), sum(end_ps - start_ps) FROM task")


def test_damage_met_inside_a_snapshot_is_named_not_the_end_of_the_transaction(traces, tmp_path):
    """The page's metadata is read in one read transaction: when a query in it hits a
    damaged page, ending the transaction fails on the same damage; the query's error is
    the one reported (before: the COMMIT's bare DatabaseError, and the page said only
    that it could not be built)."""
    path = tmp_path / "locations.sqlite"
    shutil.copy(traces / "sound.sqlite", path)
    root = sqlite3.connect(path).execute(
        "SELECT rootpage FROM sqlite_master WHERE name = 'location'").fetchone()[0]
    _overwrite_page(path, root - 1)
    with queries.open_trace(path) as db:
        with pytest.raises(queries.TraceError, match="locations.sqlite: damaged: "):
            with queries.snapshot(db):
                queries.locations(db)


def _page_text(url, deps, path, search):
    status, _seconds, answer = client.open_page(url, deps, path, search)
    assert status == 200, answer
    return str(answer)


def test_every_page_of_a_damaged_trace_says_damaged(traces):
    with serve(traces) as (url, _server):
        deps = client.dependencies(url)
        for name in ("page.sqlite", "flipped.sqlite"):
            # The first page starts the check; it is named as soon as it is done.
            _until(lambda name=name: "damaged: " + name in _page_text(
                url, deps, "/overview", f"?trace={name}"), 60, f"{name} named damaged")
            for path, search in (("/overview", f"?trace={name}"),
                                 ("/component", f"?trace={name}&loc=GPU.L2%5B0%5D"),
                                 ("/kernel", f"?trace={name}")):
                text = _page_text(url, deps, path, search)
                assert f"damaged: {name}: " in text and "gs-ov-graph" not in text, text[:300]
                assert "cv-graph" not in text
            for output, trigger, search in (
                    ("ov-csv.data", "ov-csv-button.n_clicks", f"?trace={name}"),
                    ("cv-csv.data", "cv-csv-button.n_clicks",
                     f"?trace={name}&loc=GPU.L2%5B0%5D")):
                dep = client.find(deps, output, trigger)
                status, _s, answer = client.post(url, client.body(
                    dep, {trigger: 1, "_pages_location.search": search}))
                assert status == 200 and f"damaged: {name}" in str(answer), answer
                assert "content" not in str(answer)  # no file of wrong numbers
            home = _page_text(url, deps, "/", "")
            assert f"damaged: {name}" in home
        # The sound trace beside them is drawn as usual.
        assert "gs-ov-graph" in _page_text(url, deps, "/overview", "?trace=sound.sqlite")
    log = (traces / "server.log").read_text()
    assert "Traceback" not in log, log[-3000:]


def test_a_file_that_is_not_a_trace_is_not_called_damaged(tmp_path):
    other = tmp_path / "other.sqlite"
    other.write_bytes(b"not sqlite at all" * 1000)
    assert damage.Checker().verdict(other, wait=60).state == "ok"  # its page says why


def test_a_damaged_schema_is_named_damage(traces, tmp_path):
    """Changed bytes in the schema table leave SQL that SQLite cannot parse: that is
    damage too, not a file the check could not read."""
    path = tmp_path / "schema.sqlite"
    shutil.copy(traces / "sound.sqlite", path)
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA writable_schema=ON")
        db.execute("UPDATE sqlite_master SET sql = 'CREATE INDEX task_parent ON' "
                   "WHERE name = 'task_parent'")
    found = damage.Checker().verdict(path, wait=60)
    assert found.damaged and "schema malformed" in found.message, found
