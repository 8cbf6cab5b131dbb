"""Klein's computations on hand-made access and branch records, and on real reduction traces."""
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dashapp.klein import analysis as klein

ROOT = Path(__file__).resolve().parents[1]


def access(rows):
    """Accesses from dicts; unspecified columns get sensible defaults."""
    out = []
    for r in rows:
        kind = r.get("kind", klein.READ)
        address = r.get("address", -1 if kind == klein.BARRIER else 4 * r.get("element", 0))
        bank = -1 if kind == klein.BARRIER else r.get("bank", (address // 4) % 32)
        out.append((r.get("seq", 0), r.get("epoch", 0), r.get("wi", -1), r.get("wg", 0),
                    r.get("lid", r.get("wi", -1)), kind, r.get("line", 1),
                    r.get("element", -1), address, bank))
    return klein.accesses_from_rows(out)


def lanes(seq, elements, kind=klein.READ, wg=0, epoch=0):
    return [dict(seq=seq, wi=wg * 64 + i, lid=i, wg=wg, kind=kind, element=e, epoch=epoch)
            for i, e in enumerate(elements)]


# -- banks and conflicts -----------------------------------------------------------------
def test_consecutive_words_are_conflict_free():
    acc = access(lanes(0, range(64)))
    found = klein.conflicts(acc)
    assert found.worst == 1 and found.conflicted == 0 and found.instructions == 2
    assert set(found.bank_degree) == {1}


def test_stride_two_is_a_two_way_conflict_in_every_bank_it_touches():
    acc = access(lanes(0, range(0, 128, 2)))
    found = klein.conflicts(acc)
    assert found.worst == 2 and found.conflicted == 2
    table = klein.bank_table(found)
    assert list(table.accesses[::2]) == [4] * 16 and not table.accesses[1::2].any()
    assert list(table.degree[::2]) == [2] * 16 and list(table.conflicted[::2]) == [4] * 16


def test_same_word_broadcasts_and_halves_are_separate_passes():
    # All 32 lanes of the first half read word 0 (broadcast); the second half reads
    # words 0, 32, 64, ... which all sit in bank 0: a 32-way conflict.
    acc = access(lanes(0, [0] * 32 + [32 * i for i in range(32)]))
    found = klein.conflicts(acc)
    assert list(found.instruction_degree[:32]) == [1] * 32
    assert list(found.instruction_degree[32:]) == [32] * 32
    assert found.instructions == 2 and found.conflicted == 1 and found.worst == 32


def test_different_instructions_and_groups_never_conflict_with_each_other():
    rows = lanes(0, range(32)) + lanes(1, range(32)) + lanes(0, range(32), wg=1)
    found = klein.conflicts(access(rows))
    assert found.worst == 1 and found.instructions == 3


def test_barriers_and_global_accesses_have_no_bank():
    rows = lanes(0, range(4)) + [dict(seq=1, kind=klein.BARRIER, wg=0),
                                 dict(seq=2, wi=0, lid=0, element=3, address=4096, bank=-1)]
    acc = access(rows)
    found = klein.conflicts(acc)
    assert list(found.bank_degree) == [1, 1, 1, 1, 0, 0]
    assert klein.bank_table(found).accesses.sum() == 4


# -- logical time ------------------------------------------------------------------------
def test_events_are_ranked_per_work_item_inside_barrier_bands():
    rows = ([dict(seq=0, wi=0, kind=klein.WRITE), dict(seq=0, wi=1, kind=klein.WRITE),
             dict(seq=1, kind=klein.BARRIER, epoch=0, line=5)]
            + [dict(seq=2, wi=0, epoch=1), dict(seq=3, wi=0, epoch=1),
               dict(seq=4, wi=0, epoch=1, kind=klein.WRITE), dict(seq=3, wi=1, epoch=1)]
            + [dict(seq=5, kind=klein.BARRIER, epoch=1, line=9), dict(seq=6, wi=1, epoch=2)])
    acc = access(rows)
    lay = klein.logical_layout(acc)
    # Epoch 0: one row, barrier at row 1; epoch 1: three rows (2..4), barrier at 5.
    assert list(lay.epoch_rows) == [1, 3, 1]
    assert list(lay.barrier_y) == [1, 5, 7]
    assert list(lay.y) == [0, 0, -1, 2, 3, 4, 2, -1, 6]
    assert lay.rows == 8
    segments = klein.barrier_segments(acc, lay)
    assert sorted(map(tuple, segments.tolist())) == [(0, 1, 1, 5), (0, 1, 5, 9)]


def test_logical_order_follows_issue_order_not_row_order():
    rows = [dict(seq=7, wi=0), dict(seq=3, wi=0), dict(seq=5, wi=0)]
    assert list(klein.logical_layout(access(rows)).y) == [2, 0, 1]


def test_barriers_cover_only_their_own_work_group_in_runs_of_work_items():
    # Group 1 is a 2-D tile: work-items 64, 65 and 80, 81 (two rows of a 16-wide NDRange).
    rows = (lanes(0, range(3)) + [dict(seq=0, wi=w, lid=i, wg=1)
                                  for i, w in enumerate((64, 65, 80, 81))]
            + [dict(seq=1, kind=klein.BARRIER, wg=1, line=3)])
    acc = access(rows)
    segments = klein.barrier_segments(acc, klein.logical_layout(acc))
    assert sorted(map(tuple, segments.tolist())) == [(64, 65, 1, 3), (80, 81, 1, 3)]


def test_an_empty_launch_has_an_empty_layout():
    acc = klein.accesses_from_rows([])
    assert klein.logical_layout(acc).rows == 0
    assert klein.conflicts(acc).instructions == 0


# -- branch patterns ---------------------------------------------------------------------
def test_histogram_bins_and_donuts_are_sorted_by_size():
    patterns = [(0, "1", "0", 4), (1, "0", "0", 9), (2, "11", "0,0", 9)]
    assert [p[0] for p in klein.patterns_by_size(patterns)] == [1, 2, 0]
    proxies = klein.proxies_by_size([(0, 2, 3, '{"0": 10, "1": 54}', 1),
                                     (1, 5, 0, '{"2": 64}', 0)])
    assert [p.wavefronts for p in proxies] == [5, 2]
    assert proxies[1].regions == [(1, 54), (0, 10)] and proxies[1].divergent


REDUCTION = """kernel void r(global float *a, local float *s)
{
    int t = get_local_id(0);
    if (t < 4) {
        s[t] = a[t];
    } else {
        s[t] = 0;
    }
    for (int k = 1; k < 4; k = k * 2) {
        if (t % (2 * k) == 0) s[t] = s[t] + s[t + k];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (t == 0)
        a[0] = s[0];
}
"""
NODES = [(0, -1, "", "if", 4, 5, 8), (1, -1, "", "loop", 9, 5, 12),
         (2, 1, "body", "if", 10, 9, 10), (3, -1, "", "if", 13, 5, 14)]


def test_statement_parts_find_then_else_and_loop_bodies():
    assert klein.statement_parts(REDUCTION, 4, 5) == ((4, 6), (6, 8))
    assert klein.statement_parts(REDUCTION, 9, 5) == ((9, 12), None)
    assert klein.statement_parts(REDUCTION, 13, 5) == ((14, 14), None)


def test_source_states_colour_conditions_and_fade_unexecuted_code():
    # Work-item 1: t < 4 true; loop tests 1,1,0 with the inner if false both times; t == 0 false.
    states = klein.source_states(REDUCTION, NODES, "1" + "10" + "10" + "0" + "0",
                                 [0, 1, 2, 1, 2, 1, 3])
    assert states[4] == "taken" and states[9] == "taken"
    assert states[10] == "not-taken" and states[13] == "not-taken"
    assert states[7] == "faded" and states[14] == "faded"
    assert 5 not in states and 11 not in states
    # Work-item 0: inner if true once and... mixed when tested both ways.
    mixed = klein.source_states(REDUCTION, NODES, "1" + "11" + "10" + "0" + "1",
                                [0, 1, 2, 1, 2, 1, 3])
    assert mixed[10] == "mixed" and mixed[13] == "taken" and 14 not in mixed


# -- on real traces ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def reductions(tmp_path_factory):
    """Reduction v2 and v3 traces of 512 elements in work-groups of 128 (kernel records)."""
    out = {}
    for version in ("v2", "v3"):
        path = tmp_path_factory.mktemp("klein") / f"{version}.sqlite"
        subprocess.run([sys.executable, "-m", "simulator", "run", f"reduction-{version}",
                        "--size", "512", "--local", "128", "--trace-level", "kernel",
                        "--no-progress", "-o", str(path)], cwd=ROOT, check=True,
                       capture_output=True)
        out[version] = path
    return out


def _launch_accesses(path, launch=0):
    db = sqlite3.connect(path)
    rows = db.execute("SELECT " + ", ".join(klein.ACCESS_FIELDS) + " FROM kernel_access"
                      " WHERE launch = ?", (launch,)).fetchall()
    summary = db.execute("SELECT lds_conflicted, lds_max_degree FROM kernel_launch"
                         " WHERE id = ?", (launch,)).fetchone()
    return klein.accesses_from_rows(rows), summary


def test_reduction_v2_conflicts_and_v3_does_not(reductions):
    acc2, (conflicted2, worst2) = _launch_accesses(reductions["v2"])
    acc3, (conflicted3, worst3) = _launch_accesses(reductions["v3"])
    found2, found3 = klein.conflicts(acc2), klein.conflicts(acc3)
    # The same verdict as the simulator's own per-instruction passes.
    assert found2.worst == worst2 > 1 and found2.conflicted > 0 and conflicted2 > 0
    assert found3.worst == worst3 == 1 and found3.conflicted == 0 == conflicted3


def test_reduction_barriers_line_up_in_logical_time(reductions):
    acc, _ = _launch_accesses(reductions["v3"])
    lay = klein.logical_layout(acc)
    # One band per barrier interval: the load, log2(128) = 7 reduction steps, the write-out.
    assert len(lay.barrier_y) == 9 and lay.rows > 9
    segments = klein.barrier_segments(acc, lay)
    # Four groups of 128 consecutive work-items, eight barriers each.
    assert len(segments) == 4 * 8
    assert set(segments[:, 1] - segments[:, 0]) == {127}
    assert set(segments[:, 2]) == set(lay.barrier_y[:8])
    events = acc.kind != klein.BARRIER
    assert not np.isin(lay.y[events], lay.barrier_y).any()


def test_group_window_takes_whole_groups_within_the_budget():
    rows = lanes(0, range(10)) + lanes(0, range(10), wg=1) + lanes(0, range(10), wg=2) \
        + [dict(seq=1, kind=klein.BARRIER, wg=g) for g in range(3)]
    acc = access(rows)
    assert klein.group_window(acc, 0, 25) == (0, 2, 0, 1, 3)
    assert klein.group_window(acc, 2, 25) == (2, 3, 2, 2, 3)
    # A group larger than the budget is still drawn, alone.
    assert klein.group_window(acc, 1, 5) == (1, 2, 1, 1, 3)
    part = klein.select(acc, acc.work_group == 1)
    assert set(part.work_group) == {1} and len(part.kind) == 11


@pytest.mark.parametrize("elem_bytes", [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64])
def test_conflicts_agree_with_the_simulator_for_every_element_width(elem_bytes):
    """The view's degree is the one the timing model charges passes for (random accesses
    of two wavefronts of a work-group, every element size the kernel language has)."""
    from simulator.kernels.wavefronts import lds_conflict_degree

    rng = np.random.default_rng(elem_bytes)
    per = -(-elem_bytes // 4)
    for seq in range(30):
        active = np.flatnonzero(rng.random(128) < 0.8)
        elements = rng.integers(0, 96, size=len(active))
        rows = [dict(seq=seq, wi=int(lane), lid=int(lane), element=int(e),
                     address=int(e) * elem_bytes) for lane, e in zip(active, elements)]
        found = klein.conflicts(access(rows), elem_bytes)
        waves, degree, _ = lds_conflict_degree(active // 64, active % 64,
                                               elements * elem_bytes, elem_bytes)
        ours = [int(found.instruction_degree[active // 64 == w].max()) for w in waves]
        assert ours == degree.tolist(), (seq, elem_bytes)
        assert found.group_lanes == max(1, 32 // per)


def test_a_float4_access_touches_four_banks_in_eight_lane_groups():
    # Lanes 0..7 read float4 elements 0, 8, 16, ...: element 8k starts at dword 32k, so all
    # eight start in bank 0 and cover banks 0-3: an 8-way conflict in four banks.
    rows = [dict(seq=0, wi=i, lid=i, element=8 * i, address=128 * i) for i in range(8)]
    found = klein.conflicts(access(rows), 16)
    assert found.worst == 8 and found.instructions == 1 and found.group_lanes == 8
    table = klein.bank_table(found)
    assert list(table.accesses[:4]) == [8] * 4 and not table.accesses[4:].any()
    assert list(table.degree[:4]) == [8] * 4


HELPERS = """#define WIDTH 64
float pick(__local const float *row, int k, float limit) {
    if (row[k] > limit) return row[k];
    return -row[k];
}
void store_pair(__global float *out, int i, float a, float b) {
    __global float *p = out + 2 * i;
    *p = a;
    p[1] = b;
}
__kernel void k(__global const float *in, __global float *out) {
    __local float tile[WIDTH];
    int i = get_global_id(0), l = get_local_id(0);
    @watch tile;
    @watch out;
    tile[l] = in[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    float a = pick(tile, (l * 2) % WIDTH, 0.5f);
    store_pair(out, i, a, pick(tile, WIDTH - 1 - l, 0.25f));
}
"""


def test_views_on_a_kernel_with_helper_functions_and_pointers(tmp_path):
    """Accesses made through a helper's pointer parameters are in the memory view under
    the array's name, and the helper's branches are in the branching view."""
    from dashapp.klein import views

    source = tmp_path / "helpers.cl"
    source.write_text(HELPERS)
    data = np.random.default_rng(3).random(128, dtype=np.float32)
    np.save(tmp_path / "in.npy", data)
    trace = tmp_path / "helpers.sqlite"
    subprocess.run([sys.executable, "-m", "simulator", "run-kernel", str(source), "--global", "128",
                    "--local", "64", "--arg", f"in={tmp_path / 'in.npy'}", "--arg", "out=zeros:256",
                    "--save", f"out={tmp_path / 'out.npy'}", "--no-progress", "-o", str(trace)],
                   cwd=ROOT, check=True, capture_output=True)
    tile = data.reshape(2, 64)
    lane = np.arange(64)
    a = tile[:, (lane * 2) % 64]
    b = tile[:, 63 - lane]
    expect = np.stack([np.where(a > 0.5, a, -a), np.where(b > 0.25, b, -b)], axis=-1).reshape(-1)
    np.testing.assert_allclose(np.load(tmp_path / "out.npy"), expect)

    built = views.build(trace, 0)
    memory = {m.array: m for m in built.memory}
    assert set(memory) == {"tile", "out"}
    db = sqlite3.connect(trace)
    lines = dict(db.execute("SELECT array, group_concat(DISTINCT line) FROM kernel_access"
                            " WHERE kind != 2 GROUP BY array").fetchall())
    # tile: written in the kernel (line 16), read through 'row' in pick (lines 3 and 4);
    # out: written through the pointer p in store_pair (lines 8 and 9).
    assert set(map(int, lines["tile"].split(","))) == {3, 4, 16}
    assert set(map(int, lines["out"].split(","))) == {8, 9}
    reads = db.execute("SELECT element FROM kernel_access WHERE array = 'tile' AND line = 3"
                       " AND work_group = 0 ORDER BY seq, local_id").fetchall()
    assert [r[0] for r in reads[:64]] == list((lane * 2) % 64)
    # Each call of pick reads row[k] twice (the test, then the returned value).
    assert memory["out"].accesses == 2 * 128 and memory["tile"].accesses == 128 + 2 * 2 * 128
    # The helper's 'if' is a branch node (once per call site) and its outcomes differ
    # between work-items: several patterns.
    nodes = db.execute("SELECT type, line FROM kernel_branch_node ORDER BY id").fetchall()
    assert nodes == [("if", 3), ("if", 3)]
    assert len(built.patterns) == 4
    assert sum(p[3] for p in built.patterns) == 128
