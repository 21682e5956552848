"""The boundary search's bisection (harness.sweeps.boundary) with fake oracles, the
runner's bookkeeping with fake judgements (harness.sweeps.searching, no ns-3), the
figure from a made-up table, and one small real search (slow)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from harness.sweeps import boundary
from harness.sweeps.boundary import (ABOVE, BELOW, UNDECIDED, Crossing, Observation, Range,
                              canonical, next_probe, search)


def linear(slope: float, noise: float = 0.0, undecided: tuple[float, float] | None = None):
    """A probe oracle: slowdown = slope * value, its interval +-noise; values
    in `undecided` (a, b) straddle the threshold whatever the seeds."""
    def probe(threshold: float):
        def at(value: float) -> Observation:
            change = slope * value
            low, high = change - noise, change + noise
            if undecided and undecided[0] < value < undecided[1]:
                low, high = threshold - 0.001, threshold + 0.001
            return Observation(value, boundary.side(low, high, threshold), change, low, high, 1)
        return at
    return probe


def test_side_of_the_threshold():
    assert boundary.side(0.001, 0.01, 0.01) == BELOW      # at the limit: the lower class
    assert boundary.side(0.0101, 0.02, 0.01) == ABOVE
    assert boundary.side(0.005, 0.02, 0.01) == UNDECIDED
    assert boundary.side(math.nan, math.nan, 0.01) == UNDECIDED   # too few samples
    assert boundary.side(math.inf, math.inf, 0.01) == ABOVE      # stalled
    assert boundary.side(0.5, math.inf, 0.3) == ABOVE


@pytest.mark.parametrize("threshold", [0.01, 0.30])
def test_bisection_brackets_the_crossing_within_the_tolerance(threshold):
    span = Range(23, 184, 10)
    slope = 0.3 / 120                        # crosses 1 % at 4, 30 % at 120
    crossing, history = search(span, threshold, linear(slope)(threshold))
    truth = threshold / slope
    if truth < span.lo:
        assert crossing.status == boundary.BELOW_RANGE and crossing.high == span.lo
        assert [o.value for o in history] == [23]
        return
    assert crossing.status == boundary.BRACKETED
    assert crossing.low <= truth <= crossing.high
    assert crossing.high - crossing.low <= span.tolerance
    assert crossing.probes == len(history) <= boundary.most_probes(span)
    # a straight line: the interpolation finds it
    assert crossing.estimate == pytest.approx(truth)
    # the low end first; the high end only when the bracket reaches it
    assert history[0].value == 23 and history[1].value == (23 + 184) / 2
    assert 184 not in [o.value for o in history]


def test_the_crossing_outside_the_range():
    span = Range(23, 184, 10)
    low_end_above = search(span, 0.01, linear(1.0)(0.01))[0]
    assert (low_end_above.status, low_end_above.high, low_end_above.probes) == \
        (boundary.BELOW_RANGE, 23, 1)
    high_end_below, history = search(span, 0.30, linear(1e-4)(0.30))
    assert (high_end_below.status, high_end_below.low) == (boundary.ABOVE_RANGE, 184)
    # halvings up to the high end, which is probed once the bracket reaches it
    assert history[-1].value == 184 and high_end_below.probes == len(history) == 7
    assert math.isnan(high_end_below.high) and math.isnan(high_end_below.estimate)


def test_an_undecided_probe_is_cleared_by_a_window_reusing_a_decided_end():
    """An undecided probe at 92 with 65 decided below: the window [65, 130]
    clears it, so the next probe is 130, and once decided above the bracket is
    within the factor (the search does not add seeds where the slowdown is
    within noise of the threshold)."""
    span = Range(23, 184, 2, log=True)
    crossing, history = search(span, 0.01, linear(0.01 / 100, undecided=(90, 120))(0.01))
    values = [o.value for o in history]
    # 23 and 65 extended reach 1 % above sqrt(65 x 184): the last halving's
    # probe is the lowest that brings the bracket within the factor, 184 / 2
    assert values[:3] == [23, pytest.approx(math.sqrt(23 * 184)), 92]
    assert history[2].side == UNDECIDED
    assert values[3] == pytest.approx(2 * math.sqrt(23 * 184))
    assert crossing.status == boundary.BRACKETED and crossing.probes == 4
    assert crossing.low == pytest.approx(math.sqrt(23 * 184))
    assert crossing.high == pytest.approx(2 * crossing.low)
    assert crossing.low <= 100 <= crossing.high


def test_a_band_of_undecided_probes_is_cleared_on_both_sides():
    """No decided end within the factor: a window around the band, the upper
    side first, then a wider band and a narrower window; the bracket ends
    within the factor around the truth."""
    span = Range(23, 184, 2, log=True)
    truth, band = 75.0, (60, 95)
    crossing, history = search(span, 0.01, linear(0.01 / truth, undecided=band)(0.01))
    assert crossing.status == boundary.BRACKETED
    assert crossing.low <= truth <= crossing.high <= 2 * crossing.low * (1 + boundary._SLACK)
    undecided = [o.value for o in history if o.side == UNDECIDED]
    assert 1 <= len(undecided) <= boundary.MAX_UNDECIDED
    assert len(history) <= boundary.most_probes(span)
    # the window's upper side is probed before its lower side
    after = [o.value for o in history[history.index(
        next(o for o in history if o.side == UNDECIDED)) + 1:]]
    assert after[0] > undecided[0]


def test_a_window_is_not_built_on_the_unprobed_high_end():
    """92 and 130 undecided (65 x 2 = 130 no longer clears the band). 184 / 2
    = 92 would, were 184 decided, but it has not been probed: the window is
    set around the band [92, 130] instead (as wide as a band may be: each side
    a quarter of the tolerance outside it), its upper side 154.7 first (above),
    then its lower side 77.4 (below), and the bracket [77.4, 154.7] is within
    the factor without the high end."""
    span = Range(23, 184, 2, log=True)
    crossing, history = search(span, 0.01, linear(0.01 / 115, undecided=(80, 140))(0.01))
    lattice = [23 * 2 ** (k / 4) for k in range(13)]      # 23 x 2^(k/4)
    values = [o.value for o in history]
    assert values == pytest.approx([lattice[i] for i in (0, 6, 8, 10, 11, 7)])
    assert [o.side for o in history] == [BELOW, BELOW, UNDECIDED, UNDECIDED, ABOVE, BELOW]
    assert (crossing.status, crossing.low, crossing.high) == \
        (boundary.BRACKETED, history[5].value, history[4].value)
    assert 184 not in values


def test_with_max_undecided_0_an_undecided_probe_ends_the_search():
    span = Range(0, 160, 1, max_undecided=0)
    crossing, history = search(span, 0.3, linear(0.3 / 100, undecided=(90, 110))(0.3))
    # 0, 80 (below), 120 (above), 100: undecided, and 160 never needed
    assert [o.value for o in history] == [0, 80, 120, 100]
    assert crossing == Crossing(boundary.UNDECIDED_BETWEEN, crossing.estimate, 80, 120, 4)
    assert boundary.most_probes(span) == 2 + 8


def test_the_band_is_the_undecided_probes_inside_the_bracket():
    history = [Observation(23, BELOW), Observation(65, UNDECIDED), Observation(109, UNDECIDED),
               Observation(130, ABOVE), Observation(150, UNDECIDED)]
    assert boundary.band(history, 23, 130) == (65, 109)
    assert boundary.band(history, 23, math.nan) == (65, 150)     # no decided high end
    assert all(math.isnan(v) for v in boundary.band(history[:1], 23, 130))


def test_undecided_windows_end_the_search_between_its_decided_neighbours():
    """Undecided wherever it probes near the crossing: 80, then the window's
    upper side 87.5 (three quarters of the tolerance above the band, its
    lower side 77.5 a quarter below); the band [80, 87.5] is then wider than
    half the tolerance, so no window clears it, and the search closes the
    bracket from above, one tolerance above the band (97.5, undecided too,
    then 107.5 above that band), then at the high end, and ends "undecided
    between" the decided probes."""
    span = Range(0, 160, 10)
    crossing, history = search(span, 0.3, linear(0.3 / 100, undecided=(70, 130))(0.3))
    assert [(o.value, o.side) for o in history] == [
        (0, BELOW), (80, UNDECIDED), (87.5, UNDECIDED), (97.5, UNDECIDED), (107.5, UNDECIDED),
        (160, ABOVE)]
    assert boundary.MAX_UNDECIDED == 2
    assert crossing == Crossing(boundary.UNDECIDED_BETWEEN, crossing.estimate, 0, 160, 6)
    # a band cleared one tolerance above: that probe closes the bracket
    crossing, history = search(span, 0.3, linear(0.3 / 90, undecided=(70, 95))(0.3))
    assert history[-1].value == 97.5 and history[-1].side == ABOVE
    assert crossing.status == boundary.UNDECIDED_BETWEEN and crossing.high == 97.5
    assert math.isnan(crossing.estimate)


