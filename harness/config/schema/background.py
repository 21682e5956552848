"""[background]: the background (web-search) flows."""

from __future__ import annotations

from typing import Annotated, Optional

from pydantic import AfterValidator, Field, model_validator

from harness.config.errors import ConfigError
from harness.config.schema.base import Bool, Hosts, Int, Number, Section, Str, Time, Toml


def both_given(field: str, other: str) -> ConfigError:
    """The error of a quantity given two ways at once (one file, one list of
    overrides, one grid table): nothing says which of the two was meant."""
    first, second = sorted((field, other), key=lambda f: f.rsplit(".", 1)[-1] != "rate")
    return ConfigError(first, f"given together with {second}; give one of them: "
                       "rate (flows/s per host) or load (offered load per host link, "
                       "0 < load < 1)")


class LoadStep(Section):
    """From time `at` (s), background flows arrive at `rate` flows/s per host,
    or at the rate that offers `load` per host link (one of the two)."""

    example = "{ at = 1.0, load = 0.3 }"
    at: Time = Field(description="when the step starts")
    rate: Optional[Number(ge=0)] = Field(None, description=(
        "flows/s per host from `at` on (0 = no flows); give rate or load"))
    load: Optional[Number(ge=0, lt=1)] = Field(None, description=(
        "offered load per host link from `at` on, below 1; give rate or load"))

    @model_validator(mode="after")
    def _one_of(self) -> LoadStep:
        if self.given("rate") == self.given("load"):
            raise ConfigError("rate", "give either rate (flows/s per host) or load (0..1) for "
                              "each step")
        return self


def _in_order(steps: tuple[LoadStep, ...]) -> tuple[LoadStep, ...]:
    for i in range(1, len(steps)):
        if steps[i].at <= steps[i - 1].at:
            raise ConfigError(f"[{i}].at", f"steps must be in increasing time order "
                              f"({steps[i].at:g} s after {steps[i - 1].at:g} s)")
    return steps


def _two_or_more(hosts: tuple) -> tuple:
    if len(hosts) == 1:
        raise ConfigError("", "needs at least 2 hosts (source != destination)")
    return hosts


class BackgroundConfig(Section):
    enabled: Bool = Field(True, description="run background flows")
    workload: Str = Field("websearch", description=(
        "flow-size distribution: a CSV name in workloads/cdf/ or a path"))
    rate: Optional[Number(gt=0)] = Field(None, description=(
        "Poisson arrivals, flows/s per host (lambda); give rate or load"))
    load: Optional[Number(gt=0, lt=1)] = Field(None, description=(
        "or the offered load per host link, 0 < load < 1"))
    traffic_class: Str = Field("high", alias="class", description=(
        "traffic class of the background flows"))
    hosts: Annotated[Hosts, AfterValidator(_two_or_more)] = Field((), description=(
        "hosts that send and receive (at least 2); empty = every host"))
    port: Int(1, 65535) = Field(9000, description="the flows' destination port")
    steps: Annotated[tuple[LoadStep, ...], AfterValidator(_in_order),
                     Toml("list of tables")] = Field((), description=(
                         "piecewise-constant arrival rate (the entries below)"))

    @model_validator(mode="after")
    def _rate_or_load(self) -> BackgroundConfig:
        if self.rate is not None and self.load is not None:
            raise both_given("background.rate", "background.load")
        if self.enabled and self.rate is None and self.load is None:
            raise ConfigError("rate", "background is enabled: give rate (flows/s per host) or "
                              "load (0..1)")
        return self
