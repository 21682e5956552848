"""harness.analysis.stats: paired bootstrap intervals, verdicts, the scale check (pure
logic on synthetic data), and adaptive seeds on a real tiny sweep."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from harness.analysis import run_changes, stats
from harness.analysis.tables import Run


def _pairs(seed: int, n: int, factor: float, noise: float = 0.2):
    rng = np.random.default_rng(seed)
    ref = rng.lognormal(0, 1, n)
    return ref, ref * factor * rng.lognormal(0, noise, n)


def test_paired_change_estimates_and_covers_the_true_ratio():
    ref, arm = zip(*(_pairs(s, 2000, 0.8) for s in range(3)))
    iv = stats.paired_change(list(ref), list(arm), "mean", stats.rng_for("t"))
    truth = 0.8 * math.exp(0.2 ** 2 / 2) - 1        # E[lognormal noise] = exp(s^2 / 2)
    assert iv.low < iv.change < iv.high
    assert iv.low < truth < iv.high
    assert iv.high - iv.low < 0.05                   # 6000 pairs: a tight interval
    assert (iv.samples, iv.seeds) == (6000, 3)
    # same inputs, same interval
    again = stats.paired_change(list(ref), list(arm), "mean", stats.rng_for("t"))
    assert again == iv


def test_pairing_narrows_the_interval():
    # the arm is the reference plus 1 % noise: paired, the change is known to
    # about 1 %; an unpaired comparison of such heavy tails would not be
    ref, arm = _pairs(1, 500, 1.0, noise=0.01)
    paired = stats.paired_change([ref], [arm], "mean", stats.rng_for(1))
    shuffled = stats.paired_change([ref], [np.random.default_rng(2).permutation(arm)], "mean",
                                   stats.rng_for(1))
    assert paired.high - paired.low < 0.01
    assert shuffled.high - shuffled.low > 10 * (paired.high - paired.low)


def test_p99_and_empty_classes():
    ref, arm = _pairs(3, 3000, 1.5)
    iv = stats.paired_change([ref], [arm], "p99", stats.rng_for(3))
    assert iv.low < iv.change < iv.high and 0.3 < iv.change < 0.8
    empty = stats.paired_change([np.array([])], [np.array([])], "mean", stats.rng_for(4))
    assert math.isnan(empty.change) and empty.samples == 0


def _iterations(times: list[float], workers: int = 4, first: int = 1,
                start: float = 0.0) -> pd.DataFrame:
    """A job's measured iterations back to back from `start` (s): each
    worker's time a hair apart, as a ring's are."""
    starts = start + np.concatenate([[0.0], np.cumsum(times)[:-1]]) if times else []
    rows = [{"worker": w, "iteration": first + k, "start_ns": int(round(s0 * 1e9)) + w,
             "iteration_s": t * (1 + 0.001 * w), "measured": True}
            for k, (t, s0) in enumerate(zip(times, starts)) for w in range(workers)]
    return pd.DataFrame(rows, columns=["worker", "iteration", "start_ns", "iteration_s",
                                       "measured"])


def _means(runs) -> float:
    return run_changes.mean_iteration_s(runs)


def test_a_slower_arm_is_its_ratio_of_means():
    # the arm 1.5 x slower all along, measured from another iteration number:
    # the change is the ratio of the two means, its interval around it
    ref = [Run(iterations=_iterations([1.0, 1.2, 0.9, 1.1, 1.0] * 3, first=2))]
    arm = [Run(iterations=_iterations([1.5, 1.8, 1.35, 1.65, 1.5] * 2, first=1))]
    iv = run_changes.iteration_change(ref, arm)
    assert iv.change == pytest.approx(_means(arm) / _means(ref) - 1)
    assert not iv.has_too_few and iv.low < iv.change < iv.high
    assert iv.high - iv.low < 0.2


def test_the_change_agrees_with_the_means_across_phases():
    """Two phases, as a link-rate change makes them: fast (0-0.5 s), then
    slow. The arm is slower only in the first. Pairing the k-th iterations
    compared the reference's fast iterations with the arm's slow ones
    (+165 % beside means 67 % apart); by time the change is the means'."""
    ref_times = [0.010] * 50 + [0.040] * 13
    arm_times = [0.020] * 25 + [0.040] * 13
    ref = [Run(iterations=_iterations(ref_times, workers=2))]
    arm = [Run(iterations=_iterations(arm_times, workers=2))]
    iv = run_changes.iteration_change(ref, arm)
    by_means = _means(arm) / _means(ref) - 1
    n = min(len(ref_times), len(arm_times))
    kth = np.mean(np.array(arm_times[:n]) / np.array(ref_times[:n]) - 1)
    assert kth > 1.5 and 0.6 < by_means < 0.75            # what pairing by k-th said
    assert iv.change == pytest.approx(by_means)
    assert iv.low < by_means < iv.high < kth
    # a large decrease of a non-negative quantity stays above -100 %
    faster = run_changes.iteration_change(arm, [Run(iterations=_iterations([0.001, 0.05] * 30))])
    assert -1 < faster.low


