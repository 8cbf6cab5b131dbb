"""Two profiles on the Compare page, each whole or one of its profiler steps (I13): the
step choice in the URL, each side's default (its first step), the diff of the steps
chosen (HTA's step membership for the operations, the step's GPU work for the
analyses), made once per pair and step, and the page's pickers and callbacks in the
real server; on small hand-written Kineto traces whose steps are known by construction."""
from urllib.parse import parse_qs

import pytest
from app_inside import serve, serving_copies
from test_app import _texts
from test_compare import _by_id, _walk
from test_profile_diff import _steps

from dashapp import urls
from dashapp.comparison import profiles, stats

US = 10 ** 6


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """(A, B) as served: ProfilerStep#1 [0, 50) launches a copy and k1, #2 [50, 100) k2,
    and in B also k9 [90, 95) (``test_profile_diff._steps``)."""
    directory = tmp_path_factory.mktemp("stepped")
    return _steps(directory, "a", None), _steps(directory, "b", "k9")


def _params(search):
    return {k: v[0] for k, v in parse_qs(search.lstrip("?")).items()}


def test_the_step_of_each_side_round_trips_through_the_url():
    state = urls.CompareState(a="a.sqlite", b="b.sqlite", step_a=1010, step_b=urls.WHOLE_PROFILE)
    assert urls.search(state) == "?a=a.sqlite&b=b.sqlite&step_a=1010&step_b=all"
    assert urls.parse_compare(_params(urls.search(state))) == (state, [])
    state, errors = urls.parse_compare({"a": "a.sqlite", "step_a": "x", "step_b": "-1"})
    assert (state.step_a, state.step_b) == (None, None) and len(errors) == 2


def test_each_side_defaults_to_its_first_step():
    assert profiles.chosen_step(None, [1009, 1010], "A") == (1009, [])
    assert profiles.chosen_step(1010, [1009, 1010], "A") == (1010, [])
    assert profiles.chosen_step(urls.WHOLE_PROFILE, [1009, 1010], "A") == (None, [])
    assert profiles.chosen_step(None, [], "B") == (None, [])  # no steps: the whole profile
    step, said = profiles.chosen_step(7, [1009, 1010], "B")
    assert step == 1009 and said == ["B has no ProfilerStep#7 (its steps are 1009 to 1010):"
                                      " showing ProfilerStep#1009."]
    # a pick goes into the URL only where it is not the default
    assert profiles.asked_step(1009, [1009, 1010]) is None
    assert profiles.asked_step(1010, [1009, 1010]) == 1010
    assert profiles.asked_step(urls.WHOLE_PROFILE, [1009, 1010]) == urls.WHOLE_PROFILE
    assert profiles.asked_step(urls.WHOLE_PROFILE, []) is None
    assert profiles.asked_step(5, [1009, 1010]) is None  # not offered


def test_the_diff_of_the_steps_chosen(pair):
    meta_a, meta_b = (stats.trace_meta(p) for p in pair)
    assert profiles.steps(meta_a) == profiles.steps(meta_b) == [1, 2]
    whole = {o["name"]: o for o in profiles.profile_diff(meta_a, meta_b).ops}
    assert {n for n, o in whole.items() if o["category"] == "unchanged"} >= {"k1", "k2", "k3"}
    second = profiles.profile_diff(meta_a, meta_b, 2, 2)
    ops = {o["name"]: o for o in second.ops}
    # step 2 holds what its calls launched: k2 in both, k9 in B only; not k1 nor k3
    assert ops["k9"]["category"] == "added" and ops["k9"]["total_b_ps"] == 5 * US
    assert ops["k2"]["category"] == "unchanged" and "k1" not in ops and "k3" not in ops
    # the analyses explain the step's GPU work: k2 [75, 85) in A; k2 and k9 [75, 95) in B
    rows = {(r.analysis, r.label): r for r in second.rows}
    span = rows[("I1 time budget", "GPU 0 span")]
    assert (span.a, span.b) == (10 * US, 20 * US)
    # A's first step against B's second: k1 is A's only
    crossed = {o["name"]: o for o in profiles.profile_diff(meta_a, meta_b, 1, 2).ops}
    assert crossed["k1"]["category"] == "deleted" and crossed["k9"]["category"] == "added"
    # made once per pair of file versions and steps: a page seen again is drawn at once
    assert profiles.profile_diff(meta_a, meta_b, 2, 2) is second


@pytest.fixture(scope="module")
def served(tmp_path_factory, pair):
    return serve(*serving_copies(tmp_path_factory, pair, "compare-steps"))


def test_the_page_draws_at_once_and_its_callback_fills_the_diff(served):
    from dashapp.pages import compare

    with served.server.test_request_context("/"):
        page = compare.layout(a="a.sqlite", b="b.sqlite", step_b="2")
        picker_a, picker_b = _by_id(page, "cmp-step-a"), _by_id(page, "cmp-step-b")
        assert [o["value"] for o in picker_a.options] == [urls.WHOLE_PROFILE, 1, 2]
        assert (picker_a.value, picker_b.value) == (1, 2)  # A's default, B's choice
        # the diff is not in the layout: a callback fills it, under a loading state
        ids = {getattr(c, "id", None) for c in _walk(page)}
        assert "cmp-why" not in ids and "cmp-why-body" in ids
        search = _by_id(page, "cmp-why-search").data
        assert search == "?a=a.sqlite&b=b.sqlite&step_b=2"
        # A's first step against B's second: its step, aten::mm, the copy and k1 are A's
        # only, its step, k2 and k9 B's; B's step launches two kernels, A's one
        body = _texts(compare.fill_why(search))
        assert "Operations by name (HTA TraceDiff's categories): 3 added, 5 deleted," \
            " 1 increased" in body
        assert "GPU 0 span 60 µs 20 µs" in body  # [10, 70) in A, [75, 95) in B
        # a step a profile lacks: its first, and a message
        page = compare.layout(a="a.sqlite", b="b.sqlite", step_a="7")
        assert "A has no ProfilerStep#7" in _texts(page)
        assert _by_id(page, "cmp-step-a").value == 1


def test_a_step_picked_goes_into_the_url(served):
    from dashapp.pages import compare

    search = "?a=a.sqlite&b=b.sqlite"
    with served.server.test_request_context("/"):
        assert compare.step_to_url(2, urls.WHOLE_PROFILE, search) == search + "&step_a=2&step_b=all"
        assert compare.step_to_url(1, 1, search + "&step_a=2") == search  # the defaults
        # another run picked for B starts from its own first step; A keeps its choice
        assert compare.pick_to_url("a.sqlite", "a.sqlite", search + "&step_a=2&step_b=2") \
            == "?a=a.sqlite&b=a.sqlite&step_a=2"
