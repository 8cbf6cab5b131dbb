"""The Nsight Systems rules and recipes re-made (I2 gaps, I3 low utilization, I6 the four
CUDA rules, I7 the kernel summary), held against SQL written here over the export's own
tables (``nsys_cloverleaf_a100_perlmutter.sqlite``): the rows each rule finds, their
count and total duration. nsys times are ns; ours ps."""
import sqlite3
import subprocess
import sys

import pytest

from simulator.analysis.profile.gaps import gaps, low_utilization
from simulator.analysis.profile.kernels import kernel_summary
from simulator.analysis.profile.ops import load
from simulator.analysis.profile.rules import anti_patterns
from simulator.analysis.profile.trace import ProfileTrace

PS = 1000  # per ns
OPS = ("SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL"
       " UNION ALL SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY")
CALLS = ("(SELECT r.*, n.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds n"
         " ON n.id = r.nameId WHERE r.eventClass IN (0, 1)) r")  # not backtrace rows (67)


@pytest.fixture(scope="module")
def export(tmp_path_factory, shared_trace):
    source = shared_trace("nsys_cloverleaf_a100_perlmutter.sqlite")
    out = tmp_path_factory.mktemp("nsys") / "cloverleaf.sqlite"
    subprocess.run([sys.executable, "-m", "simulator", "import", str(source), "-o", str(out)],
                   check=True, capture_output=True)
    db = sqlite3.connect(source.resolve().as_uri() + "?mode=ro", uri=True)
    with ProfileTrace(out) as trace:
        yield db, load(trace)
    db.close()


def test_kernel_summary(export):
    db, profile = export
    expected = {name: (n, total * PS, lo * PS, hi * PS) for name, n, total, lo, hi in db.execute(
        "SELECT s.value, count(*), sum(k.end - k.start), min(k.end - k.start),"
        " max(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k"
        " JOIN StringIds s ON s.id = k.demangledName GROUP BY s.value")}
    ours = kernel_summary(profile)
    assert {r["name"]: (r["instances"], r["total_ps"], r["min_ps"], r["max_ps"])
            for r in ours} == expected
    assert [r["total_ps"] for r in ours] == sorted((r["total_ps"] for r in ours), reverse=True)
    assert sum(r["time_share"] for r in ours) == pytest.approx(1)


def test_cuda_api_sync(export):
    db, profile = export
    count, total = db.execute(
        f"SELECT count(*), sum(r.end - r.start) FROM {CALLS} WHERE r.value LIKE"
        " 'cudaDeviceSynchronize%' OR r.value LIKE 'cudaStreamSynchronize%'").fetchone()
    rule = {r["rule"]: r for r in anti_patterns(profile)}["cuda_api_sync"]
    assert (rule["count"], rule["total_ps"]) == (count, total * PS)
    assert count == 1312  # one cudaDeviceSynchronize per kernel
    longest = db.execute(f"SELECT max(r.end - r.start) FROM {CALLS} WHERE r.value LIKE"
                         " 'cudaDeviceSynchronize%'").fetchone()[0]
    assert len(rule["rows"]) == 50 and rule["rows"][0]["duration_ps"] == longest * PS


def test_memcpy_rules(export):
    db, profile = export
    sync = db.execute(
        "SELECT count(*), sum(m.end - m.start) FROM CUPTI_ACTIVITY_KIND_MEMCPY m"
        f" JOIN {CALLS} ON r.correlationId = m.correlationId WHERE r.value LIKE 'cudaMemcpy%'"
        " AND r.value NOT LIKE '%Async%' AND m.copyKind NOT IN (8, 10)"  # DtoD, PtoP
        " AND NOT (m.copyKind = 1 AND m.bytes <= 65536)").fetchone()
    pageable = db.execute(
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY m"
        f" JOIN {CALLS} ON r.correlationId = m.correlationId WHERE r.value LIKE"
        " 'cudaMemcpy%Async%' AND (m.srcKind = 0 OR m.dstKind = 0)").fetchone()[0]
    rules = {r["rule"]: r for r in anti_patterns(profile)}
    assert (rules["cuda_memcpy_sync"]["count"], rules["cuda_memcpy_sync"]["total_ps"]) == (
        sync[0], sync[1] * PS)
    assert sync[0] == 269  # of 279 copies, 10 are host-to-device of at most 64 KB
    assert rules["cuda_memcpy_async"]["count"] == pageable == 0
    assert rules["cuda_memset_sync"]["count"] == 0  # the export has no memset table


def test_gaps(export):
    db, profile = export
    gap_sql = (f"WITH ops AS ({OPS}), o AS (SELECT start, max(end) OVER (ORDER BY start, end"
               " ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reach FROM ops)"
               " SELECT count(*), coalesce(sum(start - reach), 0) FROM o WHERE start - reach >= ?")
    (row,) = gaps(profile, noise_us=5, gap_us=1000)
    assert (row["gaps"], row["gap_ps"]) == tuple(x * PS if i else x for i, x in enumerate(
        db.execute(gap_sql, (5000,)).fetchone()))
    assert row["long_gaps"] == db.execute(gap_sql, (1_000_000,)).fetchone()[0] == 3
    (nsys_default,) = gaps(profile, noise_us=5, gap_us=500_000)
    assert nsys_default["rows"] == [] and db.execute(gap_sql, (500_000_000,)).fetchone()[0] == 0


@pytest.mark.parametrize("threshold", [0.5, 0.9, 0.95])
def test_low_utilization(export, threshold):
    db, profile = export
    lo, hi = (x * PS for x in db.execute(f"SELECT min(start), max(end) FROM ({OPS})").fetchone())
    size = -(-(hi - lo) // 30)
    chunks = [(lo + i * size, min(lo + (i + 1) * size, hi)) for i in range(30)]
    in_use = [db.execute(f"SELECT coalesce(sum(max(0, min(end * {PS}, ?) - max(start * {PS}, ?))), 0)"
                         f" FROM ({OPS})", (e, s)).fetchone()[0] for s, e in chunks]
    low = [i for i, (s, e) in enumerate(chunks) if in_use[i] < threshold * (e - s)]
    runs = []
    for i in low:
        if runs and runs[-1][-1] == i - 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    expected = [(chunks[r[0]][0], chunks[r[-1]][1], sum(in_use[i] for i in r)) for r in runs]
    (row,) = low_utilization(profile, 30, threshold)
    assert [(w["t0"], w["t1"], round(w["in_use"] * (w["t1"] - w["t0"]))) for w in row["windows"]] \
        == expected