def test_iteration_change_pools_seeds_and_counts_blocks():
    ref = [Run(iterations=_iterations([1.0, 1.5, 0.8, 1.2, 1.0, 0.9])),
           Run(iterations=_iterations([1.2, 1.0, 1.1, 0.9, 1.3]))]
    arm = [Run(iterations=_iterations([1.10, 1.65, 0.88, 1.32, 1.1, 0.99])),
           Run(iterations=_iterations([1.32, 1.10, 1.21, 0.99, 1.43]))]
    iv = run_changes.iteration_change(ref, arm)
    assert iv.change == pytest.approx(_means(arm) / _means(ref) - 1)
    assert iv.change == pytest.approx(0.10, abs=0.002)
    assert iv.low <= iv.change <= iv.high and iv.high - iv.low < 0.05
    assert iv.seeds == 2 and iv.samples <= 11
    # worker times are averaged per iteration: 4 workers are one sample, not 4
    assert run_changes.iteration_change(ref[:1], arm[:1]).samples <= 6


def test_time_blocks_join_a_block_the_arm_did_not_start_in():
    ref_b, arm_b, n = run_changes.time_blocks(np.array([0, 10, 20, 30, 40]),
                                              np.array([1, 25, 41, 50]))
    # blocks from 0, 10, 20, 30, 40: the arm started nothing in the 2nd and
    # 4th, which join the next
    assert n == 3
    assert list(ref_b) == [0, 1, 1, 2, 2] and list(arm_b) == [0, 1, 2, 2]
    # an arm that stopped early: the blocks after its last join its last
    ref_b, arm_b, n = run_changes.time_blocks(np.array([0, 10, 20, 30]), np.array([5]))
    assert n == 1 and list(ref_b) == [0, 0, 0, 0] and list(arm_b) == [0]


def test_iteration_change_stalls_and_edges():
    ref = [Run(iterations=_iterations([1.0, 1.1]))]
    stalled = run_changes.iteration_change(ref, [Run(iterations=_iterations([]))])
    assert stalled.change == stalled.low == stalled.high == math.inf
    one = run_changes.iteration_change(ref, [Run(iterations=_iterations([1.2], first=2))])
    assert one.change == pytest.approx(1.2 / 1.05 - 1) and one.has_too_few
    assert stats.judge("iteration_time", one) == (stats.TOO_FEW, False)   # undecided
    none = run_changes.iteration_change([Run()],
                                  [Run(iterations=_iterations([1.0]))])
    assert math.isnan(none.change)


def test_the_block_interval_covers_the_true_ratio():
    """Independent noise around a known ratio: over 300 replications the
    95 % interval covers it about 95 % of the time."""
    rng = np.random.default_rng(5)
    covered = 0
    for _ in range(300):
        ref = list(rng.lognormal(0, 0.3, 20))
        arm = list(1.2 * rng.lognormal(0, 0.3, 17))
        iv = run_changes.iteration_change([Run(iterations=_iterations(ref, workers=1))],
                                          [Run(iterations=_iterations(arm, workers=1))])
        covered += iv.low <= 1.2 - 1 <= iv.high
    assert 0.88 <= covered / 300 <= 0.995


