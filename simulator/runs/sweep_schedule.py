"""Running a sweep's points on a scheduler and collecting their rows into the summary.

Three schedulers run the same ``sweep_point.run_point`` and differ in nothing else:

* ``processes``: a local pool of worker processes (forked from a server process that
  has imported the simulator once, so a worker starts in milliseconds);
* ``dask``: a ``dask.distributed.LocalCluster`` started for the sweep;
* ``tcp://HOST:PORT``: an existing Dask cluster (``dask scheduler`` on one machine,
  ``dask worker tcp://HOST:PORT`` on each), whose workers have this package installed.

Rows are written to ``summary.csv`` as points finish, so an interrupted sweep keeps
what it did, and a trace a worker sent back is written into the directory here.
"""
import concurrent.futures
import contextlib
import glob
import logging
import multiprocessing
import os
import re
import secrets
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

from ..user_input import positive_argument
from .sweep import SUMMARY, SweepError, point_key, trace_name, write_atomically, write_summary
from .sweep_point import (
    CTRL_C,
    RESULTS,
    TOKEN_FILE,
    PointTask,
    TracePlace,
    hold_ctrl_c,
    run_point,
    run_point_in_pool,
)

_CLUSTER = re.compile(r"^(tcp|tls)://[^\s/:]+:\d+$")


def add_scheduler_arguments(parser):
    """The options that say where tasks run: --scheduler, --workers, --results."""
    parser.add_argument("--scheduler", default="processes",
                        help="processes (default), dask or tcp://HOST:PORT")
    parser.add_argument("--workers", type=positive_argument, metavar="N",
                        help="worker processes of processes and dask (default: one per core)")
    parser.add_argument("--results", choices=RESULTS, default="auto",
                        help="traces written into DIR by the workers (shared), sent back to"
                             " the client (send), or whichever works (auto, the default)")


def check_scheduler(text):
    """``processes``, ``dask`` or a Dask scheduler address; SweepError otherwise."""
    if text in ("processes", "dask") or _CLUSTER.match(text):
        return text
    raise SweepError(f"--scheduler {text!r}: expected processes, dask or tcp://HOST:PORT")


@dataclass
class Outcome:
    rows: list        # every summary row, in plan order (then rows of earlier plans)
    ran: int          # points run now
    skipped: int      # points done by an earlier run in the same directory
    failed: int       # points run now that failed


def run_sweep(sweep, directory, existing, scheduler="processes", workers=None, results="auto",
              progress=True):
    """Run the points of ``sweep`` not yet done in ``directory``; the ``Outcome``.

    ``existing`` is the summary already there (``sweep.prepare``); its rows with status
    ok whose trace is still in the directory count as done.
    """
    directory = Path(directory).resolve()
    keys = sweep.keys
    plan = sweep.points()
    rows = dict(existing)
    token = new_token()
    todo = [(point, task) for point, task in point_tasks(sweep, directory, token, results)
            if not _done(rows.get(point_key(point, keys)), directory)]
    bar = _progress_bar(progress, len(plan), len(plan) - len(todo))  # on a terminal only
    failed = 0

    def record(point, row):
        nonlocal failed
        failed += row["status"] != "ok"
        rows[point_key(point, keys)] = {**point, **row}
        write_summary(directory / SUMMARY, keys, _ordered(rows, plan, keys))
        bar.update(1)

    try:
        run_tasks(todo, directory, token, scheduler, workers, record)
        write_summary(directory / SUMMARY, keys, _ordered(rows, plan, keys))
    finally:
        bar.close()
    return Outcome(_ordered(rows, plan, keys), len(todo), len(plan) - len(todo), failed)


def new_token():
    """The secret a client leaves in its directory (``sweep_point.TOKEN_FILE``): a worker
    that reads it there shares the client's file system."""
    return secrets.token_hex(16)


def run_tasks(todo, directory, token, scheduler, workers, record):
    """Run the tasks of ``todo`` ((key, task) pairs; each task has ``run()`` and a
    ``place`` for its trace, see ``sweep_point.run_point``) on ``scheduler``,
    and call ``record(key, row)`` here as each finishes, after writing a trace its
    worker sent back into ``directory`` (absolute). ``token`` is the one the tasks
    carry; it is left in the directory while they run.

    Ctrl-C stops the tasks in progress at their next clean point (their rows are
    recorded) and cancels the others; traces left half-written are removed.
    """
    if not todo:
        return
    write_atomically(directory / TOKEN_FILE, token)
    try:
        with _pool(scheduler, min(workers or os.cpu_count() or 1, len(todo))) as pool:
            futures = {}

            def finished(future):
                row = _result(future)
                data = row.pop("data", None)
                if data is not None:
                    write_atomically(directory / row["trace"], data)
                record(futures[future], row)

            try:
                # Pool processes start from here (and a forkserver with them): with
                # Ctrl-C blocked, which they inherit; see sweep_point.hold_ctrl_c.
                with _holding(CTRL_C):
                    for key, task in todo:
                        futures[pool.submit(task)] = key
                for future in pool.as_completed(futures):
                    finished(future)
            except KeyboardInterrupt:
                # Tasks in progress stop at their next clean point (Ctrl-C reaches the
                # workers too) or finish; their rows are kept. Another Ctrl-C leaves them.
                running = pool.stop(futures)
                if running:
                    print(f"interrupted: waiting for the {len(running)} points in progress"
                          " (Ctrl-C again to leave them)", file=sys.stderr)
                for future in pool.as_completed(running):
                    finished(future)
                raise
    except KeyboardInterrupt:
        # Workers stopped before a task could stop cleanly leave its trace half-written.
        _remove_partial_traces(directory, [task.place.name for _, task in todo])
        raise
    finally:
        (directory / TOKEN_FILE).unlink(missing_ok=True)


