"""A run watched while it runs: real traces written by the real writer, not finalized,
read by the app's catalogue, views and pages (issue 14, item 3).

The browser test (tests/browser/test_watch_in_browser.py) watches a real ``synth``
process; these check the parts one by one: which files are served and how they are
told apart, what the metadata of a growing trace is, that what the views draw while
the run goes is what the finished trace holds, and that nothing opens a file its
writer would be held back by.
"""
import importlib
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap

import pytest
from dash import no_update
from test_app import _texts

from dashapp import catalog, damage, following, live, queries, urls
from dashapp.daisen import views
from simulator.tracing import Tracer, TraceWriter
from simulator.tracing.pyramid_build import IncrementalPyramid, LivePyramid

pytestmark = pytest.mark.skipif(IncrementalPyramid is None,
                                reason="the run so far is drawn from the pyramid built as it goes")

CUS, BANKS = 4, 2
# These runs last a fraction of a second: their bins are written batch by batch, as a
# long run's are each second (test_pyramid_incremental tests how long they are held).
HOLD_SECONDS = 0.0


@pytest.fixture(autouse=True)
def _bins_written_each_batch(monkeypatch):
    monkeypatch.setattr(LivePyramid, "hold_seconds", HOLD_SECONDS)


class Run:
    """A run being written in this process: requests from CUs to L2 banks, one per ns,
    each with an instruction at its CU; ``go(n)`` adds ``n`` more."""

    def __init__(self, path, watchable=True, batch_size=512):
        self.writer = TraceWriter(path, command="test run", workload="requests",
                                  config={"cus": CUS}, watchable=watchable)
        self.tracer = tr = Tracer(self.writer, ps_per_tick=1000, batch_size=batch_size)
        self.cu = [tr.location(f"GPU.CU[{i}]") for i in range(CUS)]
        self.l2 = [tr.location(f"GPU.L2[{i}]") for i in range(BANKS)]
        self.out, self.inn = tr.kind("req_out", "ReadReq"), tr.kind("req_in", "ReadReq")
        self.valu = tr.kind("inst", "VALU")
        self.root = tr.start_task(-1, tr.kind("Simulation", "Simulation"),
                                  tr.location("Driver"), 0)
        self.now = 0

    def go(self, count):
        tr = self.tracer
        for _ in range(count):
            t, c = self.now, self.now % CUS
            inst = tr.start_task(self.root, self.valu, self.cu[c], t)
            out = tr.trace_req_initiate(inst, self.out, self.cu[c], t)
            inn = tr.trace_req_receive(out, self.inn, self.l2[t % BANKS], t + 1)
            tr.trace_req_complete(inn, t + 3 + t % 3)
            tr.trace_req_finalize(out, t + 7)
            tr.end_task(inst, t + 8)
            self.now += 1
        self.writer.sync()  # what the batches so far make final is in the file
        return self

    def finish(self):
        self.tracer.end_task(self.root, self.now + 10)
        self.tracer.close(self.now + 10)
        self.writer.finalize(completed=True)
        self.writer.close()


def _partial(directory, pid=None):
    return directory / f".run.sqlite.partial-{os.getpid() if pid is None else pid}"


def _dead_pid():
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(proc.stdout)