@pytest.mark.parametrize("pairs", [1, 2, stats.MIN_ITERATION_PAIRS - 1,
                                   stats.MIN_ITERATION_PAIRS])
def test_iteration_interval_needs_its_minimum_of_pairs(pairs):
    # a clear +10 % change: decided yellow from the minimum on, "too few
    # samples" (no interval, not decided, but the estimate kept) below it
    ref = [Run(iterations=_iterations([1.0 + 0.1 * k for k in range(pairs)]))]
    arm = [Run(iterations=_iterations([(1.0 + 0.1 * k) * (1.1 + 0.001 * (-1) ** k)
                                       for k in range(pairs)]))]
    iv = run_changes.iteration_change(ref, arm)
    assert iv.samples <= pairs and iv.change == pytest.approx(0.1, abs=0.002)
    if iv.samples < stats.MIN_ITERATION_PAIRS:
        assert iv.has_too_few and math.isnan(iv.low) and math.isnan(iv.high)
        assert stats.judge("iteration_time", iv) == (stats.TOO_FEW, False)
        assert math.isnan(stats.seeds_to_decide(iv.change, iv.low, iv.high, iv.samples, 1))
    else:
        assert not iv.has_too_few and iv.low < 0.1 < iv.high
        assert stats.judge("iteration_time", iv) == ("yellow", True)


@pytest.mark.parametrize("stat", ["mean", "p99"])
def test_flow_intervals_need_their_minimum_of_pairs(stat):
    need = stats.MIN_FLOW_PAIRS[stat]
    ref, arm = _pairs(5, need, 0.5, noise=0.01)
    enough = stats.paired_change([ref], [arm], stat, stats.rng_for(5))
    assert not enough.has_too_few and enough.high < 0
    assert stats.judge("fct_small_" + stat, enough) == ("faster", True)
    few = stats.paired_change([ref[:need - 1]], [arm[:need - 1]], stat, stats.rng_for(5))
    assert few.has_too_few and few.change < 0 and few.samples == need - 1
    assert stats.judge("fct_small_" + stat, few) == (stats.TOO_FEW, False)
    # one pair: no longer "-50 % [-50, -50]", significant
    single = stats.paired_change([ref[:1]], [arm[:1]], stat, stats.rng_for(5))
    assert stats.judge("fct_small_" + stat, single) == (stats.TOO_FEW, False)


def test_verdicts_follow_the_thresholds():
    tv = stats.training_verdict
    assert tv(-0.5, 0.01) == ("green", True)
    assert tv(0.0101, 0.3) == ("yellow", True)
    assert tv(0.3001, math.inf) == ("red", True)
    assert tv(math.inf, math.inf) == ("red", True)
    assert tv(0.005, 0.02) == ("green/yellow", False)
    assert tv(0.2, 0.4) == ("yellow/red", False)
    assert tv(float("nan"), float("nan")) == ("n/a", False)
    bv = stats.background_verdict
    assert bv(-0.4, -0.001) == ("faster", True)
    assert bv(0.001, 0.2) == ("slower", True)
    assert bv(-0.05, 0.05) == ("n.s.", False)
    assert bv(float("nan"), 0.1) == ("n/a", False)


