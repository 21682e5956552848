"""[run]: how long the run lasts and what is measured."""

from __future__ import annotations

from typing import Annotated, Literal, Optional, Union

from pydantic import Field, model_validator

from harness.config.errors import ConfigError
from harness.config.schema.base import Hosts, Int, PositiveTime, Section, Str, Time, Toml

# LinkUtilizationTracker keys its counters by interval << 40 | ToS << 32 |
# application: 24 bits of interval number.
MAX_UTILIZATION_INTERVALS = 2**24 - 2


#: The queue sampler holds every sample in memory until the run ends
#: (QueueSampler): 8 bytes of time and 8 per band a sample.
MAX_QUEUE_SAMPLES = 20_000_000
QUEUE_DIRECTIONS = ("to_host", "from_host", "both")


class QueueSamples(Section):
    """The backlog of chosen egress queues over time ([run.queue_samples]):
    every `interval` from `start` to `stop`, each band of the egresses of
    `hosts`' links (`to_host`: the switch's egress towards the host;
    `from_host`: the host's own; `both`) is read in ns-3 (QueueSampler) and
    the run gets a queue_samples table. Left out, nothing is sampled."""

    example = '{ interval = "10us", hosts = [2] }'
    interval: PositiveTime = Field(description=(
        "time between two samples, e.g. \"10us\" (at least 1 ns)"))
    hosts: Hosts = Field((), description=(
        "hosts whose links' egresses are sampled; empty = every host (none when `egresses` "
        "is given)"))
    egresses: Annotated[Union[Literal["fabric"], tuple[tuple[Str, Str], ...]],
                        Toml("\"fabric\" or a list of [from, to] node names")] = Field(
        (), description=(
            "switch egresses besides the hosts' links: [from, to] pairs of node names (h0.., "
            "s0..: node `from`'s egress towards `to`, the two ends of one link), or "
            "\"fabric\": every switch-to-switch egress, both ways"))
    direction: Literal[QUEUE_DIRECTIONS] = Field("to_host", description=(
        "`to_host` (the switch's egress towards the host), `from_host` (the host's egress) "
        "or `both`"))
    classes: Annotated[tuple[Str, ...], Toml("list of strings")] = Field((), description=(
        "the traffic classes (network.classes) whose bands are sampled; empty = every band"))
    start: Annotated[Optional[Time], Toml(default="run.warmup")] = Field(None, description=(
        "the first sample's time; default the measurement window's start"))
    stop: Annotated[Optional[Time], Toml(default="run.duration - run.cooldown")] = Field(
        None, description="no sample after this time; default the measurement window's end")


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

    queue_samples: Annotated[Optional[QueueSamples], Toml("table", "none")] = Field(
        None, description=("the backlog of chosen egresses sampled over time (the table "
                           "below); default none"))

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
        if self.queue_samples is not None:
            self._check_queue_samples(self.queue_samples)
        return self

    def queue_sample_times(self) -> tuple[float, float]:
        """(start, stop) of run.queue_samples, the defaults filled in."""
        q = self.queue_samples
        start, stop = self.window
        return (start if q.start is None else q.start, stop if q.stop is None else q.stop)

    def _check_queue_samples(self, q: QueueSamples) -> None:
        if round(q.interval * 1e9) < 1:
            raise ConfigError("queue_samples.interval", f"{q.interval:g} s rounds to 0 ns; "
                              "ns-3 counts time in whole nanoseconds (at least 1e-9 s)")
        start, stop = self.queue_sample_times()
        for key, t in (("start", start), ("stop", stop)):
            if t > self.duration:
                raise ConfigError(f"queue_samples.{key}", f"{t:g} s is after the end of the "
                                  f"run (run.duration = {self.duration:g} s)")
        if start > stop:
            raise ConfigError("queue_samples.start", f"{start:g} s is after "
                              f"queue_samples.stop ({stop:g} s)")
        if (stop - start) / q.interval > MAX_QUEUE_SAMPLES:
            raise ConfigError("queue_samples.interval", f"{stop - start:g} s in samples of "
                              f"{q.interval:g} s are more than {MAX_QUEUE_SAMPLES:,} samples; "
                              f"use at least {(stop - start) / MAX_QUEUE_SAMPLES:.3g} s")
