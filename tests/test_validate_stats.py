"""The validation figures (``simulator.runs.validate_stats``) on values worked by hand."""
import math

import numpy as np
import pytest

from simulator.runs.validate_stats import agreement, ranks, slope, spearman


def test_wmape_weighs_rows_by_their_measured_time():
    # |12 - 10| + |100 - 200| over 10 + 200: the long row dominates.
    found = agreement([10, 200], [12, 100], ["a", "b"])
    assert found.wmape == pytest.approx(102 / 210)
    assert found.rows == 2


def test_median_abs_log2_counts_a_factor_either_way_alike():
    # Ratios 2, 1/2, 1 and 8: |log2| 1, 1, 0 and 3, median 1.
    found = agreement([1, 4, 5, 1], [2, 2, 5, 8], list("abcd"))
    assert found.median_abs_log2 == pytest.approx(1.0)


def test_ranks_average_over_ties():
    assert ranks([30, 10, 20, 10]).tolist() == [4.0, 1.5, 3.0, 1.5]
    assert ranks([5, 5, 5]).tolist() == [2.0, 2.0, 2.0]


def test_spearman_is_one_for_the_same_order_and_minus_one_reversed():
    assert spearman([1, 2, 3, 4], [10, 20, 25, 1000]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [9, 7, 5, 1]) == pytest.approx(-1.0)


def test_spearman_with_ties_is_pearson_on_averaged_ranks():
    # ranks a: 1 2 3 4; ranks b: 1.5 1.5 3 4 -> Pearson of those.
    a, b = [1, 2, 3, 4], [7, 7, 8, 9]
    ra, rb = np.array([1, 2, 3, 4.0]), np.array([1.5, 1.5, 3, 4])
    expected = np.corrcoef(ra, rb)[0, 1]
    assert spearman(a, b) == pytest.approx(expected)
    assert spearman(a, b) < 1


def test_spearman_matches_scipy_on_random_data_with_ties():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(7)
    a = rng.integers(0, 20, size=60)
    b = a + rng.integers(0, 10, size=60)
    assert spearman(a, b) == pytest.approx(stats.spearmanr(a, b).statistic)


def test_spearman_has_no_value_without_an_order():
    assert spearman([3], [4]) is None
    assert spearman([1, 1, 1], [1, 2, 3]) is None


def test_slope_of_a_power_law_is_its_exponent():
    measured = np.array([1.0, 10.0, 100.0])
    assert slope(measured, 3 * measured ** 0.5) == pytest.approx(0.5)
    assert slope(measured, measured + 0) == pytest.approx(1.0)
    assert slope([5.0, 5.0], [1.0, 2.0]) is None
    assert slope([5.0], [1.0]) is None


def test_families_keep_their_first_appearance_order_and_own_slopes():
    found = agreement([1, 2, 100, 4, 400], [1, 4, 50, 16, 100],
                      ["x", "x", "y", "x", "y"])
    assert [(f.name, f.rows) for f in found.families] == [("x", 3), ("y", 2)]
    x, y = found.families
    assert x.slope == pytest.approx(2.0)  # s = m^2
    assert y.slope == pytest.approx(math.log(2) / math.log(4))


def test_no_rows_have_no_figures_and_bad_times_are_refused():
    assert agreement([], [], []).wmape is None
    with pytest.raises(ValueError):
        agreement([1, 0], [1, 1], ["a", "a"])