@pytest.mark.parametrize("mean, sd", [(0.0, 0.02), (0.004, 0.01), (0.2, 0.3), (-0.05, 0.1)])
def test_seeds_to_decide_projects_where_the_interval_clears_the_boundary(mean, sd):
    """With the paired changes' mean and spread as now, the interval at the
    projected number of seeds lies in one class and one seed fewer does not."""
    from scipy import stats as sps

    rng = np.random.default_rng(3)
    x = rng.normal(0, 1, 6)
    x = mean + sd * (x - x.mean()) / x.std(ddof=1)        # exactly this mean and sd
    iv = stats.paired_t_change(x, seeds=2)
    assert not stats.training_verdict(iv.low, iv.high)[1]
    projected = stats.seeds_to_decide(iv.change, iv.low, iv.high, iv.samples, iv.seeds)
    assert projected > 2

    def decided(seeds: float) -> bool:
        n = 3 * seeds                                       # 3 iterations a seed, as now
        half = sps.t.ppf(0.975, n - 1) * sd / math.sqrt(n)
        return stats.training_verdict(mean - half, mean + half)[1]

    assert decided(projected) and (projected == 3 or not decided(projected - 1))


def test_seeds_to_decide_edges():
    assert math.isnan(stats.seeds_to_decide(0.0, -0.005, 0.005, 6, 2))     # decided green
    assert math.isnan(stats.seeds_to_decide(0.0, -math.inf, math.inf, 1, 1))  # one pair
    assert stats.seeds_to_decide(0.01, 0.0, 0.02, 6, 2) == math.inf         # on the boundary
    # a far-off estimate needs just one more seed
    assert stats.seeds_to_decide(0.5, 0.29, 0.71, 6, 2) == 3


def test_seeds_to_decide_reads_the_spread_above_a_lower_end_cut_at_minus_100():
    # paired_t_change cuts the lower end at -100 %: the projection is that of
    # the uncut interval (its spread from the upper half)
    # (20 iteration pairs over 4 seeds: the cut end alone would project 5)
    uncut, cut = (stats.seeds_to_decide(-0.5, low, 0.1, 20, 4) for low in (-1.1, -1.0))
    assert cut == uncut == 6


def test_compare_scales():
    rows = []
    for scale, (c, lo, hi) in ((1, (0.10, 0.05, 0.15)), (10, (0.12, 0.10, 0.14))):
        rows.append({"training.ratio": 4, "scale": scale, "arm": "low",
                     "metric": "iteration_time", "change": c, "change_low": lo,
                     "change_high": hi})
    rows.append({"training.ratio": 4, "scale": 1, "arm": "low", "metric": "fct_small_mean",
                 "change": -0.2, "change_low": -0.3, "change_high": -0.1})
    rows.append({"training.ratio": 4, "scale": 10, "arm": "low", "metric": "fct_small_mean",
                 "change": 0.1, "change_low": 0.0, "change_high": 0.2})
    out = stats.compare_scales(pd.DataFrame(rows), ["training.ratio", "scale"]).set_index("metric")
    it = out.loc["iteration_time"]
    assert it["difference"] == pytest.approx(0.02)
    assert it["difference_high"] - it["difference"] == pytest.approx(math.hypot(0.05, 0.02))
    assert it["within"] and it["same_sign"]
    fct = out.loc["fct_small_mean"]
    assert not fct["within"] and not fct["same_sign"]
    assert stats.compare_scales(pd.DataFrame(rows), ["training.ratio"]).empty


def test_more_seeds_only_for_undecided_points_below_the_budget():
    from harness.sweeps import adaptive
    from harness.sweeps.cells import Cell
    from harness.sweeps.grid import Grid

    grid = Grid("g", None, "", {}, (), (("training.ratio", (1, 2, 3)), ("seed", (1,))),
                (("same", ()), ("low", ())), "same", 60.0)
    cells = [Cell(f"{r}{s}{a}", a, (("training.ratio", r), ("seed", s)), None)
             for r in (1, 2, 3) for s in ((1, 2) if r == 2 else (1,)) for a in ("same", "low")]
    means = pd.DataFrame([
        {"training.ratio": 1, "arm": "low", "metric": "iteration_time", "verdict": "green/yellow",
         "decided": False},
        {"training.ratio": 1, "arm": "low", "metric": "fct_small_mean", "verdict": "faster",
         "decided": True},
        {"training.ratio": 2, "arm": "low", "metric": "iteration_time", "verdict": "yellow/red",
         "decided": False},
        {"training.ratio": 3, "arm": "low", "metric": "iteration_time", "verdict": "red",
         "decided": True},
        {"training.ratio": 3, "arm": "low", "metric": "fct_small_mean", "verdict": "n.s.",
         "decided": False}])
    made = []
    import unittest.mock as mock
    with mock.patch.object(adaptive, "make_cell", lambda g, point, arm: made.append((point, arm))):
        adaptive.more_seeds(grid, cells, means, max_seeds=2)
    # R=1 (one seed so far) gets seed 2 in both arms; R=2 already has 2 seeds;
    # R=3 is decided (its background change is not significant: not a reason)
    assert made == [((("training.ratio", 1), ("seed", 2)), "same"),
                    ((("training.ratio", 1), ("seed", 2)), "low")]


