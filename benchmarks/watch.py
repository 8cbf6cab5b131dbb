"""What watching a run costs the run: WAL against a rollback journal, and the app following it.

A run is watchable because its trace is written in WAL mode (readers never block the
writer). Two measurements, each against its baseline in the same rounds (alternated, so
a noisy stretch of the machine falls on both), medians:

1. WAL against a rollback journal, at full detail:
   * the writer alone: the same recorded synthetic task stream replayed through the
     tracer into a ``TraceWriter``, load and finalize, wall and CPU time;
   * a whole PageRank run as ``run`` does it (writer process beside the simulation),
     from the start until the trace is finalized and in place.
2. The app following a run: ``python -m simulator run pagerank`` processes, alone and
   while the real app (``python -m dashapp``) serves the trace directory and a client
   asks it, every ``--every`` seconds, for what a browser following the run asks (the
   Overview's redraw; with ``--component`` also the Component view's). Prints the run's
   wall time both ways, the ratio, and the CPU time the app spent meanwhile.

    python benchmarks/watch.py [--rounds 3] [--tasks 1000000] [--every 1] [--component]
                               [--iterations 3]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from app_server import serve  # noqa: E402
from dash_client import body, dependencies, find, post  # noqa: E402
from simulate import Prepared  # noqa: E402
from trace_write import record, run_ours  # noqa: E402

from simulator.gpu import default_config  # noqa: E402
from simulator.gpu.run import simulate  # noqa: E402
from simulator.tracing import Tracer  # noqa: E402
from simulator.tracing.writer import remove_trace_files  # noqa: E402


def _median_line(label, runs):
    return f"{label} wall {statistics.median(r[0] for r in runs):6.2f} s  cpu " \
           f"{statistics.median(r[1] for r in runs):6.2f} s"


def writer_alone(recorded, path, watchable):
    """(wall, cpu) seconds of loading and finalizing the recorded stream."""
    remove_trace_files(path)
    cpu = time.process_time()
    _written, wall = run_ours(*recorded, path, Tracer, watchable=watchable)
    return wall, time.process_time() - cpu


def _children_cpu():
    usage = os.times()
    return usage.children_user + usage.children_system


def pagerank_run(workload, path, watchable):
    """(wall, cpu of this process and the writer process) of one traced PageRank run."""
    remove_trace_files(path)
    wall, cpu, children = time.perf_counter(), time.process_time(), _children_cpu()
    simulate(workload, default_config(), path, progress=False, watchable=watchable)
    return (time.perf_counter() - wall,
            time.process_time() - cpu + _children_cpu() - children)


def compare_journals(rounds, tasks, iterations, tmp):
    print(f"1. WAL against a rollback journal, full detail, median of {rounds} rounds:")
    recorded = record(tasks, 1)
    workload = Prepared("pagerank", {"iterations": iterations})
    for label, run, arg in (
            (f"writer alone, {len(recorded[0].rows):,} synthetic tasks", writer_alone, recorded),
            (f"PageRank run ({iterations} iterations), writer process beside it", pagerank_run,
             workload)):
        results = {True: [], False: []}
        for _ in range(rounds):
            for watchable in (False, True):
                results[watchable].append(run(arg, Path(tmp) / "journal.sqlite", watchable))
        wal, rollback = results[True], results[False]
        print(f"   {label}:")
        print("     " + _median_line("rollback journal", rollback))
        print("     " + _median_line("WAL (watchable) ", wal))
        ratios = [statistics.median(r[i] for r in wal) / statistics.median(r[i] for r in rollback)
                  for i in (0, 1)]
        print(f"     WAL / rollback: wall {ratios[0]:.3f}x, cpu {ratios[1]:.3f}x")


def _process_cpu(pid):
    """CPU seconds (user + system) process ``pid`` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Follower(threading.Thread):
    """Asks the app, every ``every`` seconds, for what a browser following the run asks."""

    def __init__(self, url, directory, pid, every, component):
        super().__init__(daemon=True)
        self.url, self.name_ = url, f".pr.sqlite.partial-{pid}"
        self.directory, self.every, self.component = directory, every, component
        deps = dependencies(url)
        self.calls = [(find(deps, "ov-charts.children", "ov-live-tick.n_intervals"), "")]
        if component:
            self.calls.append((find(deps, "cv-graph.figure", "cv-live-tick.n_intervals"),
                               "&loc=GPU.SA%5B0%5D.CU%5B0%5D"))
        self.stop = threading.Event()
        self.answered, self.asked, self.seconds = 0, 0, []

    def run(self):
        tick = 0
        while not self.stop.wait(self.every):
            if not (self.directory / self.name_).exists():
                continue
            tick += 1
            for dep, extra in self.calls:
                prefix = dep["inputs"][0]["id"]
                self.asked += 1
                status, seconds, answer = post(self.url, body(dep, {
                    f"{prefix}.n_intervals": tick,
                    "_pages_location.search": f"?trace={self.name_}{extra}"}))
                if status == 200 and _redrawn(answer):
                    self.answered += 1
                    self.seconds.append(seconds)