@contextlib.contextmanager
def _holding(signals):
    """Block ``signals`` in this thread (they stay pending) until the block ends."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _remove_partial_traces(directory, names):
    for name in names:
        for path in directory.glob(f".{glob.escape(name)}.partial-*"):
            path.unlink(missing_ok=True)


def _done(row, directory):
    return (row is not None and row.get("status") == "ok"
            and (not row["trace"] or (directory / row["trace"]).is_file()))


def point_tasks(sweep, directory, token, results="auto"):
    """(point, ``PointTask``) of every point of ``sweep`` writing into ``directory``."""
    plan = sweep.points()
    names = _unique_names(plan)
    return [(point, PointTask(
        workload=sweep.workload, options=sweep.options, point=point, config=sweep.config,
        seed=sweep.seed, trace_level=sweep.trace_level, window=sweep.window,
        instrument=sweep.instrument, place=TracePlace(str(directory), names[i], token, results)))
        for i, point in enumerate(plan)]


def _unique_names(plan):
    """Trace file names in plan order; two points whose values clean up alike get a number."""
    names = []
    for i, point in enumerate(plan):
        name = trace_name(point)
        if name in names:
            name = f"{name.removesuffix('.sqlite')}__{i}.sqlite"
        names.append(name)
    return names


def _ordered(rows, plan, keys):
    planned = [point_key(p, keys) for p in plan]
    out = [rows[k] for k in planned if k in rows]
    return out + [row for k, row in rows.items() if k not in set(planned)]


def _result(future):
    """The row a finished future holds; a worker that died gives a failed row."""
    try:
        return future.result()
    except Exception as exc:  # noqa: BLE001 - a lost worker fails its point, not the sweep
        return {"trace": "", "status": "failed", "wall_s": None,
                "error": f"the worker was lost ({type(exc).__name__}: {exc})"}


def _progress_bar(enabled, total, done):
    from ..tracing.progress import progress_bar
    return progress_bar(enabled, total=total, initial=done, unit=" points", desc="sweep")


@dataclass
class _Pool:
    submit: object          # task -> future
    as_completed: object    # futures -> futures in the order they finish
    stop: object            # futures -> those still running after cancelling the rest


def _cancel_pending(futures):
    return [f for f in futures if not f.cancel() and not f.done()]


@contextlib.contextmanager
def _pool(scheduler, workers):
    if scheduler == "processes":
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["simulator.runs.sweep_point"])
        stopped = context.Event()
        executor = concurrent.futures.ProcessPoolExecutor(
            max_workers=workers, mp_context=context, initializer=hold_ctrl_c, initargs=(stopped,))

        def stop(futures):
            stopped.set()  # points queued in a process already start no more
            return _cancel_pending(futures)

        try:
            yield _Pool(lambda task: executor.submit(run_point_in_pool, task),
                        concurrent.futures.as_completed, stop)
        except BaseException:
            executor.shutdown(wait=False, cancel_futures=True)
            raise
        executor.shutdown(wait=True)
        return
    with _dask_client(scheduler, workers) as client:
        from distributed import as_completed

        def cancel_all(futures):
            # A cluster's workers are not ours to interrupt: every point is cancelled.
            client.cancel(list(futures))
            return []

        yield _Pool(lambda task: client.submit(run_point, task, pure=False,
                                               key=f"sweep-point-{secrets.token_hex(8)}"),
                    as_completed, cancel_all)


@contextlib.contextmanager
def _dask_client(scheduler, workers):
    from distributed import Client, LocalCluster

    if scheduler == "dask":
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                          dashboard_address=None, silence_logs=logging.ERROR) as cluster, \
                Client(cluster) as client:
            yield client
        return
    try:
        client = Client(scheduler, timeout="15s")
    except OSError as exc:
        raise SweepError(f"--scheduler {scheduler}: cannot reach the Dask scheduler ({exc})") \
            from None
    with client:
        yield client
