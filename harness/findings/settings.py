"""A kept cell's settings: the resolved scenario's digest data, flat (dotted
keys -> the JSON text of each value), kept once for what every cell shares
and per cell for the rest (settings.json), and compared with today's to name
what changed."""

from __future__ import annotations

import json
from typing import Any


def flat(data: Any, prefix: str = "") -> dict[str, Any]:
    """Nested digest data as dotted keys -> JSON text of each leaf value."""
    if isinstance(data, dict) and data:
        out: dict[str, Any] = {}
        for k, v in data.items():
            out.update(flat(v, f"{prefix}{k}."))
        return out
    return {prefix[:-1]: json.dumps(data, sort_keys=True, default=str)}


def settings_record(cells: dict[str, dict]) -> dict:
    """{cell id: flat settings} as the part every cell shares once and each
    cell's own."""
    flats = list(cells.values())
    common = {k: v for k, v in flats[0].items()
              if all(f.get(k, None) == v for f in flats[1:])} if flats else {}
    return {"common": dict(sorted(common.items())),
            "cells": {cid: {k: v for k, v in sorted(f.items()) if k not in common}
                      for cid, f in sorted(cells.items())}}


def kept_settings(record: dict, cell_id: str) -> dict[str, Any]:
    return {**record["common"], **record["cells"].get(cell_id, {})}


def changed_settings(before: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """The settings that differ, as `key: old -> new`."""
    keys = sorted(set(before) | set(now))
    return [f"{k}: {before.get(k, '(absent)')} -> {now.get(k, '(absent)')}"
            for k in keys if before.get(k) != now.get(k)]