def _redrawn(answer):
    """Whether a follow callback's answer redrew the view (charts or a figure), rather
    than saying the run was finishing or gone."""
    response = answer.get("response", {}) if isinstance(answer, dict) else {}
    charts = response.get("ov-charts", {}).get("children")
    return bool(charts and len(charts) > 1) or "figure" in response.get("cv-graph", {})


def run_process(directory, iterations):
    """A ``run pagerank`` process writing into ``directory`` (started, not waited for)."""
    remove_trace_files(directory / "pr.sqlite")
    return subprocess.Popen([sys.executable, "-m", "simulator", "run", "pagerank",
                             "--iterations", str(iterations), "--no-progress", "--force",
                             "-o", str(directory / "pr.sqlite")],
                            stdout=subprocess.DEVNULL, cwd=ROOT)


def follow_cost(rounds, every, component, iterations, tmp):
    what = "Overview" + (" and Component view" if component else "")
    print(f"\n2. a PageRank run ({iterations} iterations) alone and followed by the app ({what}"
          f" every {every:g} s), median of {rounds} rounds:")
    directory = Path(tmp) / "served"
    directory.mkdir()
    alone, followed, app_cpu, answers = [], [], [], []
    with serve(directory) as (url, server):
        for _ in range(rounds):
            started = time.perf_counter()
            run_process(directory, iterations).wait()
            alone.append(time.perf_counter() - started)

            before = _process_cpu(server.pid)
            started = time.perf_counter()
            proc = run_process(directory, iterations)
            client = Follower(url, directory, proc.pid, every, component)
            client.start()
            proc.wait()
            followed.append(time.perf_counter() - started)
            client.stop.set()
            client.join()
            app_cpu.append(_process_cpu(server.pid) - before)
            answers.append((client.answered, client.asked, client.seconds))
    a, f = statistics.median(alone), statistics.median(followed)
    redrawn = [n for n, _, _ in answers]
    asked = [n for _, n, _ in answers]
    latency = (statistics.median(s for _, _, seconds in answers for s in seconds)
               if any(redrawn) else 0)
    print(f"   alone    {a:6.2f} s   (rounds {', '.join(f'{t:.2f}' for t in alone)})")
    print(f"   followed {f:6.2f} s   (rounds {', '.join(f'{t:.2f}' for t in followed)})")
    print(f"   slowdown while followed: {f / a:.3f}x; the app redrew {statistics.median(redrawn):.0f}"
          f" views of {statistics.median(asked):.0f} asked per run (the others: the run was"
          f" starting or finishing; median {latency * 1000:.0f} ms each), using"
          f" {statistics.median(app_cpu):.2f} s of CPU per run")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tasks", type=int, default=1_000_000,
                        help="synthetic tasks for the writer-alone comparison")
    parser.add_argument("--every", type=float, default=1.0, help="seconds between redraws")
    parser.add_argument("--component", action="store_true",
                        help="follow the Component view of a CU as well")
    parser.add_argument("--iterations", type=int, default=3,
                        help="PageRank iterations (more: a longer run)")
    parser.add_argument("--skip-journals", action="store_true")
    parser.add_argument("--skip-follow", action="store_true")
    args = parser.parse_args()
    print(f"load average at start: {', '.join(f'{x:.1f}' for x in os.getloadavg())}"
          f" on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_journals:
            compare_journals(args.rounds, args.tasks, args.iterations, tmp)
        if not args.skip_follow:
            follow_cost(args.rounds, args.every, args.component, args.iterations, tmp)
    print(f"load average at end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
