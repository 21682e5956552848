"""Numbers with units, and the ranges ns-3 takes for them.

Every reader raises ConfigError naming the field: a number must be finite
(TOML reads `inf`, `nan` and `1e400` as floats) and inside what the simulator
stores it in (ns-3 keeps times as int64 nanoseconds, data rates as uint64
bit/s, socket buffers and windows as uint32 bytes), so nothing out of range
reaches ns-3, where it would abort the process.
"""

from __future__ import annotations

import math
import re
from typing import Any

from harness.config.errors import ConfigError, ConfigTypeError, shorten

UINT16_MAX = 2**16 - 1
UINT32_MAX = 2**32 - 1
INT64_MAX = 2**63 - 1
UINT64_MAX = 2**64 - 1
# ns-3 Time: int64 nanoseconds (about 292 years)
NS3_TIME_MAX_S = INT64_MAX / 1e9

# A decimal number: 10, 0.5, .5, 1e-3 (no "1.2.3", "0.3..", "nan", "inf").
_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"

RATE_UNITS = {"bps": 1, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9, "tbps": 1e12,
              "bit/s": 1, "kbit/s": 1e3, "mbit/s": 1e6, "gbit/s": 1e9}
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "min": 60.0, "h": 3600.0}
BYTE_UNITS = {"b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3,
              "kib": 1024, "mib": 1024**2, "gib": 1024**3}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def finite(value: Any, where: str, what: str = "a number") -> float:
    """A finite int or float as float; a string, bool, inf or nan is an error."""
    if not _is_number(value):
        raise ConfigTypeError(where, f"expected {what}, got {shorten(value)}")
    try:
        number = float(value)
    except OverflowError:  # an int too large for a float
        raise ConfigError(where, f"{shorten(value)} is out of range") from None
    if not math.isfinite(number):
        raise ConfigError(where, f"must be a finite number (got {shorten(value)})")
    return number


def _split(value: str, units: dict, where: str, example: str) -> float:
    """'10Gbps' -> 10 * units['gbps']; a malformed number or unknown unit is an error."""
    m = re.fullmatch(rf"\s*({_NUMBER})\s*([A-Za-z/]+)\s*", value)
    unit = units.get(m.group(2).lower()) if m else None
    if unit is None:
        raise ConfigError(where, f"cannot read {shorten(value)}; use e.g. {example} "
                                 f"(units: {', '.join(units)})")
    number = float(m.group(1)) * unit
    if not math.isfinite(number):
        raise ConfigError(where, f"must be a finite number (got {shorten(value)})")
    return number


def parse_rate(value: Any, where: str) -> float:
    """A data rate in bit/s, from 10e9 or "10Gbps" / "10Gbit/s". ns-3 keeps it
    as a whole number of bit/s in a uint64."""
    if isinstance(value, str):
        rate = _split(value, RATE_UNITS, where, '"10Gbps", "100Mbps" or a number in bit/s')
    else:
        rate = finite(value, where, "a data rate")
    if rate <= 0:
        raise ConfigError(where, f"must be > 0 (got {shorten(value)})")
    if rate < 1:
        raise ConfigError(where, "must be at least 1 bit/s, ns-3's resolution "
                                 f"(got {shorten(value)})")
    if rate > UINT64_MAX:
        raise ConfigError(where, f"must be at most {UINT64_MAX:.3g} bit/s, what ns-3 "
                                 f"stores (got {shorten(value)})")
    return rate


#: The slowest link rate a topology or a link change may give (as written;
#: `scale` slows the simulated links further): a 1500 B packet takes 12 ms.
#: Below it, a bare number is almost surely a rate given without its unit
#: (`link_rate = 10` is 10 bit/s, not 10 Gbit/s).
MIN_LINK_RATE_BPS = 1e6


def parse_link_rate(value: Any, where: str) -> float:
    """A link's rate in bit/s (parse_rate), at least MIN_LINK_RATE_BPS; a bare
    number below it is named as the bit/s it is, with the unit it likely lacks."""
    rate = parse_rate(value, where)
    if rate < MIN_LINK_RATE_BPS:
        allowed = f"a link rate is 1 Mbit/s to {UINT64_MAX:.3g} bit/s"
        if isinstance(value, str):
            raise ConfigError(where, f"{shorten(value)} is below 1 Mbit/s; {allowed}, e.g. "
                                     '"10Gbps" or "100Mbps"')
        raise ConfigError(where, f"{shorten(value)} is {value:g} bit/s (a number is bit/s), below "
                                 f"1 Mbit/s; give the unit, e.g. \"{value:g}Gbps\" or "
                                 f"\"{value:g}Mbps\" ({allowed})")
    return rate


def parse_time(value: Any, where: str, allow_zero: bool = False) -> float:
    """A duration in seconds, from 0.5 or "10us" / "2ms". ns-3 keeps it in int64
    nanoseconds."""
    if isinstance(value, str):
        seconds = _split(value, TIME_UNITS, where,
                         '"10us", "2ms", "1s", "5min", "2h" or a number in seconds')
    else:
        seconds = finite(value, where, "a duration")
    if seconds < 0 or (seconds == 0 and not allow_zero):
        raise ConfigError(where, f"must be {'>=' if allow_zero else '>'} 0 (got {shorten(value)})")
    if seconds > NS3_TIME_MAX_S:
        raise ConfigError(where, f"must be at most {NS3_TIME_MAX_S:.3g} s, the longest "
                                 f"time ns-3 represents (got {shorten(value)})")
    return seconds


def parse_bytes(value: Any, where: str, allow_zero: bool = False,
                maximum: int = INT64_MAX) -> int:
    """A size in bytes, from 160000 or "160KB" / "1MiB" (KB = 1000 B)."""
    if isinstance(value, str):
        size = _split(value, BYTE_UNITS, where, '160000, "160KB", "30 KB" or "4MiB"')
        size = round(size)
    elif isinstance(value, int) and not isinstance(value, bool):
        size = value
    else:
        raise ConfigTypeError(where, f"expected a size in bytes (an integer or e.g. "
                                     f"\"160KB\"), got {shorten(value)}")
    if size < 0 or (size == 0 and not allow_zero):
        raise ConfigError(where, f"must be {'>=' if allow_zero else '>'} 0 bytes "
                                 f"(got {shorten(value)})")
    if size > maximum:
        raise ConfigError(where, f"must be at most {maximum:,} bytes (got {shorten(value)})")
    return size


def unit_pattern(units: dict[str, float]) -> str:
    """What `_split` reads, as a JSON Schema (ECMA 262) pattern: a number and
    one of `units`, any case ("10Gbps", "10 gbit/s"), for editors to check."""
    def any_case(unit: str) -> str:
        return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else re.escape(c)
                       for c in unit)

    names = "|".join(any_case(u) for u in sorted(units, key=len, reverse=True))
    return rf"^\s*{_NUMBER}\s*(?:{names})\s*$"