@pytest.mark.parametrize("span", [Range(23, 184, 2, log=True), Range(23, 184, 10),
                                  Range(23, 184, 2, log=True, max_undecided=0),
                                  Range(23, 184, 10, max_undecided=3),
                                  Range(1, 20, 0.5, integral=True),
                                  Range(1, 1000, 1.2, integral=True, log=True),
                                  Range(0.05, 0.45, 0.1)])
def test_every_outcome_sequence_ends_within_most_probes(span):
    """Whatever the probes' sides (below, above or undecided, in every
    order): the search ends within most_probes, probes inside the range, never
    the same value twice, and a bracketed crossing is narrow enough between a
    decided-below and a decided-above probe."""
    change = {BELOW: 0.005, ABOVE: 0.02, UNDECIDED: 0.01}
    ends = 0

    def walk(history):
        nonlocal ends
        step = next_probe(span, 0.01, history)
        if isinstance(step, Crossing):
            ends += 1
            assert len(history) <= boundary.most_probes(span)
            if step.status == boundary.BRACKETED:
                sides = {o.value: o.side for o in history}
                assert sides[step.low] == BELOW and sides[step.high] == ABOVE
                assert span.narrow_enough(step.low, step.high) or span.integral
            return
        assert span.lo <= step <= span.hi and step not in [o.value for o in history]
        for side in change:
            walk([*history, Observation(step, side, change[side])])

    walk([])
    assert ends > 10