def test_adaptive_sweep_adds_seeds_where_undecided(grid_file, tmp_path):
    """A real tiny sweep: after round 1, exactly the undecided points get one
    more seed (the outcome of round 1 is whatever ns-3 gives; the rule is
    checked against it)."""
    from harness.sweeps import sweeping
    from harness.sweeps.adaptive import DECIDING_METRICS
    from harness.sweeps.grid import load_grid

    text = grid_file.read_text().replace("[axes]", "[axes]\nseed = [1]") \
        .replace('"background.load" = [0.05, 0.1]', '"background.load" = [0.1]')
    path = tmp_path / "adaptive.toml"
    path.write_text(text + "\n[adaptive]\nmax_seeds = 2\n")
    grid = load_grid(path)
    first = tmp_path / "first"
    one = sweeping.run_sweep(grid, first, jobs=2, progress=False, max_seeds=0)
    judged = one.tables["deltas_mean"]
    judged = judged[judged["metric"].isin(DECIDING_METRICS)]
    undecided = {r for r, d, v in zip(judged["training.ratio"], judged["decided"],
                                       judged["verdict"]) if not d and v != "n/a"}
    report = sweeping.run_sweep(grid, tmp_path / "adaptive", jobs=2, progress=False)
    record = json.loads((tmp_path / "adaptive" / "sweep.json").read_text())
    added = {(c["point"]["training.ratio"], c["point"]["seed"], c["arm"])
             for c in record["cells"] if c.get("added")}
    assert added == {(r, 2, arm) for r in undecided for arm in ("same", "low")}
    assert report.rounds == (2 if undecided else 1)
    assert report.cells == 4 + len(added)
    # resuming finds the added seeds in sweep.json and runs nothing
    again = sweeping.run_sweep(grid, tmp_path / "adaptive", jobs=2, progress=False, resume=True)
    assert again.ran == 0 and again.cells == report.cells


def test_paired_deltas_with_the_seed_as_the_only_axis():
    from harness.analysis import metrics

    s = pd.DataFrame({"seed": [1, 1, 2, 2], "arm": ["a", "b", "a", "b"],
                      "mean_iteration_s": [1.0, 0.9, 1.0, 0.8], "training_stalled": [False] * 4})
    d = metrics.paired_deltas(s, ["seed"], "arm", "a", (("mean_iteration_s", "iteration_time"),))
    assert list(d["change"]) == pytest.approx([-0.1, -0.2])


# --------------------------------------------------------------------------
# issue 46: the tails' rule and intervals, unpaired changes, cell-keyed seeds


def test_a_tail_needs_enough_samples_beyond_its_quantile():
    # the fewest n with q ** n <= 2.5 %: below it, no observation beyond the
    # quantile is more likely than 2.5 %, and no interval has an upper end
    assert stats.min_tail_samples(0.99) == 368 and stats.min_tail_samples(0.999) == 3688
    for q in (0.99, 0.999):
        n = stats.min_tail_samples(q)
        assert q ** n <= 0.025 < q ** (n - 1)
    assert stats.MIN_FLOW_PAIRS["p99"] == stats.MIN_PAIRS["p99"] == 368
    assert stats.MIN_PAIRS["p999"] == 3688
    assert stats.min_pairs_of("iteration_time_p99") == 368
    assert stats.min_pairs_of("fct_large_p999") == 3688
    assert stats.min_pairs_of("iteration_time") == stats.MIN_ITERATION_PAIRS
    assert stats.too_few_words("fct_small_p99", 12) == "too few samples: 12 of 368 pairs"


