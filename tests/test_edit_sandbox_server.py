"""Edit-and-run on a real server keeps a deployment's files private (issue 37), over HTTP
as a visitor's browser talks to it: under the README's gunicorn command, every hostile
``#include`` ends in a one-line refusal and the canary token appears in no response,
run trace, job file or log line; a header of the server's include folder works; and a
server started with ``--no-edit`` (or ``GPUSCOPE_NO_EDIT=1`` under gunicorn) serves every
view but refuses a run request sent by hand, starting no simulator at all."""
import json
from urllib.parse import parse_qs

import dash_client as client
import pytest
from app_server import serve, serve_gunicorn
from canary import RULE, files_holding, make_canary
from test_run_queue import _standby_children, _until

SEARCH = "?trace=v3.sqlite&launch=0"
pytestmark = pytest.mark.slow


def _submit(url, deps, source, options=""):
    """Every response of one edited run, from the Run click until it ends."""
    start = client.find(deps, "kv-job.data", "kv-run.n_clicks")
    status, _s, answer = client.post(url, client.body(start, {
        "kv-run.n_clicks": 1, "kv-editor.value": source, "kv-size.value": "256",
        "kv-options.value": options, "_pages_location.search": SEARCH}))
    assert status == 200, answer
    answers = [answer]
    job = answer["response"].get("kv-job", {}).get("data")
    poll = client.find(deps, "kv-run-status.children", "kv-poll.n_intervals")

    def ended():
        _status, _s, polled = client.post(url, client.body(poll, {
            "kv-poll.n_intervals": 1, "kv-job.data": job, "kv-editor.value": source,
            "_pages_location.search": SEARCH}))
        answers.append(polled)
        return "kv-run-progress" not in str(polled)  # in flight: starting, waiting, running
    if job is not None and "_pages_location" not in answer["response"]:
        _until(ended, 60, "the run ended")
    return answers


def test_hostile_includes_under_gunicorn_leak_nothing(served_traces, tmp_path):
    canary = make_canary(tmp_path)
    runs = tmp_path / "runs"
    env = {"GPUSCOPE_RUN_DIR": str(runs), "GPUSCOPE_KERNEL_INCLUDE": str(canary.include_dir)}
    seen = []
    with serve_gunicorn(served_traces, workers=2, env=env) as (url, _proc):
        deps = client.dependencies(url)
        page = client.open_page(url, deps, "/kernel", SEARCH)[2]
        assert "kv-editor" in str(page)
        for name, source, options in canary.hostile_edits():
            answers = _submit(url, deps, source, options)
            seen += answers
            last = json.dumps(answers[-1]["response"])
            assert "refused" in last and RULE in last, (name, last[:500])
        answers = _submit(url, deps, canary.allowed_edit())
        seen += answers
        search = answers[-1]["response"]["_pages_location"]["search"]
        run = parse_qs(search.lstrip("?"))["run"][0]
        page = client.open_page(url, deps, "/kernel", f"?trace=v3.sqlite&run={run}")[2]
        seen.append(page)
        assert "(edited run)" in str(page) and "kernel.cl" in str(page)
        # No scratch path on the page: the edited kernel is named as the visitor knows it.
        assert str(runs) not in str(page) and "/tmp" not in str(page)
    for answer in seen:
        assert canary.token not in json.dumps(answer)
    assert files_holding(canary.token, runs, served_traces) == []
    log = (served_traces / "server.log").read_text()
    assert "Traceback" not in log, log[-3000:]


@pytest.mark.parametrize("server", ["python -m dashapp --no-edit", "gunicorn GPUSCOPE_NO_EDIT=1"])
def test_a_read_only_server_serves_every_view_and_runs_nothing(served_traces, tmp_path, server):
    runs = tmp_path / "runs"
    env = {"GPUSCOPE_RUN_DIR": str(runs)}
    start = serve(served_traces, env, args=["--no-edit"]) if server.startswith("python") else \
        serve_gunicorn(served_traces, workers=1, env={**env, "GPUSCOPE_NO_EDIT": "1"})
    with start as (url, proc):
        deps = client.dependencies(url)
        for path, search, shown in [("/", "", "home-running"),
                                    ("/overview", "?trace=v3.sqlite", "gs-ov-graph"),
                                    ("/component", "?trace=v3.sqlite&loc=GPU.CommandProcessor",
                                     "cv-header"),
                                    ("/kernel", SEARCH, "kv-bank")]:
            status, _s, page = client.open_page(url, deps, path, search)
            assert status == 200 and shown in str(page), (path, str(page)[:300])
            assert "kv-editor" not in str(page)
        assert "kv-read-only" in str(page)
        answers = _submit(url, deps, canary_free_kernel())
        assert "runs no kernels" in str(answers[-1]["response"])
        assert not _standby_children(proc.pid)  # not even a spare simulator waits
        assert not any(runs.glob("*.sqlite")) and not (runs / "jobs").exists()


def canary_free_kernel():
    return "kernel void reduce(global float *g_idata, global float *g_odata, int n," \
           " local float *sdata) { }\n"