def test_an_undecided_low_end_is_bounded_from_above_within_the_tolerance():
    """The slowdown at lo is within noise of the threshold: the search probes
    one tolerance above it and ends undecided, no low end (nothing below lo
    can be probed), its high end decided within the tolerance."""
    crossing, history = search(Range(0, 10, 1), 0.3, linear(1.0, undecided=(-1, 1))(0.3))
    assert [(o.value, o.side) for o in history] == [(0, UNDECIDED), (1, ABOVE)]
    assert crossing.status == boundary.UNDECIDED_BETWEEN
    assert math.isnan(crossing.low) and crossing.high == 1
    assert boundary.band(history, crossing.low, crossing.high) == (0, 0)
    # log spacing: boundary-quick's R = 4 at 1 %, 23 undecided: 46 next
    span = Range(23, 184, 2, log=True)
    assert next_probe(span, 0.01, [Observation(23, UNDECIDED, 0.0057)]) == 46
    # a decided probe below above the undecided low end: bisection from there
    crossing, history = search(span, 0.01, linear(0.01 / 70, noise=0.001,
                                                  undecided=(20, 30))(0.01))
    assert history[0].side == UNDECIDED and history[1].side == BELOW
    assert crossing.status == boundary.BRACKETED and crossing.low <= 70 <= crossing.high


def test_an_undecided_high_end_leaves_the_bracket_open_above():
    crossing, history = search(Range(0, 10, 1), 0.3, linear(0.03, undecided=(9, 11))(0.3))
    assert crossing.status == boundary.UNDECIDED_BETWEEN
    assert {o.value: o.side for o in history}[10] == UNDECIDED
    assert crossing.low == max(o.value for o in history if o.side == BELOW) <= 9
    assert math.isnan(crossing.high)


def test_integral_fields_probe_whole_numbers():
    span = Range(1, 20, 0.5, integral=True)
    crossing, history = search(span, 0.3, linear(0.3 / 7.4)(0.3))
    assert all(float(o.value).is_integer() for o in history)
    assert (crossing.low, crossing.high) == (7, 8)


@pytest.mark.parametrize("threshold", [0.01, 0.30])
def test_log_spacing_brackets_within_a_factor_in_fewer_probes(threshold):
    """Geometric bisection: probes at sqrt(a b), the bracket within a factor;
    over [23, 184] (three doublings) a factor 2 takes two probes after the ends,
    where a linear search to within 23 takes three."""
    span = Range(23, 184, 2, log=True)
    slope = 0.3 / 120
    crossing, history = search(span, threshold, linear(slope)(threshold))
    truth = threshold / slope
    if truth < span.lo:
        assert crossing.status == boundary.BELOW_RANGE
        return
    assert crossing.status == boundary.BRACKETED
    assert crossing.low <= truth <= crossing.high <= 2 * crossing.low
    assert history[1].value == pytest.approx(math.sqrt(23 * 184))
    assert crossing.probes == len(history) <= 4
    assert boundary.most_probes(span) == 4 + 2 * boundary.MAX_UNDECIDED
    assert boundary.most_probes(Range(23, 184, 23)) == 5 + 2 * boundary.MAX_UNDECIDED
    assert crossing.low < crossing.estimate < crossing.high


