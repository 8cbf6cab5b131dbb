"""The edited runs' scratch clean-up removes only what the app itself made there."""
import os
import time

from faults import sums

from dashapp.klein import runner


def test_prune_keeps_the_users_own_files(tmp_path):
    old = time.time() - 10 * runner.TIMEOUT_SECONDS
    runs = []
    for k in range(runner.KEEP + 3):
        run = tmp_path / f"{k:016x}.sqlite"
        run.write_text("a run")
        os.utime(run, (old + k, old + k))
        runs.append(run)
    stale = tmp_path / "00000000000000ab-x1y2_z3w"
    stale.mkdir()
    (stale / "trace.sqlite").write_text("left by a killed server")
    os.utime(stale, (old, old))
    users = {"mine.sqlite": "the user's trace", "notes-2024.sqlite": "another",
             "ABCDEF0123456789.sqlite": "upper case: not a run id",
             "0123456789abcdef.sqlite.bak": "a backup"}
    for name, text in users.items():
        (tmp_path / name).write_text(text)
    user_dir = tmp_path / "data-set"
    user_dir.mkdir()
    (user_dir / "t.sqlite").write_text("the user's data set")
    os.utime(user_dir, (old, old))
    before = sums(tmp_path)

    runner._prune(tmp_path)

    after = sums(tmp_path)
    for name in [*users, "data-set/t.sqlite"]:
        assert after[name] == before[name]
    assert not stale.exists()
    kept = sorted(p.name for p in tmp_path.glob("*.sqlite") if p in runs)
    assert kept == sorted(p.name for p in runs[-runner.KEEP:])
