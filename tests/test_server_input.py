"""No URL or request can take the server down (issue 17). A real server, capped by
``prlimit --as``, is fed the filters that once exhausted its memory, many distinct ones,
and stays up and small; every callback is fed crafted values (a zoom range of 1e300,
malformed windows, wrong types, deep nesting) and malformed requests, and no request is
answered with HTTP 500 and no traceback reaches the log."""
import json
import shutil
import sys
import urllib.parse
from pathlib import Path

import dash_client as client
import pytest
from app_server import _free_port, _running
from dash._utils import split_callback_id
from test_app_traces import write_synthetic_trace

ROOT = Path(__file__).resolve().parents[1]
MEMORY_CAP = 3 << 30
"""The server's address-space limit: a few times what it needs (Python, numpy, Dash,
thread stacks), far below what the old regex engine took for one filter (8 GB)."""


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    directory = tmp_path_factory.mktemp("input")
    write_synthetic_trace(directory / "syn.sqlite", tasks=5000)
    return directory


def _capped(directory):
    port = _free_port()
    command = ["prlimit", f"--as={MEMORY_CAP}", sys.executable, "-m", "dashapp",
               "--trace-dir", str(directory), "--port", str(port)]
    return _running(command, directory, port, {"MALLOC_ARENA_MAX": "2"})


def _rss_mb(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def _overview(url, deps, pattern):
    search = "?" + urllib.parse.urlencode({"trace": "syn.sqlite", "filter": pattern})
    status, _s, answer = client.open_page(url, deps, "/overview", search)
    assert status == 200, answer
    return str(answer)


def test_catastrophic_filters_leave_a_memory_capped_server_up_and_small(traces):
    with _capped(traces) as (url, server):
        deps = client.dependencies(url)
        assert "gs-ov-graph" in _overview(url, deps, "L2")
        before = _rss_mb(server.pid)
        text = _overview(url, deps, "(?:(?:a{1000}){1000}){1000}")
        assert "repetition size" in text and "Showing every component" in text
        patterns = ([f"(?:{c}{{1000}}){{{n}}}" for c in "bcdefgh" for n in range(994, 1001)]
                    + [f"(?:[\\pL\\pN]{{{n}}})" for n in range(900, 950)]  # over the budget
                    + ["".join(f"{c}{{{n}}}" for c in "abcdefghijklmnopqr")  # accepted, large
                       for n in range(900, 950)])
        answers = [_overview(url, deps, p) for p in patterns]
        assert all("Invalid regular expression" in a for a in answers[:-50])
        assert all("No component matches" in a for a in answers[-50:])
        grown = _rss_mb(server.pid) - before
        # Other pages still answer.
        status, _s, home = client.open_page(url, deps, "/", "")
        assert status == 200 and "syn.sqlite" in str(home)
        assert server.poll() is None
        print(f"\n{len(patterns) + 1} hostile filters: resident memory grew {grown:.0f} MB"
              f" (from {before:.0f} MB)")
        assert grown < 100  # the old engine kept ~140 MB for each (?:b{1000}){1000}
    log = (traces / "server.log").read_text()
    assert "Traceback" not in log, log[-3000:]


CRAFTED = [None, 1e300, -1e300, -1, 0, 2 ** 70, "x", "", "1e300", True, [], {}, [None] * 3,
           {"xaxis.range[0]": 0, "xaxis.range[1]": 1e300},
           {"xaxis.range": [1e300, -1e300]}, {"xaxis.range": ["a", None]},
           {"xaxis.range[0]": "nan", "xaxis.range[1]": "inf"}, {"xaxis.autorange": "yes"},
           {"points": [{"customdata": [1e300, 0, 0, 0, {"a": 1}, 0, 0, 0, 0, 0, 1e300, -1]}]},
           {"points": [{"customdata": [-1, 0, 0, 0, "GPU", 0, 0, 0, 0, 0, "x", "y"]}]},
           {"points": "none"}, "?trace=syn.sqlite&t0=1&t1=0", "?t0=-5&t1=1e300",
           "9,x", "5,1", "1,2,3", {"run": "../../etc/passwd", "trace": 5}, {"run": ["a"]},
           "x" * 300_000, json.loads("[" * 50 + "]" * 50)]


def _send_everywhere(url, deps, values):
    """Each server callback called with every crafted value in every input and state."""
    answered = []
    for dep in deps:
        ids = [str(s["id"]) for s in dep["inputs"] + dep["state"]]
        if dep.get("clientside_function") or '{"' in dep["output"] or any(
                i.startswith("{") for i in ids):
            continue  # run in the browser / pattern-matching ids: sent separately below
        names = [f"{s['id']}.{s['property']}" for s in dep["inputs"] + dep["state"]]
        for value in values:
            given = {name: value for name in names}
            if "_pages_location.search" in given and not isinstance(value, str):
                given["_pages_location.search"] = "?trace=syn.sqlite"
            status, _s, answer = client.post(url, client.body(dep, given))
            answered.append((status, dep["output"], repr(value)[:60], str(answer)[:200]))
    return answered


def test_crafted_callback_payloads_never_get_a_500(traces):
    with _running([sys.executable, "-m", "dashapp", "--trace-dir", str(traces), "--port",
                   str(port := _free_port())], traces, port, None) as (url, server):
        deps = client.dependencies(url)
        answered = _send_everywhere(url, deps, CRAFTED)
        # The Overview's zoom (a pattern-matching input) with a range of 1e300 seconds.
        zoom = next(d for d in deps if "ov-graph" in json.dumps(d["inputs"]))
        graph = {"type": "ov-graph", "index": 0}
        for relayout in ({"xaxis.range[0]": 0, "xaxis.range[1]": 1e300},
                         {"xaxis.range": [1e300, 1e301]}, {"xaxis.range": "x"}, None, 7):
            status, _s, answer = client.post(url, {
                "output": zoom["output"], "outputs": split_callback_id(zoom["output"]),
                "inputs": [[{"id": graph, "property": "relayoutData", "value": relayout}]],
                "state": [{"id": "_pages_location", "property": "search",
                           "value": "?trace=syn.sqlite"}],
                "changedPropIds": [json.dumps(graph, separators=(",", ":"), sort_keys=True)
                                   + ".relayoutData"]})
            answered.append((status, "zoom", repr(relayout), str(answer)[:200]))
            if relayout == {"xaxis.range[0]": 0, "xaxis.range[1]": 1e300}:
                assert status == 200 and "t1=4611686018427387904" in str(answer), answer
        # Requests no browser sends: not JSON, not Dash's, a callback that does not exist.
        for payload in (b"not json", b"{}", b"[]", json.dumps({"output": "nope.children"}).encode(),
                        json.dumps({"output": deps[0]["output"], "inputs": 5}).encode()):
            status, _s, answer = client.post(url, payload)
            answered.append((status, "malformed", repr(payload)[:60], str(answer)[:200]))
            assert status in (400, 415), (payload, status, answer)
        status, _s, _a = client.post(url, b"{" + b" " * (5 << 20) + b"}")
        assert status == 413
        assert server.poll() is None
    bad = [a for a in answered if a[0] >= 500]
    assert not bad, bad[:5]
    print(f"\n{len(answered)} crafted requests: statuses "
          f"{sorted({a[0] for a in answered})}, none 500")
    log = (traces / "server.log").read_text()
    assert "Traceback" not in log, log[-3000:]
    shutil.copy(traces / "server.log", traces / "crafted.log")