def test_log_spacing_of_an_integral_field():
    span = Range(1, 1000, 1.2, integral=True, log=True)
    crossing, history = search(span, 0.3, linear(0.3 / 77.7)(0.3))
    assert all(float(o.value).is_integer() for o in history)
    assert history[1].value == 31                       # floor(sqrt(1000))
    assert crossing.low <= 77.7 <= crossing.high
    assert crossing.high / crossing.low <= 1.2 or crossing.high - crossing.low == 1


def test_decisions_are_replayed_from_the_probes_alone():
    """A resumed search: each prefix of the probes gives the next one made."""
    span = Range(23, 184, 5)
    _, history = search(span, 0.01, linear(0.01 / 77.7, noise=0.001)(0.01))
    for n in range(len(history)):
        assert next_probe(span, 0.01, history[:n]) == history[n].value
    assert isinstance(next_probe(span, 0.01, history), Crossing)


def test_interpolation_stays_in_the_bracket():
    a = Observation(10, BELOW, 0.0)
    b = Observation(20, ABOVE, 0.5)
    assert boundary.interpolate(a, b, 0.25) == 15
    assert boundary.interpolate(a, Observation(20, ABOVE, math.inf), 0.25) == 15  # a stall
    assert boundary.interpolate(Observation(10, BELOW, 0.6), b, 0.25) == 15   # not rising
    assert 10 <= boundary.interpolate(Observation(10, BELOW, -0.5), b, 0.01) <= 20
    # over log(value): halfway in slowdown is the geometric middle
    assert boundary.interpolate(a, Observation(40, ABOVE, 0.5), 0.25, log=True) == \
        pytest.approx(20)


def test_most_probes():
    windows = 2 * boundary.MAX_UNDECIDED
    assert boundary.most_probes(Range(23, 184, 10)) == 7 + windows
    assert boundary.most_probes(Range(0, 1, 1)) == 2 + windows
    assert boundary.most_probes(Range(1, 20, 0.5, integral=True)) == 7 + windows


# --------------------------------------------------------------------------
# the runner's bookkeeping, with judgements faked (no ns-3)

SEARCH_GRID = """name = "b"
scenario = "default"
[set]
"run.duration" = 0.25
"training.enabled" = true
"training.profile" = "resnet50-like-2MB"
[axes]
"training.ratio" = [1, 2]
seed = [1]
[arms]
reference = "same"
same = { "training.priority" = "same" }
low = { "training.priority" = "low" }
[search]
field = "background.load"
lo = 0.05
hi = 0.45
tolerance = 0.1
thresholds = [0.1, 0.3]
max_seeds = 3
"""


def test_searches_share_probes_add_seeds_and_decide_alike_in_any_order(tmp_path, monkeypatch):
    """Cells end in any order: each search gets the same probes, seeds and
    crossing; a probe undecided at one seed gets its second; both thresholds
    share the range's low end, and the high end is made only where a search
    reaches it."""
    from harness.sweeps import searching
    from harness.sweeps.grid import load_grid

    (tmp_path / "g.toml").write_text(SEARCH_GRID)
    grid = load_grid(tmp_path / "g.toml")

    def fake_judge(self, point, value, k, threshold):
        ratio = dict(point)["training.ratio"]
        change = value / ratio            # crosses a threshold t at t x R
        half = 0.05 if k < 2 else 0.0     # undecided near the threshold with one seed
        low, high = change - half, change + half
        return Observation(value, boundary.side(low, high, threshold), change, low, high, k)

    monkeypatch.setattr(searching.Searches, "judge", fake_judge)
    monkeypatch.setattr(searching, "cell_state", lambda out, cell, retry: "run")

    def run(order):
        counts = {"ran": 0, "failed": 0, "todo": 0}
        s = searching.Searches(tmp_path, grid, False, counts)
        queue = s.start([])
        while queue:
            cell = queue.pop(0 if order == "fifo" else -1)
            queue += s.ended(cell)
        return s

    fifo, lifo = run("fifo"), run("lifo")
    table_f, probes_f = searching.tables(fifo)
    table_l, probes_l = searching.tables(lifo)
    pd.testing.assert_frame_equal(table_f, table_l)
    pd.testing.assert_frame_equal(probes_f, probes_l)
    assert [c.id for c in fifo.used()] == [c.id for c in lifo.used()]
    assert list(table_f["status"]) == ["bracketed", "bracketed", "bracketed", "above range"]
    # the low end was made once per point, for both thresholds; the high end
    # only for the search that ended above the range
    ends = [c for c in fifo.used() if dict(c.point)["background.load"] in (0.05, 0.45)
            and dict(c.point)["seed"] == 1]
    assert len(ends) == (2 + 1) * 2     # (points' low ends + one high end) x arms
    assert probes_f["seeds"].max() >= 2   # some probe needed its second seed
    for row in table_f.to_dict("records"):
        truth = row["threshold"] * row["training.ratio"]
        if row["status"] == boundary.BRACKETED:
            assert row["low"] <= truth <= row["high"]


