"""The trace commands: help text, summaries, and clean errors on bad input."""
import json
import sys

import pytest

from simulator.__main__ import COMMAND_MODULES, build_parser, main
from simulator.tracing.exporters import export_trace
from simulator.tracing.synthetic import generate
from simulator.tracing.writer import TraceError


@pytest.mark.parametrize("command", ["import", "export", "info", "check", "synth", "finalize"])
def test_every_trace_command_has_help(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m simulator " + command)
    assert len(out.splitlines()) > 4


def test_top_level_help_lists_the_commands(capsys):
    build_parser().print_help()
    out = capsys.readouterr().out
    for command in ("import", "export", "info"):
        assert command in out


def test_each_command_is_found_in_the_module_said_to_register_it():
    # a command line imports only its command's module: the table must say where each is
    commands = build_parser()._subparsers._group_actions[0].choices
    assert set(commands) == {c for names in COMMAND_MODULES.values() for c in names} | {"standby"}
    for names in COMMAND_MODULES.values():
        for command in names:
            alone = build_parser(command)._subparsers._group_actions[0].choices
            assert command in alone and len(alone) == len(names) + 1  # and standby


@pytest.fixture(scope="module")
def small_trace(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "s.sqlite"
    generate(path, tasks=3000, seed=2)
    return path


def test_info_reports_counts_range_busiest_and_config(small_trace, capsys):
    assert main(["info", str(small_trace), "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert "tasks        3," in out and "at 514 locations" in out
    assert " simulated)" in out
    assert "status       completed" in out
    assert "busiest 3 components" in out and "GPU.CommandProcessor" in out
    assert '"cus": 64' in out


def test_import_of_a_bad_file_is_a_one_line_error(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("ID, ParentID, Kind, What, Where, Start, End\nx, , k, w, L, 1, oops\n")
    assert main(["import", str(bad), "-o", str(tmp_path / "o.sqlite")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "bad.csv:2: End is not a number" in err
    assert "Traceback" not in err
    assert not (tmp_path / "o.sqlite").exists()


def test_export_of_a_non_trace_leaves_nothing(tmp_path):
    bogus = tmp_path / "notes.txt"
    bogus.write_text("hello")
    with pytest.raises(TraceError, match="not a GPUscope trace"):
        export_trace(bogus, tmp_path / "out.json", "chrome", show_progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_export_then_info_of_the_import(small_trace, tmp_path, capsys):
    assert main(["export", str(small_trace), "-o", str(tmp_path / "t.json")]) == 0
    assert main(["import", str(tmp_path / "t.json"), "-o", str(tmp_path / "t.sqlite")]) == 0
    capsys.readouterr()
    assert main(["info", str(tmp_path / "t.sqlite")]) == 0
    assert "source       chrome" in capsys.readouterr().out


def test_a_reader_closing_the_pipe_early_gets_no_traceback(small_trace):
    """As `... | head -1` does, deterministically: stdout is a pipe already closed."""
    import subprocess
    import sys

    script = ("import os, sys\n"
              "r, w = os.pipe()\n"
              "os.close(r)\n"
              "os.dup2(w, 1)\n"
              "from simulator.__main__ import main\n"
              f"sys.exit(main(['info', {str(small_trace)!r}]))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr
    assert done.returncode == 141


def test_import_and_info_of_a_profile_state_links_markers_and_the_time_origin(tmp_path, capsys):
    from test_chrome_import import BASE_NS, kineto_events

    src = tmp_path / "prof.json"
    src.write_text(json.dumps({"baseTimeNanoseconds": str(BASE_NS), "traceEvents": kineto_events()}))
    assert main(["import", str(src), "-o", str(tmp_path / "p.sqlite")]) == 0
    out = capsys.readouterr().out
    assert "1 links between tasks (flows)" in out and "2 instant markers" in out
    assert "1 flow ends or links without a task at the other end" in out
    assert main(["info", str(tmp_path / "p.sqlite")]) == 0
    out = capsys.readouterr().out
    assert "time origin  2025-07-18 09:14:43.333400684 UTC" in out
    assert " profiled)" in out and " wall" not in out  # an import's own time is not the run's
    assert "1 links (flows), 2 markers" in out and "baseTimeNanoseconds" in out


def test_ctrl_c_during_the_damage_check_is_an_interruption_not_damage(tmp_path):
    """A real SIGINT while SQLite checks the file: the progress callback is where Python
    sees it, and sqlite3 would report the check "interrupted", which read as damage."""
    import os
    import signal
    import subprocess
    import time
    from pathlib import Path

    trace = tmp_path / "big.sqlite"
    generate(trace, tasks=600_000, seed=3)
    root = Path(__file__).resolve().parents[1]
    # Ctrl-C as a terminal delivers it, whatever the test runner inherited: started in the
    # background, it ignores SIGINT, and so would the check it starts.
    proc = subprocess.Popen([sys.executable, "-m", "simulator", "check", str(trace)], cwd=root,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:  # the check opens it last
        fds = Path(f"/proc/{proc.pid}/fd")
        try:
            if any(os.readlink(fd) == str(trace) for fd in fds.iterdir()):
                break
        except OSError:
            pass
        time.sleep(0.005)
    time.sleep(0.15)  # well inside the check, which takes about half a second here
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in err, (proc.returncode, out, err)
    assert "damaged" not in out + err
