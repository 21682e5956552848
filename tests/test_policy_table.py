"""The policy table (harness/traffic/schedulers.py) and the C++ schedulers agree
(this found AutoByteScheduler's Candidates default to be one pair, not the
table's four).

The harness passes every parameter of a policy to its CommScheduler
explicitly (schedulers.attributes), so the values a run uses come from the
Python table alone; the C++ attribute defaults and Validate() serve
direct C++ users. This keeps the two in step: every parameter names a real
attribute of its TypeId, with the same default."""

from __future__ import annotations

import pytest

from harness.traffic import schedulers


def _text(param: schedulers.Param) -> str | None:
    """The Python default as ns-3 serialises the attribute's value."""
    value = param.default
    if value is None:
        return None
    if param.kind == "bool":
        return "true" if value else "false"
    if param.kind == "candidates":
        return ",".join(f"{p}:{c}" for p, c in value)
    if param.kind in ("float", "fraction", "rate"):
        return None   # a double's text form is ns-3's (%g-like): compared as numbers below
    return str(value)


@pytest.fixture(scope="module")
def ns():
    from harness.engine import ns3
    return ns3.load(quiet=True)


def _attribute(ns, type_id: str, name: str) -> str:
    tid = ns.TypeId.LookupByName(type_id)
    info = ns.TypeId.AttributeInformation()
    assert tid.LookupAttributeByName(name, info), f"{type_id} has no attribute {name}"
    return str(info.initialValue.SerializeToString(info.checker))


@pytest.mark.parametrize("name", list(schedulers.POLICIES))
def test_every_policy_parameter_is_an_attribute_with_the_same_default(ns, name):
    policy = schedulers.POLICIES[name]
    for side in ("push", "pull"):
        type_id = policy.push if side == "push" else policy.pull
        assert ns.TypeId.LookupByName(type_id).IsChildOf(ns.TypeId.LookupByName(
            "ns3::CommScheduler")), type_id
        for key, param in policy.params.items():
            if side not in param.sides:
                continue
            cpp = _attribute(ns, type_id, param.attribute)
            expected = _text(param)
            if expected is not None:
                assert cpp == expected, (name, key, cpp, expected)
            elif param.default is not None:
                assert float(cpp) == pytest.approx(float(param.default)), (name, key, cpp)
