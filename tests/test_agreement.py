"""Agreement statistics: exact (==) parity with scikit-learn, statsmodels and krippendorff."""

import math
import random
import warnings

import pytest
from conftest import need

from rageval_min.judges import agreement as ag

# --------------------------------------------------------------------------- a seeded random corpus

LABEL_SETS = [
    [0, 1],
    [1, 2, 3],
    [1, 2, 3, 4, 5],
    list(range(12)),  # more than 8 labels: numpy's pairwise blocks matter
    ["no", "partial", "yes"],
    [0.0, 0.5, 1.0],
    [-2, 0, 3, 7],  # ratio distances with v_k + v_l == 0 and negative values
    [0.1, 0.25, 1e-3, 17.5],
]


def _corpus(seed, count):
    """(labels, ratings: list of units, each a list of m ratings with None for missing)."""
    rng = random.Random(seed)
    out = []
    for case in range(count):
        labels = rng.choice(LABEL_SETS)
        n = rng.choice([2, 3, 5, 9, 17, 40, 130, 300])
        m = rng.choice([2, 2, 3, 4, 7])
        used = rng.sample(labels, rng.randrange(1, len(labels) + 1))  # sometimes a single label
        skew = rng.random()
        units = []
        for _ in range(n):
            truth = rng.choice(used)
            row = [truth if rng.random() < skew else rng.choice(used) for _ in range(m)]
            units.append(row)
        missing = rng.choice([0.0, 0.0, 0.1, 0.4])
        holey = [[None if rng.random() < missing else x for x in row] for row in units]
        out.append((labels, units, holey))
    return out


CORPUS = _corpus(20260508, 240)


def _sklearn_kappa(metrics, a, b, labels, weights):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = metrics.cohen_kappa_score(a, b, labels=labels, weights=weights)
    return None if math.isnan(ref) else float(ref)


def test_cohen_kappa_equals_scikit_learn_exactly():
    metrics = need("sklearn.metrics", "dev", "the test extra: pip install scikit-learn")
    checked = 0
    for labels_, units, holey in CORPUS:
        for rows in (units, holey):
            labels = labels_
            pairs = [(r[0], r[1]) for r in rows if r[0] is not None and r[1] is not None]
            if not pairs:
                continue
            a, b = [p[0] for p in pairs], [p[1] for p in pairs]
            domain = ag.label_domain(a + b)
            if any(isinstance(x, float) for x in labels):  # scikit-learn refuses non-integer floats: use ranks
                rank = {v: i for i, v in enumerate(sorted(labels))}
                labels, rows = sorted(rank.values()), [[None if x is None else rank[x] for x in r] for r in rows]
                a, b, domain = [rank[x] for x in a], [rank[x] for x in b], [rank[x] for x in domain]
            for weights in ag.WEIGHTS:
                got = ag.cohen_kappa([r[0] for r in rows], [r[1] for r in rows], weights=weights)
                assert got == _sklearn_kappa(metrics, a, b, None, weights), (labels, weights)
                # the full label set (unused labels change the weighted distances)
                if not isinstance(labels[0], str) or weights is None:
                    full = sorted(labels)
                    got = ag.cohen_kappa(a, b, weights=weights, domain=full)
                    assert got == _sklearn_kappa(metrics, a, b, full, weights), (labels, weights, "full")
                checked += 1
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # scikit-learn warns when a single label is present
                assert ag.raw_agreement(a, b) == metrics.accuracy_score(a, b)
                assert ag.confusion_matrix(a, b, domain) == metrics.confusion_matrix(a, b, labels=domain).tolist()
    assert checked > 1000


def test_cohen_kappa_known_values_and_edge_cases():
    assert ag.cohen_kappa([], []) is None
    assert ag.cohen_kappa([1, None], [None, 1]) is None
    assert ag.cohen_kappa(["y", "y", "y"], ["y", "y", "y"]) is None  # one label: 0 / 0
    assert ag.cohen_kappa([0, 1, 0, 1], [1, 0, 1, 0]) == -1.0
    assert ag.cohen_kappa([0, 1, 0, 1], [0, 1, 0, 1]) == 1.0
    with pytest.raises(ValueError):
        ag.cohen_kappa([1], [1], weights="cubic")
    with pytest.raises(ValueError):
        ag.label_domain(["a", 1])


def _rows_complete(units):
    return [r for r in units if all(x is not None for x in r)]


def test_fleiss_kappa_equals_statsmodels_both_methods_exactly():
    ir = need("statsmodels.stats.inter_rater", "dev", "the test extra: pip install statsmodels")
    np = need("numpy", "dev")
    checked = 0
    for labels, units, holey in CORPUS:
        for rows in (units, _rows_complete(holey)):
            if not rows:
                continue
            domain = ag.label_domain([x for r in rows for x in r])
            index = {v: i for i, v in enumerate(domain)}
            table, _ = ir.aggregate_raters(np.array([[index[x] for x in r] for r in rows]), n_cat=len(domain))
            assert ag.fleiss_table(rows, domain) == table.tolist()
            for method in ("fleiss", "randolph"):
                with warnings.catch_warnings(), np.errstate(all="ignore"):
                    warnings.simplefilter("ignore")
                    ref = float(ir.fleiss_kappa(table, method=method))
                got = ag.fleiss_kappa(table.tolist(), method)
                if math.isnan(ref) or math.isinf(ref):
                    assert got is None, (labels, method)
                else:
                    assert got == ref, (labels, method, got, ref)
                    checked += 1
    assert checked > 300


