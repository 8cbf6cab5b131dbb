"""Trace fixtures for the app's tests, and checks that they hold what the tests assume.

``exact_trace`` is small enough to check every metric by hand; ``synthetic_trace`` is
the seeded GPU-shaped generator at a few thousand tasks. Other app test modules import
the builders from here (the simulator is used only to *write* test traces).
"""
import sqlite3

from simulator.tracing.api import Tracer
from simulator.tracing.synthetic import generate
from simulator.tracing.writer import TraceWriter

NS = 1000  # ps per tick in the exact trace: ticks are nanoseconds


def write_exact_trace(path):
    """A hand-checkable trace (times in ns):

    * Driver: Simulation root [0, 100).
    * GPU.CU[0]: req_out ReadReq A [10, 50) and B [30, 70), children of the root.
    * GPU.L2[0]: req_in of A [20, 40) with a cache_transaction child [22, 38);
      req_in of B [35, 60).

    So GPU.L2[0] has 2 arrivals (20, 35), 2 completions (40, 60), latencies 20 + 25 ns,
    task time 20 + 16 + 25 = 61 ns, buffer waits [10, 20) + [30, 35) = 15 ns and is busy
    over [20, 60) = 40 ns; GPU.CU[0] has 80 ns of pending outgoing requests.
    """
    writer = TraceWriter(path, command="exact fixture", workload="exact", config={"cus": 1},
                         seed=7)
    tr = Tracer(writer, ps_per_tick=NS)
    driver, cu, l2 = tr.location("Driver"), tr.location("GPU.CU[0]"), tr.location("GPU.L2[0]")
    sim = tr.kind("Simulation", "Simulation")
    out, inn = tr.kind("req_out", "ReadReq"), tr.kind("req_in", "ReadReq")
    cache = tr.kind("cache_transaction", "read")
    hit = tr.tag_name("read-hit")
    root = tr.start_task(-1, sim, driver, 0)
    a_out = tr.trace_req_initiate(root, out, cu, 10)
    a_in = tr.trace_req_receive(a_out, inn, l2, 20)
    a_tx = tr.start_task(a_in, cache, l2, 22, details={"address": 4096})
    tr.tag_task(a_tx, 23, hit)
    b_out = tr.trace_req_initiate(root, out, cu, 30)
    b_in = tr.trace_req_receive(b_out, inn, l2, 35)
    tr.end_task(a_tx, 38)
    tr.trace_req_complete(a_in, 40)
    tr.trace_req_finalize(a_out, 50)
    tr.trace_req_complete(b_in, 60)
    tr.trace_req_finalize(b_out, 70)
    tr.end_task(root, 100)
    tr.close(100)
    writer.finalize(completed=True, virtual_end_ps=100 * NS)
    writer.close()
    return path


def write_synthetic_trace(path, tasks=6000, seed=3):
    generate(path, tasks=tasks, seed=seed)
    return path


def test_exact_trace_holds_the_documented_tasks(tmp_path):
    path = write_exact_trace(tmp_path / "exact.sqlite")
    db = sqlite3.connect(path)
    rows = db.execute("SELECT t.start_ps, t.end_ps, k.category FROM task t JOIN kind k"
                      " ON k.id = t.kind ORDER BY t.id").fetchall()
    assert rows == [(0, 100_000, "Simulation"), (10_000, 50_000, "req_out"),
                    (20_000, 40_000, "req_in"), (22_000, 38_000, "cache_transaction"),
                    (30_000, 70_000, "req_out"), (35_000, 60_000, "req_in")]
    assert db.execute("SELECT finalized, completed FROM run").fetchone() == (1, 1)


def test_synthetic_trace_has_the_l2_banks(tmp_path):
    path = write_synthetic_trace(tmp_path / "synthetic.sqlite")
    names = [r[0] for r in sqlite3.connect(path).execute(
        "SELECT name FROM location WHERE name LIKE '%L2%' AND task_count > 0")]
    assert sorted(names) == sorted(f"GPU.L2[{i}]" for i in range(16))


def test_a_run_s_note_is_kept_in_its_trace_and_read_back(tmp_path):
    from dashapp.catalog import trace_meta
    from simulator.__main__ import main

    out = tmp_path / "noted.sqlite"
    assert main(["run", "vectoradd", "--size", "256", "--local", "64", "--trace-level", "kernel",
                 "--no-progress", "--note", "what it is for", "-o", str(out)]) == 0
    assert trace_meta(out).note == "what it is for"
    plain = tmp_path / "plain.sqlite"
    assert main(["run", "vectoradd", "--size", "256", "--local", "64", "--trace-level", "kernel",
                 "--no-progress", "-o", str(plain)]) == 0
    assert trace_meta(plain).note is None
