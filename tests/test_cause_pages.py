"""The findings pages' causes (``finding-causes SWEEP``, issue 62
deliverable 4 in part): each decided verdict of a kept sweep with its
parts, the dominant one named only where its interval decides it; a sweep
kept before the causes says so."""

from __future__ import annotations

import math

import pandas as pd

from harness.findings import cause_pages


def _row(**parts):
    row = {"training.ratio": 2.0, "arm": "low", "change": 0.0, "rto_share": math.nan,
           "rto_share_low": math.nan, "rto_share_high": math.nan}
    for part in cause_pages.ITERATION_PART_WORDS:
        change, low, high = parts.get(part, (0.0, -1e-9, 1e-9))
        row.update({f"{part}_change": change, f"{part}_low": low, f"{part}_high": high})
        row["change"] += change
    return row


def test_the_dominant_part_is_the_largest_decided_one():
    assert cause_pages.dominant_part(_row(rto=(0.5, 0.2, 0.8), rest=(0.1, 0.05, 0.15))) \
        == "TCP back-off"
    # a larger part whose interval holds 0 does not dominate
    assert cause_pages.dominant_part(_row(rto=(0.6, -0.1, 1.3), rest=(0.1, 0.05, 0.15))) \
        == "the rest of the wait"
    # nor does rounding's decided 0 of computing
    assert cause_pages.dominant_part(_row(compute=(1e-12, 5e-13, 2e-12))) == "none decided"


def test_every_verdict_but_a_decided_green_is_explained():
    rows = pd.DataFrame([_row(rto=(0.5, 0.2, 0.8)),
                         {**_row(rest=(0.005, 0.001, 0.009)), "training.ratio": 4.0}])
    means = pd.DataFrame({"training.ratio": [2.0, 4.0], "arm": "low",
                          "metric": "iteration_time", "verdict": ["red", "green"],
                          "decided": True})
    table = cause_pages._training_table(rows, means, ["training.ratio"])
    body = [line for line in table.splitlines() if line.startswith("| R 2")]
    assert len(body) == 1 and "| red |" in body[0] and "TCP back-off |" in body[0]
    assert "+50.0 % [+20.0, +80.0]" in body[0]
    green = cause_pages._training_table(rows.iloc[1:], means, ["training.ratio"])
    assert green.startswith("Every training verdict is a decided green")
    undecided = means.assign(verdict=["yellow/red", "green"], decided=[False, True])
    assert "| yellow/red |" in cause_pages._training_table(rows, undecided, ["training.ratio"])


def test_a_sweep_kept_before_the_causes_says_so(monkeypatch, tmp_path):
    from harness.analysis.tables import Sweep

    kept = Sweep(dir=tmp_path, grid={"axes": []}, summary=pd.DataFrame(), deltas=None,
                 deltas_mean=None)
    monkeypatch.setattr(cause_pages.registry, "load_kept", lambda key: (None, kept))
    assert cause_pages.finding_causes("old").startswith("*Not attributed yet")


def test_a_labelled_point_is_named_and_found_by_the_fields_it_sets():
    """[[points]] grids leave fields unset (NaN or None in the tables):
    explain names a point by what it sets and finds its rows by it."""
    from harness.usecases import explaining

    table = pd.DataFrame({"label": ["a", "b"], "training.ratio": [2.0, math.nan],
                          "pull_barrier": [None, True], "arm": "x"})
    point = table.iloc[1].to_dict()
    axes = ["label", "training.ratio", "pull_barrier"]
    assert explaining._point_words(point, axes) == "label = b, pull_barrier = True"
    assert list(explaining._at(table, point, axes)["label"]) == ["b"]
    assert cause_pages._point(point, axes) == "b"
