"""The queues table of a real run adds up: each band's counts (ns-3's
QueueDisc counters and the band's own backlog statistics, read at the end of
the run) agree with each other and with the bytes the links sent (the
utilisation tracker's own trace sink, counted apart)."""

from __future__ import annotations

import pandas as pd
import pytest

from conftest import lossy_run

PPP_HEADER_BYTES = 2      # what a point-to-point frame adds to the queued IP packet
FRAME_BYTES = 1502        # one full frame: MTU 1500 + PPP


@pytest.fixture(scope="module")
def lossy(tmp_path_factory):
    out = tmp_path_factory.mktemp("lossy") / "run"
    lossy_run(out)
    return (pd.read_parquet(out / "queues.parquet"),
            pd.read_parquet(out / "utilization.parquet"))


def test_every_band_adds_up(lossy):
    queues, _ = lossy
    used = queues[queues["enqueued_packets"] > 0]
    assert len(used) >= 8 and queues["dropped_packets"].sum() > 0   # the run is lossy
    # what was queued left, or is still queued (at most the most ever queued)
    still = used["enqueued_packets"] - used["dequeued_packets"]
    assert (still >= 0).all() and (still <= used["max_backlog_packets"]).all()
    assert (used["dequeued_bytes"] <= used["enqueued_bytes"]).all()
    # a packet found at most max_backlog - 1 others queued; and some queued at all
    assert (used["max_backlog_packets"] >= 1).all()
    assert (used["mean_backlog_packets"] >= 0).all()
    assert (used["mean_backlog_packets"] <= used["max_backlog_packets"] - 1).all()
    # a band that dropped for want of room was busy: packets found others queued
    dropped = used[used["buffer_dropped_packets"] > 0]
    assert len(dropped) and (dropped["mean_backlog_packets"] > 0).all()
    assert (queues["buffer_dropped_packets"] <= queues["dropped_packets"]).all()
    idle = queues[queues["enqueued_packets"] == 0]
    assert (idle[["dequeued_packets", "max_backlog_packets", "mean_backlog_packets"]] == 0).all().all()


def test_what_the_bands_released_is_what_the_link_sent(lossy):
    """Dequeued bytes, plus a PPP header a packet, are the link's transmitted
    bytes, counted by a different trace (PhyTxBegin), to within the frames in
    flight at the window's end."""
    queues, utilization = lossy
    sent = utilization.groupby(["link", "from_node"])["bytes"].sum()
    released = queues.groupby(["link", "from_node"])[["dequeued_bytes", "dequeued_packets"]].sum()
    framed = released["dequeued_bytes"] + PPP_HEADER_BYTES * released["dequeued_packets"]
    gap = (framed - sent.reindex(framed.index)).abs()
    assert len(gap) >= 8 and (sent > 0).all()
    assert (gap <= 3 * FRAME_BYTES).all(), gap.to_dict()


def test_a_band_s_busy_time_is_its_own_sending_and_its_starvation(lossy, tmp_path):
    """backlogged_s (ns-3: how long a band held a packet) covers the time the
    link sent the band's own bytes, and the rest is starved_s: at most the
    run's length at any egress. With training sent low under strict priority,
    the low band's egresses are starved for most of their busy time, and
    the highest band waits only behind a lower band's packet already on the
    wire: hardly at all."""
    import harness

    queues, _ = lossy
    used = queues[queues["enqueued_packets"] > 0]
    assert (used["starved_s"] >= 0).all() and (used["starved_s"] <= used["backlogged_s"]).all()
    run = harness.run(None, {"run.duration": 0.5, "run.warmup": 0.05, "run.cooldown": 0.05,
                             "background.load": 0.6, "network.band_limit_packets": 20,
                             "training.enabled": True, "training.workers": 4,
                             "training.profile": "resnet50-like-2MB", "training.ratio": 2,
                             "training.priority": "low"}, out=tmp_path / "low")
    q = run.queues[run.queues["enqueued_packets"] > 0]
    assert (q.groupby(["link", "from_node"])["backlogged_s"].max()
            <= run.summary["simulated_s"] + 1e-9).all()
    low = q[q["traffic_class"] == "low"]
    assert low["starved_s"].sum() > 0.5 * low["backlogged_s"].sum() > 0
    top = q[q["band"] == 0]
    assert len(top) and top["starved_s"].sum() <= 0.01 * top["backlogged_s"].sum()