def test_windows_run_through_the_runner_alike_in_any_order(tmp_path, monkeypatch):
    """Probes near the crossing stay undecided with every seed: the runner
    gives each max_seeds, the searches go on with windows around them, and
    the probes, seeds, cells and brackets are the same whichever order the
    cells end in; a bracketed crossing holds the truth within the tolerance."""
    from harness.sweeps import searching
    from harness.sweeps.grid import load_grid

    (tmp_path / "g.toml").write_text(SEARCH_GRID)
    grid = load_grid(tmp_path / "g.toml")

    def fake_judge(self, point, value, k, threshold):
        ratio = dict(point)["training.ratio"]
        truth = threshold * ratio + 0.05             # crosses t at t x R + 0.05: a probe
        change = (value - 0.05) / ratio              # (0.15) lands on R = 1's 10 %
        half = 0.05 if abs(value - truth) < 0.03 else 0.0    # a band of noise around it
        return Observation(value, boundary.side(change - half, change + half, threshold),
                           change, change - half, change + half, k)

    monkeypatch.setattr(searching.Searches, "judge", fake_judge)
    monkeypatch.setattr(searching, "cell_state", lambda out, cell, retry: "run")

    def run(order):
        s = searching.Searches(tmp_path, grid, False, {"ran": 0, "failed": 0, "todo": 0})
        queue = s.start([])
        while queue:
            queue += s.ended(queue.pop(0 if order == "fifo" else -1))
        return s

    fifo, lifo = run("fifo"), run("lifo")
    table, probes = searching.tables(fifo)
    pd.testing.assert_frame_equal(table, searching.tables(lifo)[0])
    pd.testing.assert_frame_equal(probes, searching.tables(lifo)[1])
    assert [c.id for c in fifo.used()] == [c.id for c in lifo.used()]
    undecided = probes[probes["side"] == UNDECIDED]
    assert len(undecided) > 0 and (undecided["seeds"] == grid.search.max_seeds).all()
    for row in table.to_dict("records"):
        truth = row["threshold"] * row["training.ratio"] + 0.05
        if row["status"] == boundary.BRACKETED:
            assert row["low"] <= truth <= row["high"]
            assert row["high"] - row["low"] <= grid.search.tolerance + 1e-9
    # a search went on past an undecided probe and ended bracketed
    went_on = probes.merge(table[table["status"] == boundary.BRACKETED],
                           on=["training.ratio", "threshold"])
    assert (went_on["side"] == UNDECIDED).any()
    # the band: the undecided probes inside each bracket
    for row in table.to_dict("records"):
        mine = probes[(probes["training.ratio"] == row["training.ratio"])
                      & (probes["threshold"] == row["threshold"])]
        lo = -math.inf if math.isnan(row["low"]) else row["low"]
        hi = math.inf if math.isnan(row["high"]) else row["high"]
        values = mine.loc[mine["side"] == UNDECIDED, "background.load"]
        inside = values[(values >= lo) & (values <= hi)]
        if len(inside):
            assert (row["band_low"], row["band_high"]) == (inside.min(), inside.max())
        else:
            assert math.isnan(row["band_low"]) and math.isnan(row["band_high"])


def test_a_search_grid_says_what_it_would_do(tmp_path):
    from click.testing import CliRunner

    from harness import cli

    (tmp_path / "g.toml").write_text(SEARCH_GRID)
    result = CliRunner().invoke(cli.main, ["check", str(tmp_path / "g.toml"), "-j", "2"])
    assert result.exit_code == 0, result.output
    assert "a boundary search" in result.output
    assert "at most 8 per search" in result.output
    assert result.output.count(" ok\n") == 2 * 2 * 2