def test_fleiss_kappa_edge_cases():
    assert ag.fleiss_kappa([]) is None
    assert ag.fleiss_kappa([[1, 0], [0, 1]]) is None  # one rating per subject
    assert ag.fleiss_kappa([[2, 0], [2, 0]]) is None  # P_e == 1
    with pytest.raises(ValueError):
        ag.fleiss_kappa([[2, 0], [1, 0]])
    with pytest.raises(ValueError):
        ag.fleiss_kappa([[2, 0]], "light")


def _kd_reference(kd, np, units, level, domain):
    data = np.array([[np.nan if x is None else x for x in r] for r in units], dtype=float).T
    try:
        return float(kd.alpha(reliability_data=data, level_of_measurement=level, value_domain=domain))
    except ValueError:
        return None


def test_krippendorff_alpha_equals_the_package_exactly_all_levels_with_missing_values():
    kd = need("krippendorff", "dev", "the test extra: pip install krippendorff")
    np = need("numpy", "dev")
    checked = 0
    for labels, units, holey in CORPUS:
        if isinstance(labels[0], str):
            continue
        for rows in (units, holey):
            for level in ag.LEVELS:
                with warnings.catch_warnings(), np.errstate(all="ignore"):
                    warnings.simplefilter("ignore")
                    ref = _kd_reference(kd, np, rows, level, None)
                    full = _kd_reference(kd, np, rows, level, sorted(labels))
                if ref is not None and not math.isfinite(ref):
                    ref = None
                if full is not None and not math.isfinite(full):
                    full = None
                assert ag.krippendorff_alpha(rows, level) == ref, (labels, level)
                assert ag.krippendorff_alpha(rows, level, sorted(labels)) == full, (labels, level, "full")
                checked += ref is not None
    assert checked > 400


def test_krippendorff_alpha_nominal_strings_equal_the_package():
    kd = need("krippendorff", "dev", "the test extra: pip install krippendorff")
    np = need("numpy", "dev")
    for labels, units, holey in CORPUS:
        if not isinstance(labels[0], str):
            continue
        for rows in (units, holey):
            data = np.array([["nan" if x is None else x for x in r] for r in rows]).T
            try:
                ref = float(kd.alpha(reliability_data=data, level_of_measurement="nominal"))
            except ValueError:
                ref = None
            assert ag.krippendorff_alpha(rows, "nominal") == ref


# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: four observers, twelve units,
# values 1..5, missing ratings. Published: nominal 0.743, ordinal 0.815, interval 0.849, ratio 0.797.
_N = None
PUBLISHED_OBSERVERS = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, _N, _N, _N],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, _N, 3],
    [_N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, _N],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, _N],
]
PUBLISHED_UNITS = [list(col) for col in zip(*PUBLISHED_OBSERVERS)]
PUBLISHED = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849, "ratio": 0.797}
#: What the krippendorff package (0.9.0) gives on that matrix, to the last bit (checked below when installed).
PACKAGE_VALUES = {
    "nominal": 0.743421052631579,
    "ordinal": 0.8153875037548814,
    "interval": 0.8491071428571428,
    "ratio": 0.7974027747116121,
}


@pytest.mark.parametrize("level", ag.LEVELS)
def test_krippendorff_published_example(level):
    got = ag.krippendorff_alpha(PUBLISHED_UNITS, level)
    assert round(got, 3) == PUBLISHED[level]
    assert got == PACKAGE_VALUES[level]


def test_krippendorff_published_example_package_values_are_current():
    kd = need("krippendorff", "dev", "the test extra: pip install krippendorff")
    np = need("numpy", "dev")
    for level, value in PACKAGE_VALUES.items():
        assert _kd_reference(kd, np, PUBLISHED_UNITS, level, None) == value


def test_krippendorff_edge_cases():
    assert ag.krippendorff_alpha([[1, 1], [1, 1]], "nominal") is None  # one value
    assert ag.krippendorff_alpha([[1, None], [2, None]], "nominal") is None  # no unit with two ratings
    with pytest.raises(ValueError):
        ag.krippendorff_alpha([["a", "b"]], "interval")
    with pytest.raises(ValueError):
        ag.krippendorff_alpha([[1, 2]], "cardinal")
    ordered = ag.krippendorff_alpha([["lo", "hi"], ["mid", "mid"], ["hi", "hi"]], "ordinal", ["lo", "mid", "hi"])
    numeric = ag.krippendorff_alpha([[0, 2], [1, 1], [2, 2]], "ordinal")
    assert ordered == numeric


def test_base_rates_and_labels():
    assert ag.base_rates([None, None], ["a"]) == {"a": None}
    assert ag.base_rates([1, 0, True, False], [0, 1]) == {0: 0.5, 1: 0.5}
    assert ag.normalize_label(False) == 0
    for bad in ([1], {"a": 1}, float("nan"), float("inf")):
        with pytest.raises(TypeError):
            ag.normalize_label(bad)


def test_bootstrap_intervals_are_seeded_and_skip_undefined_draws():
    rng = random.Random(1)
    a = [rng.randrange(3) for _ in range(60)]
    b = [x if rng.random() < 0.7 else rng.randrange(3) for x in a]

    def stats(pos):
        return {
            "kappa": ag.cohen_kappa([a[i] for i in pos], [b[i] for i in pos]),
            "never": None,
        }

    one = ag.bootstrap_intervals(len(a), stats, resamples=300, seed=7)
    two = ag.bootstrap_intervals(len(a), stats, resamples=300, seed=7)
    other = ag.bootstrap_intervals(len(a), stats, resamples=300, seed=8)
    assert one == two and one != other
    lo, hi = one["kappa"]
    assert -1.0 <= lo < ag.cohen_kappa(a, b) < hi <= 1.0
    assert one["never"] == (None, None)
    assert ag.bootstrap_intervals(0, stats, resamples=10, seed=0) == {"kappa": (None, None), "never": (None, None)}