def _rows(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return set(db.execute("SELECT * FROM metric_bin").fetchall())
    finally:
        db.close()


def test_a_command_s_unfinished_file_is_served_by_its_own_name(tmp_path):
    running = Run(_partial(tmp_path)).go(3000)
    dead = _partial(tmp_path, _dead_pid())
    shutil.copy(_partial(tmp_path), dead)  # a file whose writer is gone
    (tmp_path / ".notes.txt.partial-1").write_text("not a trace")
    cat = catalog.Catalog(trace_dir=tmp_path)
    assert cat.names() == []  # hidden: never among the finished traces
    found = {u.name: u for u in cat.unfinished()}
    assert set(found) == {_partial(tmp_path).name, dead.name}
    assert found[_partial(tmp_path).name].running and found[_partial(tmp_path).name].readable
    assert not found[dead.name].running and found[dead.name].readable
    assert cat.path(dead.name) == tmp_path / dead.name
    for outside in ("../run.sqlite", ".notes.txt.partial-1", ".run.sqlite.partial-x"):
        with pytest.raises(catalog.UnknownTrace):
            cat.path(outside)
    single = catalog.Catalog(trace=tmp_path / "run.sqlite")
    assert sorted(u.name for u in single.unfinished()) == sorted([_partial(tmp_path).name,
                                                                   dead.name])
    running.finish()


def test_the_metadata_of_a_running_trace_is_what_its_pyramid_holds_so_far(tmp_path):
    run = Run(_partial(tmp_path)).go(6000)
    meta = catalog.trace_meta(_partial(tmp_path))
    db = sqlite3.connect(f"file:{_partial(tmp_path)}?mode=ro", uri=True)
    tasks = db.execute("SELECT max(id) + 1 FROM task").fetchone()[0]
    spans = {loc: (lo, hi) for loc, lo, hi in db.execute(
        "SELECT location, min(start_ps), max(end_ps) FROM task GROUP BY location")}
    db.close()
    assert meta.live is not None and meta.live.running and meta.live.tasks == tasks
    assert meta.live.writer.pid == os.getpid() and meta.live.writer.target == "run.sqlite"
    drawn = [x for x in meta.locations if x.has_tasks]
    assert {x.name for x in drawn} == {f"GPU.CU[{i}]" for i in range(CUS)} | {
        f"GPU.L2[{i}]" for i in range(BANKS)}  # the Driver's one task is still open
    for loc in drawn:
        # Its bins lie within what it did, and reach no later than its last task's end
        # rounded up to a bin.
        first, last = spans[loc.id]
        width = meta.base_ps << loc.min_level
        assert first - width < loc.first_start_ps <= first and loc.last_end_ps <= last + width
        assert loc.min_level <= loc.complete_level and loc.task_count is None
    assert meta.end_ps == max(x.last_end_ps for x in drawn) <= run.now * 1000 + 8000
    text = following.progress_text(meta)
    assert f"{tasks:,} tasks so far" in text and "of simulated time" in text
    assert following.status(meta)[0] == "running"
    run.finish()


def test_a_growing_trace_is_read_again_without_pushing_finished_traces_out(tmp_path):
    finished = tmp_path / "done.sqlite"
    Run(finished).go(500).finish()
    kept = catalog.trace_meta(finished)
    run = Run(_partial(tmp_path)).go(3000)
    before = len(catalog._METAS)
    seen = [catalog.trace_meta(_partial(tmp_path)).live.tasks]
    for _ in range(catalog.LIVE_METAS + 4):  # more versions than the live cache keeps
        run.go(1000)
        seen.append(catalog.trace_meta(_partial(tmp_path)).live.tasks)
    assert seen == sorted(seen) and len(set(seen)) == len(seen)  # each commit read again
    assert catalog.trace_meta(_partial(tmp_path)).live.tasks == seen[-1]  # and kept meanwhile
    assert len(catalog._METAS) == before and catalog.trace_meta(finished) is kept
    assert len(catalog._LIVE_METAS) <= catalog.LIVE_METAS
    run.finish()


def test_what_the_views_draw_while_a_run_goes_is_what_its_finished_trace_holds(tmp_path):
    path = _partial(tmp_path)
    run = Run(path).go(8000)
    shown_rows = _rows(path)
    page = views.overview(path, urls.OverviewState(trace=path.name))
    assert page.window == (0, catalog.trace_meta(path).end_ps) and page.charts
    shown = {c.location.name: c.series for c in page.charts}
    # Zoomed in past the finest stored bins, still from the pyramid: the tasks have no
    # index to read them by until finalize.
    deep = views.overview(path, urls.OverviewState(trace=path.name, t0=1_000_000, t1=1_001_000))
    assert {c.series.source for c in deep.charts} == {"pyramid"}
    run.go(8000).finish()
    final = _rows(path)
    assert shown_rows and shown_rows <= final  # a bin is written once, when it is final
    with queries.open_trace(path) as db:
        for name, series in shown.items():
            loc = catalog.trace_meta(path).by_name[name]
            rows = queries.metric_bins(db, loc.id, series.level, series.first_bin,
                                       series.first_bin + series.nbins)
            drawn = {b for b in range(series.nbins) if series.present[b]}
            assert drawn <= {r[0] - series.first_bin for r in rows}
            for r in rows:
                b = r[0] - series.first_bin
                if b in drawn:
                    assert series.sums["task_ps"][b] == r[4] and series.sums["busy_ps"][b] == r[7]


def test_the_component_view_of_a_running_trace_lists_the_tasks_of_its_window(tmp_path):
    path = _partial(tmp_path)
    run = Run(path).go(6000)
    meta = catalog.trace_meta(path)
    t0, t1 = 2_000_000, 2_100_000
    page = views.component(path, urls.ComponentState(trace=path.name, loc="GPU.L2[1]",
                                                     t0=t0, t1=t1))
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    expected = [r[0] for r in db.execute(
        "SELECT t.id FROM task t JOIN location l ON l.id = t.location WHERE l.name = ?"
        " AND t.start_ps < ? AND t.end_ps > ? ORDER BY t.start_ps, t.id", ("GPU.L2[1]", t1, t0))]
    db.close()
    assert page.mode == "bars" and [t.id for t in page.tasks] == expected
    assert page.total_in_window == len(expected) > 0
    whole = views.component(path, urls.ComponentState(trace=path.name, loc="GPU.CU[0]"))
    assert whole.window[1] >= meta.by_name["GPU.CU[0]"].last_end_ps
    # Following keeps the window's width at the end of the run so far.
    followed = views.component(path, urls.ComponentState(trace=path.name, loc="GPU.L2[1]",
                                                         t0=t0, t1=t1, follow=True))
    assert followed.window == (meta.end_ps - (t1 - t0), meta.end_ps)
    run.finish()


def test_a_running_trace_is_never_checked_for_damage(tmp_path):
    run = Run(_partial(tmp_path)).go(2000)
    in_place = Run(tmp_path / "api.sqlite").go(2000)  # the tracing API's own use
    assert damage.verdict(_partial(tmp_path)) is damage.UNFINISHED
    assert damage.verdict(tmp_path / "api.sqlite", wait=30) == damage.UNFINISHED
    run.finish()
    in_place.finish()
    assert damage.verdict(tmp_path / "api.sqlite", wait=30) == damage.Verdict("ok")
    # Finalized but not renamed yet: its command may still append tables, with a
    # rollback journal, so a whole-file read would hold it back. It is not even opened.
    assert damage.verdict(_partial(tmp_path), wait=30) is damage.UNFINISHED


def test_a_file_its_running_writer_journals_is_not_opened(tmp_path):
    """A rollback journal means a reader's shared lock holds the writer's commits back:
    such a file is listed, never opened, until it is finished."""
    run = Run(_partial(tmp_path), watchable=False).go(2000)
    cat = catalog.Catalog(trace_dir=tmp_path)
    entry, = cat.unfinished()
    assert entry.running and not entry.readable and not live.in_wal_mode(_partial(tmp_path))
    with pytest.raises(catalog.NotReadableYet, match="opens once it is finished"):
        cat.path(entry.name)
    # The writer holds the file exclusively: anything that opened it would fail or wait.
    run.writer.db.execute("BEGIN EXCLUSIVE")
    run.writer.db.execute("UPDATE run SET seed = 1")
    app = _app(tmp_path)
    home = importlib.import_module("dashapp.pages.home")
    with app.server.test_request_context("/"):
        text = _texts(home.layout())
    assert "with a rollback journal" in text and "opens once it is finished" in text
    run.writer.db.execute("COMMIT")
    run.finish()


def test_a_killed_run_s_file_stays_readable_and_names_how_to_finish_it(tmp_path):
    script = textwrap.dedent(f"""
        import os, sys
        from pathlib import Path
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        from test_watch import HOLD_SECONDS, LivePyramid, Run
        LivePyramid.hold_seconds = HOLD_SECONDS
        Run(Path({str(tmp_path)!r}) / f".run.sqlite.partial-{{os.getpid()}}").go(5000)
        os.kill(os.getpid(), 9)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == -9, proc.stderr
    entry, = catalog.Catalog(trace_dir=tmp_path).unfinished()
    assert not entry.running and entry.readable
    meta = catalog.trace_meta(tmp_path / entry.name)  # read-only, its log left beside it
    assert meta.live.tasks > 1000 and not meta.live.running
    state, sentence = following.status(meta)
    assert state == "interrupted" and "`python -m simulator finalize run.sqlite`" in sentence
    page = views.overview(tmp_path / entry.name, urls.OverviewState(trace=entry.name))
    assert any(c.series.present.any() for c in page.charts)


def test_finalize_waits_for_a_viewer_s_connection_to_close(tmp_path):
    """Leaving WAL needs the file to itself, and SQLite tries that once: a viewer that
    is reading at that moment must make finalize wait, not fail (measured: one PageRank
    run in five failed with "database is locked" while the app followed it)."""
    path = _partial(tmp_path)
    run = Run(path).go(3000)
    reader = subprocess.Popen(
        [sys.executable, "-c", "import sqlite3, sys, time\n"
         f"db = sqlite3.connect('file:{path}?mode=ro', uri=True)\n"
         "db.execute('SELECT count(*) FROM task').fetchone()\n"
         "print('reading', flush=True)\n"
         "time.sleep(0.8)\n"
         "db.close()\n"], stdout=subprocess.PIPE, text=True)
    assert reader.stdout.readline() == "reading\n"
    run.finish()
    assert reader.wait(timeout=30) == 0
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    assert db.execute("SELECT finalized FROM run").fetchone() == (1,)
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_follow_keeps_the_window_s_width_at_the_end_of_the_run():
    state, errors = urls.parse_overview({"t0": ["100"], "t1": ["300"], "follow": ["1"]})
    assert errors == [] and state.follow and urls.search(state) == "?t0=100&t1=300&follow=1"
    assert urls.parse_component({"follow": ["yes"]})[1] == ["Ignored follow='yes': give 1 or 0."]
    assert urls.follow_window(100, 300, 1000) == (800, 1000)
    assert urls.follow_window(100, 300, 50) == (0, 200)
    # A zoom is the window the user chose: it stops following.
    zoomed = urls.component_after_zoom(urls.ComponentState(t0=1, t1=9, follow=True),
                                       {"xaxis.range[0]": 2e-12, "xaxis.range[1]": 5e-12})
    assert (zoomed.t0, zoomed.t1, zoomed.follow) == (2, 5, False)


def _app(directory):
    from dashapp import app as app_module

    app = app_module._created[0] if app_module._created else app_module.create_app(
        trace_dir=directory)
    app.server.config["GPUSCOPE_CATALOG"].__init__(trace_dir=directory)
    return app


def _find(component, ident):
    """The component with id ``ident`` in a layout."""
    if getattr(component, "id", None) == ident:
        return component
    children = getattr(component, "children", None)
    for child in children if isinstance(children, (list, tuple)) else [children]:
        if child is not None and hasattr(child, "to_plotly_json"):
            found = _find(child, ident)
            if found is not None:
                return found
    return None


def test_the_pages_of_a_running_trace_say_so_and_follow_it_to_its_finished_trace(tmp_path):
    path = _partial(tmp_path)
    run = Run(path).go(4000)
    app = _app(tmp_path)
    home = importlib.import_module("dashapp.pages.home")
    overview = importlib.import_module("dashapp.pages.overview")
    component = importlib.import_module("dashapp.pages.component")
    search = f"?trace={path.name}"
    with app.server.test_request_context("/"):
        page = home.layout()
        text = _texts(page)
        assert "Running and interrupted runs" in text and "still being written" in text
        seen = _find(page, "home-seen").data
        assert seen == {"listed": [path.name], "finished": []}
        page = overview.layout(trace=path.name)
        assert "Running: " in _texts(page) and "The view follows it" in _texts(page)
        charts, _header, pages, banner, colour, stop, moved = overview.follow_run(1, search)
        assert charts and pages >= 1 and colour == "info" and stop is False
        assert moved is no_update
        before = int(_texts(banner[4]))  # the hidden task count
        run.go(3000)
        banner = overview.follow_run(2, search)[3]
        assert int(_texts(banner[4])) > before
        figure, *_rest, stop, moved = component.follow_run(1, search + "&loc=GPU.L2%5B0%5D")
        assert figure is not None and stop is False
    run.finish()
    os.replace(path, tmp_path / "run.sqlite")  # what the command does once it is finalized
    with app.server.test_request_context("/"):
        *_drawn, banner, colour, stop, moved = overview.follow_run(3, search)
        assert stop is True and moved == "?trace=run.sqlite" and "opening run.sqlite" in \
            _texts(banner)
        text = _texts(overview.layout(trace=path.name))
        running, seen = home.follow_runs(4, seen)  # the Traces page drawn before the end
    assert "has finished: its trace is run.sqlite" in text
    assert _texts(running) == "Running and interrupted runs Finished:  run.sqlite"
    assert seen == {"listed": [], "finished": ["run.sqlite"]}