def test_the_preset_loads_and_checks():
    from harness.sweeps.grid import load_grid

    grid = load_grid("boundary-quick")
    assert grid.search.field == "background.rate"
    assert (grid.search.lo, grid.search.hi) == (23, 184)
    assert grid.search.tolerance <= 23
    assert grid.search.thresholds == (0.01, 0.30)
    assert [f for f, _ in grid.axes] == ["training.ratio", "seed"]


def test_the_figure_draws_every_status(tmp_path):
    from harness.outputs.plots.boundary_figure import draw_boundary_curves
    from harness.outputs.plots.style import save_figure

    table = pd.DataFrame([
        {"training.ratio": 2, "threshold": 0.01, "status": "bracketed", "crossing": 30.0,
         "low": 25.0, "high": 35.0},
        {"training.ratio": 4, "threshold": 0.01, "status": "below range", "crossing": math.nan,
         "low": math.nan, "high": 23.0},
        {"training.ratio": 2, "threshold": 0.3, "status": "above range", "crossing": math.nan,
         "low": 184.0, "high": math.nan},
        {"training.ratio": 4, "threshold": 0.3, "status": "undecided", "crossing": math.nan,
         "low": 100.0, "high": 140.0},
    ])
    cells = pd.DataFrame({"training.ratio": [2, 2, 4, 4], "background.rate": [23, 184, 23, 184],
                          "change": [0.0, 0.5, 0.02, math.nan],
                          "change_low": [-0.01, 0.4, 0.0, math.nan],
                          "change_high": [0.01, 0.6, 0.04, math.nan],
                          "decided": [True, True, False, False]})
    probes = pd.DataFrame({"training.ratio": [2, 2, 4], "threshold": [0.01, 0.01, 0.3],
                           "background.rate": [23.0, 184.0, 103.5],
                           "side": ["below", "above", "undecided"]})
    fig = draw_boundary_curves(table, ["training.ratio"], "background.rate", 23, 184, "t", cells,
                               probes)
    written = save_figure(fig, tmp_path, "boundary", ("png",))
    assert written[0].stat().st_size > 10_000


def test_the_figures_axis_follows_the_searchs_spacing_and_has_readable_ticks():
    """A linear search draws a linear axis, a log one a log axis; without a
    map the axis has round values between the range's ends (the ends alone
    left the crossings unreadable), none crowding an end."""
    from harness.outputs.plots.boundary_figure import _ticks, draw_boundary_curves

    table = pd.DataFrame([{"training.ratio": 4, "threshold": 0.1, "status": "bracketed",
                           "crossing": 0.08, "low": 0.05, "high": 0.15}])
    for log, scale in ((False, "linear"), (True, "log")):
        fig = draw_boundary_curves(table, ["training.ratio"], "background.load", 0.05, 0.6,
                                   "t", log=log)
        ax = fig.axes[0]
        assert ax.get_yscale() == scale
        ticks = [t for t in ax.get_yticks() if 0.05 <= t <= 0.6]
        assert ticks[0] == 0.05 and ticks[-1] == 0.6 and len(ticks) >= 4
    assert _ticks(23, 184, True) == [23, 50, 100, 184]
    assert _ticks(23, 184, True, [23, 46, 92, 184]) == [23, 46, 92, 184]   # the map's values
    linear = _ticks(0.05, 0.6, False)
    assert min(b - a for a, b in zip(linear, linear[1:])) > 0.06 * 0.55 * 0.9


# --------------------------------------------------------------------------
# one small real search (ns-3)

REAL_SEARCH = """name = "tiny-boundary"
scenario = "default"
timeout = "10min"
[set]
"run.duration" = 0.25
"run.warmup" = 0.05
"run.cooldown" = 0.05
"training.enabled" = true
"training.profile" = "{model}"
"training.workers" = 4
[axes]
"training.ratio" = [2]
seed = [1]
[arms]
reference = "same"
same = {{ "training.priority" = "same" }}
low = {{ "training.priority" = "low" }}
[search]
field = "background.load"
lo = 0.05
hi = 0.6
tolerance = 0.3
thresholds = [0.01]
max_seeds = 2
max_undecided = 0      # the windows are the fake oracles' (above); here 2-3 probes
"""


