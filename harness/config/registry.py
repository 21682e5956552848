"""The plug-ins' registry: the training architectures, the
communication-scheduling policies and the service kinds, as the
configuration reads them (a job's or a [[service]] table's settings model
and its checks, the names a file may use, the key reference) without
importing a plug-in.

The plug-ins register themselves when their package is imported
(harness.training: each architecture module's ARCHITECTURE;
harness.traffic.schedulers: its POLICIES; harness.traffic.services: each
kind module's KIND). The configuration names them only here, as PLUG_INS:
the first read of the registry imports those packages, so a scenario reads
the same whichever module a program imported first.

Why by name (importlib) and not an import: config is the bottom layer
(pyproject.toml's import contracts), and the plug-ins are above it, built on
its schema; an import would be the upward edge the contracts forbid. The
import linter does not see these imports, so tests/test_plugin_boundary.py
holds the other direction: a new plug-in is found here without any file of
config naming it.
"""

from __future__ import annotations

import importlib
from typing import Any

from harness.config.errors import ConfigError

#: The packages whose import registers the plug-ins (policies first: the
#: architectures say which policies they take).
PLUG_INS = ("harness.traffic.schedulers", "harness.training", "harness.traffic.services")

#: A job without `architecture` (and the registry's first entry).
DEFAULT_ARCHITECTURE = "ring"

# name -> plug-in: harness.training.common.Architecture, harness.traffic.schedulers.Policy
_architectures: dict[str, Any] = {}
_policies: dict[str, Any] = {}
# kind -> plug-in: harness.traffic.services.kind.ServiceKind
_service_kinds: dict[str, Any] = {}
_loaded = False


def add_architecture(plug_in: Any) -> None:
    """Register a training architecture (its `name`, `settings` model, `check`,
    `supports`); the registry keeps the default first, then the rest by name
    (the order of messages, docs and warm-ups)."""
    found = {**_architectures, plug_in.name: plug_in}
    _architectures.clear()
    _architectures.update(sorted(found.items(),
                                 key=lambda item: (item[0] != DEFAULT_ARCHITECTURE, item[0])))


def add_policy(policy: Any) -> None:
    """Register a communication-scheduling policy (in its table's order)."""
    _policies[policy.name] = policy


def add_service_kind(kind: Any) -> None:
    """Register a service kind (its `name`, `settings` model, `order`); the
    registry keeps them by `order` (the order of messages and docs)."""
    found = {**_service_kinds, kind.name: kind}
    _service_kinds.clear()
    _service_kinds.update(sorted(found.items(), key=lambda item: (item[1].order, item[0])))


def _load() -> None:
    global _loaded
    if _loaded:
        return
    for package in PLUG_INS:
        importlib.import_module(package)
    if not _architectures:  # read while harness.training itself was being imported
        raise RuntimeError("no training architecture is registered yet: the configuration "
                           "was read while harness.training was being imported")
    _loaded = True


def architectures() -> dict[str, Any]:
    """Scenario name (training.architecture) -> its plug-in."""
    _load()
    return _architectures


def policies() -> dict[str, Any]:
    """Policy name (training.policy) -> its entry of the policies' table."""
    _load()
    return _policies


def architecture(name: str, where: str = "training.architecture") -> Any:
    if name not in architectures():
        raise ConfigError(where, f"unknown architecture {name!r}; allowed: "
                          f"{', '.join(_architectures)}")
    return _architectures[name]


def architectures_taking(policy: Any) -> list[str]:
    """The architectures whose jobs take `policy`."""
    return [name for name, a in architectures().items() if a.supports(policy)]


def service_kinds() -> dict[str, Any]:
    """A [[service]] table's `kind` -> its plug-in, in the kinds' order."""
    _load()
    return _service_kinds


def service_kind(name: str, where: str = "service.kind") -> Any:
    if name not in service_kinds():
        raise ConfigError(where, f"unknown kind {name!r}; allowed: {', '.join(_service_kinds)}")
    return _service_kinds[name]
