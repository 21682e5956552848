"""The reference suite (issue 50): the analytic formulas against values
computed by hand, the intervals' verdicts, and the cheap checks run on the
real simulator within their tolerances (the rest: python -m bench --only
references)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from harness.analysis import references as ref


# ---------------------------------------------------------------- formulas, by hand

def test_dynamic_thresholds_by_hand():
    # alpha 1, 4 queues, 100 packets: 100 / 5 = 20 each, 20 free
    assert ref.dynamic_threshold_queue(1.0, 4, 100) == pytest.approx(20.0)
    assert ref.dynamic_threshold_free(1.0, 4, 100) == pytest.approx(20.0)
    # alpha 2, one queue: 2/3 of the pool
    assert ref.dynamic_threshold_queue(2.0, 1, 90) == pytest.approx(60.0)
    # the queues and the free pool add up to the pool
    assert 3 * ref.dynamic_threshold_queue(0.5, 3, 50) + ref.dynamic_threshold_free(
        0.5, 3, 50) == pytest.approx(50)


def test_cobham_by_hand():
    # one class, M/D/1: rho = 0.5, W = lambda S^2 / 2 / (1 - rho) = 0.25 s for S = 0.5 s
    assert ref.cobham_waits([1.0], [0.5], [0.25]) == pytest.approx([0.25])
    # two classes of load 0.2 and 0.3, S = 1: W0 = (0.2 + 0.3) / 2 = 0.25;
    # W1 = 0.25 / 0.8 = 0.3125, W2 = 0.25 / (0.8 x 0.5) = 0.625
    assert ref.cobham_waits([0.2, 0.3], [1, 1], [1, 1]) == pytest.approx([0.3125, 0.625])
    with pytest.raises(ValueError):
        ref.cobham_waits([0.6, 0.5], [1, 1], [1, 1])


def test_priority_queue_by_hand():
    # a low packet on the wire (0-1 s), another low at 0.1 s, a high at 0.2 s
    arrivals, classes, service = np.array([0.0, 0.1, 0.2]), np.array([1, 1, 0]), np.ones(3)
    # Cobham's queue chooses when the wire frees: the high packet overtakes
    assert ref.priority_queue_waits(arrivals, classes, service, committed=0) == \
        pytest.approx([0.0, 1.9, 0.8])
    # one packet committed ahead of the wire: the second low packet left the
    # priority queue at 0.1 s, before the high one arrived, and keeps its place
    assert ref.priority_queue_waits(arrivals, classes, service, committed=1) == \
        pytest.approx([0.0, 0.9, 1.8])


def test_priority_queue_without_a_committed_packet_is_cobhams():
    rng = np.random.default_rng(7)
    service = np.array([1.0, 2.0, 3.0])
    rates = 0.6 / 3 / service
    horizon = 200_000.0
    arrivals = [np.sort(rng.uniform(0, horizon, rng.poisson(r * horizon))) for r in rates]
    t = np.concatenate(arrivals)
    k = np.concatenate([np.full(len(a), c) for c, a in enumerate(arrivals)])
    order = np.argsort(t, kind="stable")
    t, k = t[order], k[order]
    waits = ref.priority_queue_waits(t, k, service[k], committed=0)
    expected = ref.cobham_waits(list(rates), list(service), list(service ** 2))
    for c in range(3):
        assert waits[k == c].mean() == pytest.approx(expected[c], rel=0.05)
    # one packet committed: the highest class waits longer, the lowest less
    late = ref.priority_queue_waits(t, k, service[k], committed=1)
    assert late[k == 0].mean() > 1.2 * expected[0] and late[k == 2].mean() < expected[2]


def test_ecmp_birthday_by_hand():
    assert ref.ecmp_all_distinct(11, 20) == pytest.approx(0.0327, abs=5e-5)   # the 3.27 %
    assert ref.ecmp_all_distinct(2, 2) == pytest.approx(0.5)
    assert ref.ecmp_all_distinct(3, 2) == 0.0
    # 2 balls in 2 bins: the busiest holds 1 (p 1/2) or 2 (p 1/2)
    assert ref.busiest_bin_cdf(2, 2) == pytest.approx([0.0, 0.5, 1.0])
    # 3 balls, 3 bins: all apart 6/27, one bin all three 3/27
    assert ref.busiest_bin_cdf(3, 3) == pytest.approx([0, 6 / 27, 24 / 27, 1])
    # P(busiest <= 1) is the all-distinct probability
    assert ref.busiest_bin_cdf(11, 20)[1] == pytest.approx(ref.ecmp_all_distinct(11, 20))


def test_dctcp_mathis_ps_by_hand():
    # N = 2, C RTT = 100, K = 20: A = 0.5 sqrt(2 x 2 x 120) = 10.95, T_C = 0.5 sqrt(120) = 5.48
    q = ref.dctcp_queue(2, 100, 20)
    assert q["max_packets"] == 22
    assert q["amplitude_packets"] == pytest.approx(0.5 * math.sqrt(480))
    assert q["period_rtts"] == pytest.approx(0.5 * math.sqrt(120))
    # 1448 B per 10 ms at p = 1 %: 1.1584 Mbit/s x 1.2247 / 0.1 = 14.19 Mbit/s
    assert ref.mathis_throughput(1448, 0.01, 0.01) == pytest.approx(14.187e6, rel=1e-3)
    # delayed ACKs (b = 2): sqrt(3/4) / sqrt(3/2) = 0.7071 of that
    assert ref.mathis_throughput(1448, 0.01, 0.01, 2) == pytest.approx(10.032e6, rel=1e-3)
    assert ref.ps_slowdown(0.8) == pytest.approx(5.0)
    with pytest.raises(ValueError):
        ref.ps_slowdown(1.0)


def test_dctcp_by_hand():
    # the paper's example at 10 Gbit/s, 100 us, 1500 B: C RTT = 83.3 packets
    assert ref.bdp_packets(10e9, 100e-6, 1500) == pytest.approx(83.333, rel=1e-4)
    # N = 10, C RTT = 80, K = 40: W = 120; A = 0.5 sqrt(2400) = 24.49,
    # T_C = 0.5 sqrt(24) = 2.449 round trips, Q_max = 50, guideline 80 / 7
    q = ref.dctcp_queue(10, 80, 40)
    assert q["max_packets"] == 50
    assert q["amplitude_packets"] == pytest.approx(24.495, abs=1e-3)
    assert q["period_rtts"] == pytest.approx(2.4495, abs=1e-4)
    assert q["k_guideline_packets"] == pytest.approx(11.4286, abs=1e-4)
    # N = 40: A = 0.5 sqrt(9600) = 48.99, T_C = 0.5 sqrt(6) = 1.2247
    q = ref.dctcp_queue(40, 80, 40)
    assert (q["max_packets"], q["amplitude_packets"], q["period_rtts"]) == pytest.approx(
        (80, 48.990, 1.2247), abs=1e-3)


def _sawtooth(period_s=5e-3, peak=42.0, trough=31.0, fall_s=1e-3, cycles=60, step_s=10e-6,
              noise=1.0, seed=1):
    """A queue's sawtooth sampled every `step_s`: a linear rise from `trough`
    to `peak`, a linear fall back in `fall_s`, whole packets, +-`noise`."""
    t = np.arange(0, cycles * period_s, step_s)
    phase = t % period_s
    rise_s = period_s - fall_s
    q = np.where(phase < rise_s, trough + (peak - trough) * phase / rise_s,
                 peak - (peak - trough) * (phase - rise_s) / fall_s)
    rng = np.random.default_rng(seed)
    return t, np.round(q + rng.uniform(-noise, noise, len(t)))


def test_the_sawtooth_estimators_find_a_known_sawtooth():
    t, q = _sawtooth()
    c = ref.sawtooth_cycles(t, q)
    assert len(c) == 59                                  # 60 cycles: 59 between 60 rises
    # each one within the time the noise moves a crossing (1 packet of an 11-packet rise)
    assert c.period_s == pytest.approx(5e-3, abs=4e-4)
    period = ref.cycle_estimate(c.period_s)
    assert period.low <= 5e-3 <= period.high and period.samples == 59
    peak = ref.cycle_estimate(c.peak)                    # the noise adds up to a packet
    assert 42 <= peak.value <= 43 and peak.high - peak.low < 0.5
    amplitude = ref.cycle_estimate(c.amplitude)          # 11, and up to 2 packets of noise
    assert 11 <= amplitude.value <= 13
    assert ref.cycle_estimate(c.trough).value == pytest.approx(30.5, abs=0.6)
    # the rise alone, trough to the next peak: 4 ms of the 5 (the noise moves either end)
    assert len(c.rise_s) == 58 and c.rise_s.mean() == pytest.approx(4e-3, abs=2e-4)


def test_the_sawtooth_estimators_ignore_jitter_and_need_samples():
    # a flat queue with packet-by-packet jitter has no cycles
    rng = np.random.default_rng(2)
    assert len(ref.sawtooth_cycles(np.arange(5000) * 1e-5, 40 + rng.integers(-1, 2, 5000))) == 0
    # a fast, large sawtooth (N = 40's: 49 packets every 1.2 ms) is found too
    t, q = _sawtooth(period_s=1.2e-3, peak=80, trough=31, fall_s=0.3e-3, cycles=100)
    c = ref.sawtooth_cycles(t, q)
    assert len(c) == 99 and ref.cycle_estimate(c.period_s).value == pytest.approx(1.2e-3, rel=0.01)
    assert ref.cycle_estimate(c.amplitude).value == pytest.approx(49, abs=2)
    # no sawtooth: the largest and smallest sample of each whole block
    top, bottom = ref.block_extremes(np.arange(1000) * 1e-5, np.arange(1000) % 100, 3e-3)
    assert list(top) == [99, 99, 99] and list(bottom) == [0, 0, 0]
    # few cycles: a t interval
    few = ref.cycle_estimate(np.array([1.0, 2.0, 3.0]))
    assert few.value == 2.0 and few.low < 2.0 < few.high
    with pytest.raises(ValueError):
        ref.sawtooth_cycles(np.array([0.0, 1.0]), np.array([1.0, 2.0]))


def test_intervals_and_verdicts():
    e = ref.Estimate(1.0, 0.98, 1.02, 100)
    assert e.within(1.01, 0.03) is True          # contains it
    assert e.within(1.2, 0.03) is False          # wholly outside the band
    assert ref.Estimate(1.05, 1.02, 1.08, 9).within(1.0, 0.03) is None   # straddles its edge
    p = ref.proportion(33, 1000)
    assert p.low < 0.033 < p.high and p.high - p.low < 0.03
    rng = np.random.default_rng(1)
    b = ref.batch_means(rng.normal(5.0, 1.0, 10_000))
    assert b.low < 5.0 < b.high
    t = ref.t_interval(np.array([1.0, 2.0, 3.0]))
    assert t.value == 2.0 and t.low < 2.0 < t.high


# ---------------------------------------------------------------- cheap checks, real ns-3

# The departures docs/findings/references.md explains: (check, quantity) ->
# the sign of measured - expected its explanation predicts. A row named here
# must depart that way; every other row must hold its tolerance (a row
# reported beside, without a tolerance, is not judged).
EXPLAINED = {
    # the one-packet device queue decides priority a packet early
    ("strict-priority", "class high: mean wait (s)"): +1,
    # each cut drains the queue below the fluid model's trough (Q_max holds):
    # the sawtooth is deeper, and its rise, at N packets a round trip, longer;
    # the period also holds the round trips of the fall, which T_C leaves out
    ("dctcp", "amplitude (packets)"): +1,
    ("dctcp", "period (round trips)"): +1,
}


@pytest.mark.parametrize("check", ["dynamic-thresholds", "ecmp", "strict-priority", "dctcp",
                                   "pfc-headroom", "dcqcn", "dcqcn-victim"])
def test_cheap_check_within_its_tolerance_or_explained(check):
    from harness.usecases import references

    rows = references.run_check(check, cheap=True)
    assert rows
    for row in rows:
        assert row["command"].startswith("python -m bench --only references")
        lo, hi = row["interval"]
        assert lo <= row["measured"] <= hi
        sign = EXPLAINED.get((check, row["quantity"]))
        if row["tolerance"] is None:
            assert row["within"] is None, row
        elif sign is None:
            assert row["within"] is True, row
        else:
            assert (row["measured"] - row["expected"]) * sign > 0, row
            assert row["within"] is not True, row   # still departing: revisit the page


def test_the_page_renders_kept_rows(tmp_path, monkeypatch):
    from harness.findings import kept_references as kept
    from harness.findings import reference_page as reference_pages

    monkeypatch.setattr(kept, "KEPT_DIR", tmp_path)
    monkeypatch.setattr(kept, "TABLE", tmp_path / "references.csv")
    monkeypatch.setattr(kept, "PROVENANCE", tmp_path / "provenance.json")
    assert "Not kept yet" in reference_pages.references_table()
    row = {"check": "c", "reference": "R", "source": "S", "point": "n = 1", "quantity": "q",
           "expected": 2.0, "measured": 2.2, "interval": [2.1, 2.3], "tolerance": 0.05,
           "tolerance_unit": "relative", "within": False, "note": "", "command": "cmd",
           "check_cpu_s": 3.0}
    kept.keep([row], 3.0, cheap=True, digests={"c": "x"})
    text = reference_pages.references_table()
    assert "| c | n = 1 | q | 2 | 2.2 [2.1, 2.3] | +10.0 % | 5 % | **no** |" in text
    kept.keep([{**row, "check": "r", "tolerance": None, "within": None}], 1.0, cheap=False,
              digests={"r": "x"})
    assert "| r | n = 1 | q | 2 | 2.2 [2.1, 2.3] | +10.0 % | reported | - |" in \
        reference_pages.references_table()
    assert "`cmd`" in text and "3 s of CPU" in text
    kept.keep([{**row, "check": "d", "within": True}], 1.0, cheap=False,   # c kept beside d
              digests={"d": "x"})
    table, provenance = kept.read()
    assert list(table["check"]) == ["c", "r", "d"]
    assert set(provenance["checks"]) == {"c", "r", "d"}
    assert list(table["within"]) == [False, None, True]


def test_findings_check_sees_a_kept_reference_check_go_stale(tmp_path, monkeypatch):
    """Each kept check carries the digest of its references.toml entry and
    scenario; one changed (here: a check's tolerance) is named stale, one
    missing is named not kept."""
    from harness.usecases import findings as service
    from harness.findings import kept_references as kept
    from harness.usecases import references

    monkeypatch.setattr(kept, "KEPT_DIR", tmp_path)
    monkeypatch.setattr(kept, "TABLE", tmp_path / "references.csv")
    monkeypatch.setattr(kept, "PROVENANCE", tmp_path / "provenance.json")
    assert service.check_references().status == "not kept"
    known = references.checks()
    rows = [{"check": name, "reference": "R", "source": "S", "point": "", "quantity": "q",
             "expected": 1.0, "measured": 1.0, "interval": [1.0, 1.0], "tolerance": 0.1,
             "tolerance_unit": "relative", "within": True, "note": "", "command": "cmd"}
            for name in known]
    kept.keep(rows, 1.0, cheap=False,
              digests={n: references.check_digest(c) for n, c in known.items()})
    checked = service.check_references()
    assert (checked.status, checked.reasons) == ("current", [])
    first = next(iter(known))
    changed = {**known, first: dataclasses.replace(known[first],
                                                   tolerance=known[first].tolerance * 2)}
    monkeypatch.setattr(references, "checks", lambda: changed)
    checked = service.check_references()
    assert checked.status == "stale" and len(checked.reasons) == 1
    assert checked.reasons[0].startswith(f"{first}: its entry of references.toml")
    monkeypatch.setattr(references, "checks", lambda: {**known, "new-one": known[first]})
    assert any(r.startswith("new-one: not kept") for r in service.check_references().reasons)