@pytest.mark.slow
def test_a_real_search_writes_its_table_and_figure_and_resumes_alike(tmp_path):
    """2-3 probes of a small job: boundary.parquet, probes.parquet and
    boundary.png are written; the bracket is the one its decided probes
    imply; --resume replays the same decisions without running a cell."""
    from click.testing import CliRunner

    from harness import cli
    from harness.traffic import profiles

    profiles.save_profile(profiles.resnet50_like(10, 1_000_000, 5.0), tmp_path / "m1.csv")
    grid = tmp_path / "b.toml"
    grid.write_text(REAL_SEARCH.format(model=tmp_path / "m1.csv"))
    out = tmp_path / "out"
    argv = ["boundary", str(grid), "-o", str(out), "-j", "2", "--no-progress"]
    first = CliRunner().invoke(cli.main, argv)
    assert first.exit_code == 0, first.output
    assert (out / "boundary.png").stat().st_size > 10_000
    table = pd.read_parquet(out / "boundary.parquet")
    probes = pd.read_parquet(out / "probes.parquet")
    assert len(table) == 1 and 2 <= table["probes"].iloc[0] == len(probes) <= 3
    row = table.iloc[0]
    assert row["status"] in (boundary.BRACKETED, boundary.UNDECIDED_BETWEEN, boundary.BELOW_RANGE,
                             boundary.ABOVE_RANGE) and row["cpu_s"] > 0
    below = probes.loc[probes["side"] == BELOW, "background.load"]
    above = probes.loc[probes["side"] == ABOVE, "background.load"]
    implied_low = below.max() if len(below) else math.nan
    implied_high = above.min() if len(above) else math.nan
    assert row["low"] == implied_low or (math.isnan(row["low"]) and math.isnan(implied_low))
    assert row["high"] == implied_high or (math.isnan(row["high"]) and math.isnan(implied_high))
    if row["status"] == boundary.BRACKETED:
        assert row["low"] <= row["crossing"] <= row["high"]
    assert (below < implied_high).all() if len(below) and len(above) else True
    again = CliRunner().invoke(cli.main, [*argv, "--resume"])
    assert again.exit_code == 0, again.output
    assert "0 run now" in again.output
    pd.testing.assert_frame_equal(pd.read_parquet(out / "boundary.parquet"), table)
    pd.testing.assert_frame_equal(pd.read_parquet(out / "probes.parquet"), probes)


def test_the_figure_over_a_real_maps_cells(local_sweep, tmp_path):
    """--map: a sweep directory with the searched field as an axis is read
    (its training verdicts of the compared arm), one without is refused."""
    from harness.config.scenario import ConfigError
    from harness.outputs.plots.boundary_figure import check_map, draw_boundary_curves, map_cells
    from harness.outputs.plots.style import save_figure

    out = local_sweep.out
    check_map(out, ["training.ratio"], "background.load", "low")
    cells = map_cells(out, ["training.ratio"], "background.load", "low")
    assert len(cells) == 4 and set(cells["background.load"]) == {0.05, 0.1}
    with pytest.raises(ConfigError, match="--map: .* has no axis background.rate"):
        check_map(out, ["training.ratio"], "background.rate", "low")
    with pytest.raises(ConfigError, match="--map: .* has no arm 'high'"):
        check_map(out, ["training.ratio"], "background.load", "high")
    table = pd.DataFrame([{"training.ratio": r, "threshold": 0.01, "status": "bracketed",
                           "crossing": 0.07, "low": 0.05, "high": 0.1} for r in (1, 2)])
    fig = draw_boundary_curves(table, ["training.ratio"], "background.load", 0.05, 0.1, "t",
                               cells)
    assert save_figure(fig, tmp_path, "boundary", ("png",))[0].stat().st_size > 10_000


