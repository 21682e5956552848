"""Shared helpers: small real-ns-3 runs planned from the built-in scenario."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest

from harness.config import load_scenario
from harness.run import Plan, execute, plan

# The default scenario is 4 hosts at 1 Gbit/s: ns-3 tests stay in seconds.
SMALL: list[str] = []


def small_plan(*overrides: str) -> Plan:
    return plan(load_scenario(None, [*SMALL, *overrides]))


def with_flows(p: Plan, rows: list[dict]) -> Plan:
    """The plan with an explicit flow schedule (id, start_ns, src, dst, size[, tos])."""
    flows = pd.DataFrame(rows)
    flows.insert(0, "id", range(len(flows)))
    hosts = tuple(sorted(set(flows["src"]) | set(flows["dst"])))
    return dataclasses.replace(p, flows=flows, background_hosts=hosts)


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", help="also run tests marked slow")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def run_plan():
    return lambda p: execute(p, progress=False, quiet=True)