def test_the_iteration_tail_is_paired_and_bootstrapped():
    rng = np.random.default_rng(7)
    times = list(1.0 + rng.lognormal(0, 0.5, 400))
    ref = [Run(iterations=_iterations(times, workers=1))]
    arm = [Run(iterations=_iterations([t * 1.3 for t in times], workers=1))]
    iv = run_changes.iteration_tail_change(ref, arm, "p99", stats.rng_for("tail"))
    assert iv.samples == 400 and iv.change == pytest.approx(0.3)
    assert iv.low < 0.3 < iv.high and iv.high - iv.low < 0.5   # blocks of time resampled
    again = run_changes.iteration_tail_change(ref, arm, "p99", stats.rng_for("tail"))
    assert again == iv
    assert stats.judge("iteration_time_p99", iv) == (stats.SLOWER, True)
    few = run_changes.iteration_tail_change(ref, arm, "p999", stats.rng_for("tail"))
    assert few.has_too_few and few.change == pytest.approx(0.3)
    assert stats.judge("iteration_time_p999", few) == (stats.TOO_FEW, False)
    stalled = run_changes.iteration_tail_change(ref, [Run(iterations=_iterations([]))], "p99",
                                          stats.rng_for("tail"))
    assert stalled.change == math.inf


def test_unpaired_change_covers_the_true_ratio_and_needs_its_minimum():
    rng = np.random.default_rng(11)
    ref = [rng.lognormal(0, 1, 3000)]
    arm = [rng.lognormal(0, 1, 3000) * 1.5]
    iv = stats.unpaired_change(ref, arm, "mean", stats.rng_for("u"))
    assert iv.low < 0.5 < iv.high and iv.samples == 3000
    paired_width = stats.paired_change(ref, [ref[0] * 1.5], "mean", stats.rng_for("u"))
    assert paired_width.high - paired_width.low < (iv.high - iv.low) / 10
    few = stats.unpaired_change([ref[0][:5]], [arm[0][:500]], "mean", stats.rng_for("u"))
    assert few.has_too_few and few.samples == 5


def test_the_seed_of_a_bootstrap_is_its_cells_not_their_order():
    assert stats.cells_key(["b", "a"], ["d", "c"]) == stats.cells_key(["a", "b"], ["c", "d"])
    assert stats.cells_key(["a"], ["b"]) != stats.cells_key(["b"], ["a"])   # the sides count
    ref, arm = _pairs(9, 500, 0.8)
    key = stats.cells_key(["x1"], ["y1"])
    one = stats.paired_change([ref], [arm], "mean", stats.rng_for(*key, "small", "mean"))
    two = stats.paired_change([ref], [arm], "mean", stats.rng_for(*key, "small", "mean"))
    other = stats.paired_change([ref], [arm], "mean",
                                stats.rng_for(*stats.cells_key(["x2"], ["y1"]), "small", "mean"))
    assert one == two and (one.low, one.high) != (other.low, other.high)


def test_a_paired_change_interval_stops_at_minus_100_percent():
    """A change of a non-negative quantity (an end spread that nearly
    vanishes in one arm) cannot fall below -100 %: the t interval is cut
    there, its upper end and the estimate untouched."""
    x = np.array([-1.0, -1.0, -0.2, -1.0, -1.0, -0.1, -1.0])
    iv = stats.paired_t_change(x, seeds=2)
    half = iv.high - iv.change
    assert iv.change - half < -1.0          # the plain t interval would go below
    assert iv.low == -1.0 and iv.change == pytest.approx(x.mean())
