"""The queue sampler (ns3-modules/trackers/queue-sampler, run.queue_samples)
on the real simulator: a run that asks for it gets a queue_samples table,
one row per sample and band of the egresses it names, every `interval` from
`start` to `stop`, never above the band's largest backlog (the queue
tracker's); a run that does not ask has no sampler and no table."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from harness.config.scenario import apply_values, read_scenario_dict, scenario_from_dict
from harness.engine import planning, recipe, simulation
from harness.usecases.references import REFERENCES_DIR

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("cppyy") is None or importlib.util.find_spec("ns3") is None,
    reason="needs the ns3 wheel and cppyy",
)


def _plan(**values):
    data = read_scenario_dict(REFERENCES_DIR / "dctcp.toml")   # 2 DCTCP flows into host 2
    data = apply_values(data, [(["run", "duration"], 0.03), (["run", "warmup"], 0.01),
                               *((k.split("."), v) for k, v in values.items())])
    return planning.plan(scenario_from_dict(data))


def test_a_run_that_asks_gets_its_samples_and_one_that_does_not_none(tmp_path):
    p = _plan(**{"run.queue_samples": {"interval": "100us", "hosts": [2], "direction": "both",
                                       "start": 0.01, "stop": 0.02}})
    assert [line for line in recipe.text(p).splitlines() if "queue" in line][-3:] == [
        "queue-sampler 100000 10000000 20000000",
        "sample-queue 2 0 2 3 -", "sample-queue 2 1 3 2 -"]
    run = simulation.execute(p, quiet=True)
    s = run.queue_samples
    assert list(s.columns) == ["link", "from_node", "to_node", "band", "time_s",
                               "backlog_packets", "backlog_bytes", "traffic_class"]
    # both egresses of host 2's link, every band, 101 samples each: 10..20 ms
    assert set(zip(s["from_node"], s["to_node"])) == {(2, 3), (3, 2)}
    per_band = s.groupby(["from_node", "band"])["time_s"]
    assert (per_band.count() == 101).all() and per_band.ngroups == 6
    times = s[(s["from_node"] == 3) & (s["band"] == 0)]["time_s"].to_numpy()
    assert times[0] == pytest.approx(0.01) and times[-1] == pytest.approx(0.02)
    assert np.diff(times) == pytest.approx(np.full(100, 1e-4))
    # the bottleneck's band is busy; no sample above the largest backlog the tracker saw
    port = s[(s["from_node"] == 3) & (s["band"] == 0)]
    assert port["backlog_packets"].max() > 0
    assert (port["backlog_bytes"] >= port["backlog_packets"] * 1000).all()
    q = run.queues
    top = q[(q["from_node"] == 3) & (q["to_node"] == 2) & (q["band"] == 0)]
    assert port["backlog_packets"].max() <= int(top["max_backlog_packets"].iloc[0])
    # written with the run, and exported with every column described
    from harness.outputs import export

    run.save(tmp_path / "run")
    assert (tmp_path / "run" / "queue_samples.parquet").is_file()
    dictionary = export.dictionary(export.tables_of(tmp_path / "run", "run")[0])
    described = dictionary[dictionary["table"] == "queue_samples"]
    assert list(described["column"]) == list(s.columns)
    assert (described["meaning"] != "(not described)").all()

    data = read_scenario_dict(REFERENCES_DIR / "dctcp.toml")
    del data["run"]["queue_samples"]
    data["run"]["duration"], data["run"]["warmup"] = 0.005, 0.001
    p = planning.plan(scenario_from_dict(data))
    assert "queue-sampler" not in recipe.text(p) and p.queue_samples == ()
    assert simulation.execute(p, quiet=True).queue_samples is None
