"""[run]: how long the run lasts and what is measured."""

from __future__ import annotations

from pydantic import Field, model_validator

from harness.config.errors import ConfigError
from harness.config.schema.base import Int, PositiveTime, Section, Time

# LinkUtilizationTracker keys its counters by interval << 40 | ToS << 32 |
# application: 24 bits of interval number.
MAX_UTILIZATION_INTERVALS = 2**24 - 2


class RunConfig(Section):
    duration: PositiveTime = Field(3.0, description=(
        "simulated seconds; with `min_iterations` only a cap, lengthened if needed"))
    warmup: Time = Field(0.5, description=(
        "flows and iterations starting before this are not measured"))
    cooldown: Time = Field(0.5, description=(
        "nor those starting in the last `cooldown`; the run ends sooner once the measured "
        "flows are done"))
    utilization_interval: PositiveTime = Field(0.1, description=(
        "length of the link-utilisation intervals"))
    # measure at least this many complete training iterations: the run is made
    # long enough at the job's no-contention pace (harness.engine.planning.plan)
    min_iterations: Int(0, 1000) = Field(0, description=(
        "end the run once every worker completed this many iterations started after "
        "warm-up (`duration` is then a cap); 0 = off"))

    @property
    def window(self) -> tuple[float, float]:
        """Flows and iterations inside [start, end] seconds are measured."""
        return self.warmup, self.duration - self.cooldown

    @model_validator(mode="after")
    def _fits(self) -> RunConfig:
        if self.warmup + self.cooldown >= self.duration:
            raise ConfigError("duration", f"must exceed warmup + cooldown ({self.warmup:g} + "
                              f"{self.cooldown:g} s), got {self.duration:g} s; set run.warmup "
                              "and run.cooldown too")
        interval = self.utilization_interval
        if round(interval * 1e9) < 1:
            raise ConfigError("utilization_interval", f"{interval:g} s rounds to 0 ns; ns-3 "
                              "counts time in whole nanoseconds (at least 1e-9 s)")
        if self.duration / interval > MAX_UTILIZATION_INTERVALS:
            raise ConfigError("utilization_interval", f"{self.duration:g} s in intervals of "
                              f"{interval:g} s are more than the utilisation tracker's "
                              f"{MAX_UTILIZATION_INTERVALS:,} intervals; use at least "
                              f"{self.duration / MAX_UTILIZATION_INTERVALS:.3g} s")
        return self