def test_a_window_edge_on_another_probe_is_that_probe():
    """A value reached two ways is one probe, as its cells take it
    (boundary.canonical): a sample of boundary-quick's R = 8 at 1 %, 23
    below, 65.05 and 54.7 undecided, 109.4 above: the next window's upper
    side, 54.7 / 2^(1/4) x 2, is the map's 92. Computed from probe values
    rounded to 9 digits, it came out 92.0000004, a probe with cells of its
    own (undecided with 3 seeds where 92's were above). And a window's edge
    on the bisection point the 30 % search probes after 65.05: 65.05 and
    92 undecided, the window's upper side 65.05 / 2^(1/4) x 2 is
    sqrt(65.05 x 184)."""
    span = Range(23, 184, 2, log=True)
    first = span.middle(23, 184)
    upper = span.step(first, 0.75)
    history = [Observation(23, BELOW, 0.003), Observation(first, UNDECIDED, 0.013)]
    assert next_probe(span, 0.01, history) == upper
    history.append(Observation(upper, ABOVE, 0.104))
    lower = next_probe(span, 0.01, history)
    history.append(Observation(lower, UNDECIDED, 0.009))
    assert canonical(next_probe(span, 0.01, history)) == 92.0
    # rounded, and rounded again, 92 was not 92
    assert canonical(canonical(canonical(first) / 2 ** 0.25) * 2) != 92.0
    history = [Observation(23, BELOW, 0.002, -0.001, 0.005, 1),
               Observation(first, UNDECIDED, 0.008, 0.002, 0.015, 3),
               Observation(92, UNDECIDED, 0.016, 0.008, 0.024, 3)]
    window = next_probe(span, 0.01, history)
    assert canonical(window) == canonical(span.middle(first, 184))


def test_a_window_is_set_high_around_the_band():
    """One undecided probe v with no decided end near: the window [v / tol^(1/4),
    v x tol^(3/4)] (linear: v - tol / 4, v + 3 tol / 4), its upper side
    first. boundary-quick at R = 16 and 1 %: 23 below, sqrt(23 x 184) =
    65.05 undecided, then 65.05 x 2^(3/4) = sqrt(65.05 x 184) = 109.4, the
    probe the 30 % search of the same R makes after 65.05 (so both share its
    cells), then, were 109.4 undecided too, the next window's lower side."""
    span = Range(23, 184, 2, log=True)
    first = span.middle(23, 184)
    history = [Observation(23, BELOW, 0.002, -0.001, 0.005, 1),
               Observation(first, UNDECIDED, 0.008, 0.002, 0.015, 3)]
    upper = next_probe(span, 0.01, history)
    assert canonical(upper) == canonical(span.middle(first, 184))
    assert upper == pytest.approx(first * 2 ** 0.75)
    # decided above: the window's lower side, a quarter of the tolerance below
    # the band, closes the bracket within the factor with it
    lower = next_probe(span, 0.01, [*history, Observation(upper, ABOVE, 0.05, 0.02, 0.08, 2)])
    assert lower == pytest.approx(first / 2 ** 0.25) and upper / lower <= 2 * (1 + boundary._SLACK)
    # linear: 80 undecided over [0, 160] with tolerance 10 -> 87.5, then 77.5
    span = Range(0, 160, 10)
    history = [Observation(0, BELOW, 0.0), Observation(80, UNDECIDED, 0.3)]
    assert next_probe(span, 0.3, history) == 87.5
    assert next_probe(span, 0.3, [*history, Observation(87.5, ABOVE, 0.4)]) == 77.5


def test_the_last_halving_probes_away_from_the_expected_crossing():
    """One probe left to bring [65, 184] within a factor 2: any of [92, 130]
    does; the one away from where 23 and 65 put the crossing is probed, the
    middle only when they give no guess (not rising)."""
    span = Range(23, 184, 2, log=True)
    mid = span.middle(23, 184)

    def after(change_lo: float, change_mid: float, threshold: float) -> float:
        return next_probe(span, threshold, [Observation(23, BELOW, change_lo),
                                            Observation(mid, BELOW, change_mid)])

    assert after(0.004, 0.011, 0.30) == 92              # crossing far above: the lowest
    assert after(0.0, 0.28, 0.30) == pytest.approx(2 * mid)   # just above 65: the highest
    assert after(0.02, 0.01, 0.30) == span.middle(mid, 184)    # not rising: the middle
    # with the high end probed (above), the guess is interpolated between the ends
    history = [Observation(23, BELOW, 0.0), Observation(184, ABOVE, 0.5)]
    assert next_probe(Range(23, 184, 2, log=True), 0.01, history) == mid    # two halvings left
    # a linear field: [50, 75] with tolerance 15: any of [60, 65]
    linear_span = Range(0, 100, 15)
    history = [Observation(0, BELOW, 0.0), Observation(50, BELOW, 0.1), Observation(75, ABOVE, 0.5)]
    assert next_probe(linear_span, 0.45, history) == 60      # interpolated near 72: the lowest
    assert next_probe(linear_span, 0.15, history) == 65      # near 53: the highest
