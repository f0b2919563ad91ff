"""Statistics against the reference vectors and against SciPy."""

import math

import pytest
from scipy import stats as sps

from ontrial.stats import (
    clustered_se,
    mcnemar_exact,
    mean_ci,
    minimum_detectable_effect,
    paired_difference,
    pass_at_k,
    pass_hat_k,
    suite_pass_at_k,
    suite_pass_hat_k,
    wilson,
)
from ontrial.stats.distributions import betainc, t_quantile

VECTORS = [  # n, c, k, pass@k, pass^k
    (10, 3, 1, 0.3, 0.3),
    (10, 3, 2, 0.5333333333, 0.0666666667),
    (10, 3, 5, 0.9166666667, 0.0),
    (5, 5, 5, 1.0, 1.0),
    (5, 0, 1, 0.0, 0.0),
    (4, 2, 2, 0.8333333333, 0.1666666667),
    (8, 6, 4, 1.0, 0.2142857143),
    (100, 37, 10, 0.9926167972, 0.0000201227),
]


@pytest.mark.parametrize("n,c,k,at,hat", VECTORS)
def test_per_task_vectors(n, c, k, at, hat):
    assert pass_at_k(n, c, k) == pytest.approx(at, abs=1e-9)
    assert pass_hat_k(n, c, k) == pytest.approx(hat, abs=1e-9)


def test_pass_at_k_matches_the_combinatorial_definition():
    for n in range(1, 12):
        for c in range(n + 1):
            for k in range(1, n + 1):
                exact = 1 - math.comb(n - c, k) / math.comb(n, k)
                assert pass_at_k(n, c, k) == pytest.approx(exact, abs=1e-12)


def test_suite_vector():
    counts = [(4, 4), (4, 3), (4, 0), (4, 2), (4, 1)]
    assert [round(suite_pass_hat_k(counts, k), 6) for k in (1, 2, 3, 4)] == [0.5, 0.333333, 0.25, 0.2]
    assert [round(suite_pass_at_k(counts, k), 6) for k in (1, 2, 3, 4)] == [0.5, 0.666667, 0.75, 0.8]


def test_k_above_a_tasks_own_n_is_refused():
    with pytest.raises(ValueError, match="exceeds the 3 trials"):
        suite_pass_hat_k([(5, 5), (3, 3)], 4)


def test_plug_in_estimator_is_not_used():
    assert pass_hat_k(4, 2, 2) != pytest.approx((2 / 4) ** 2)


def test_clustered_se_vector():
    clusters = [[1, 1, 1], [0, 0], [1, 1, 0, 1], [0, 0, 0]]
    assert clustered_se(clusters) == pytest.approx(0.245327, abs=1e-6)
    ci = mean_ci(clusters)
    assert (ci.low, ci.high) == (pytest.approx(-0.2807, abs=1e-4), pytest.approx(1.2807, abs=1e-4))
    assert ci.clusters == 4 and ci.n == 12


def test_t_quantile_and_incomplete_beta_match_scipy():
    for df in (1, 2, 3, 7, 11, 30, 200):
        for p in (0.6, 0.9, 0.975, 0.995):
            assert t_quantile(p, df) == pytest.approx(sps.t.ppf(p, df), abs=1e-6)
    for a, b, x in [(0.5, 0.5, 0.3), (2, 3, 0.7), (10, 0.5, 0.95)]:
        assert betainc(a, b, x) == pytest.approx(sps.beta.cdf(x, a, b), abs=1e-10)


def test_wilson_matches_scipy():
    for k, n in [(0, 10), (3, 10), (10, 10), (37, 100), (1, 2)]:
        ours = wilson(k, n)
        ref = sps.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        assert (ours.low, ours.high) == (pytest.approx(ref.low, abs=1e-9), pytest.approx(ref.high, abs=1e-9))


def test_paired_vector():
    a = [1, 1, 0, 1, 0, 1, 1, 0, 1, 1]
    b = [1, 0, 0, 1, 0, 1, 0, 0, 1, 0]
    p = paired_difference(a, b)
    assert p.delta == pytest.approx(0.3)
    assert p.se == pytest.approx(0.152753, abs=1e-6)
    assert p.rho == pytest.approx(0.534522, abs=1e-6)
    assert (p.low, p.high) == (pytest.approx(0.00061, abs=1e-5), pytest.approx(0.59939, abs=1e-5))


@pytest.mark.parametrize("b,c", [(3, 0), (0, 0), (5, 1), (2, 9), (12, 12), (1, 20)])
def test_mcnemar_exact_matches_scipy_binomtest(b, c):
    expected = 1.0 if b + c == 0 else sps.binomtest(b, b + c, 0.5).pvalue
    assert mcnemar_exact(b, c) == pytest.approx(expected, abs=1e-12)
    assert mcnemar_exact(3, 0) == pytest.approx(0.25)


def test_power_vectors():
    assert minimum_detectable_effect(500, 1 / 9) == pytest.approx(0.04176, abs=1e-5)
    # n for delta=0.03 recovers ~969 (solve the MDE formula back)
    assert minimum_detectable_effect(969, 1 / 9) == pytest.approx(0.03, abs=1e-4)
