"""A grid file's top level (harness.sweeps.grid reads the rest: the scenario fields
its tables set are checked against the scenario's own schema)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, Optional

from pydantic import AfterValidator, BeforeValidator, Field, TypeAdapter, model_validator

from harness.config.errors import ConfigError, ConfigTypeError, shorten
from harness.config.schema.base import Int, Number, PositiveTime, Section, Str, expect, validate
from harness.config.schema.scenario import _TomlSchema


def _non_empty(name: str) -> str:
    if not name.strip():
        raise ConfigError("", f"expected a non-empty string, got {shorten(name)}")
    return name


def _scenario(value: Any) -> Any:
    if not isinstance(value, str) or not value:
        from harness.config.scenario import resolve_scenario_file   # its message lists the built-ins

        resolve_scenario_file(value, Path.cwd(), "")
    return value


def _points(value: Any) -> Any:
    if not isinstance(value, list) or not all(isinstance(q, dict) and q for q in value):
        raise ConfigTypeError("", "expected a list of tables of scenario fields, e.g. "
                              '[{ "training.ratio" = 16, "background.rate" = 23 }]')
    return value


def Fields(example: str) -> Any:  # noqa: N802 - a type
    """A table of scenario fields ("run.duration" = 2.0, or nested tables)."""
    return Annotated[dict[str, Any], BeforeValidator(expect(dict, f"a table ({example})"))]


SetFields = Fields('"run.duration" = 2.0, ...')
AxesFields = Fields('"training.ratio" = [16, 8], ...')
ArmsFields = Fields('reference = "same", same = { "training.priority" = "same" }, ...')


class Adaptive(Section):
    """[adaptive]: more seeds where the answer is undecided (harness.sweeps.adaptive)."""

    max_seeds: Optional[Int(1)] = Field(None, description=(
        "seeds per point at most (the seed axis gives the first ones); required with [adaptive]"))
    budget: Optional[PositiveTime] = Field(None, description=(
        "the added rounds' seeds only where they fit in this wall time from the sweep's start"))

    @model_validator(mode="after")
    def _seeds(self) -> Adaptive:
        if self.model_fields_set and self.max_seeds is None:
            raise ConfigError("max_seeds", "missing: [adaptive] needs max_seeds, an integer >= 1")
        return self


def _thresholds(value: Any) -> Any:
    if not isinstance(value, list) or not value:
        raise ConfigTypeError("", "expected a non-empty list of slowdowns, e.g. [0.01, 0.30] "
                              "(1 % and 30 %)")
    return value


def _increasing(value: list[float]) -> list[float]:
    if any(b <= a for a, b in zip(value, value[1:])):
        raise ConfigError("", f"expected slowdowns in increasing order, each once, got {value}")
    return value


class Search(Section):
    """[search]: per point of the other axes, where along one numeric field
    the training slowdown crosses each threshold (harness.sweeps.boundary)."""

    field: Annotated[Str, AfterValidator(_non_empty)] = Field(description=(
        "the scenario field searched, a number (e.g. \"background.rate\"); not an axis"))
    lo: Number() = Field(description="the searched range's low end")
    hi: Number() = Field(description="the searched range's high end (> lo)")
    tolerance: Number(gt=0) = Field(description=(
        "stop bisecting when the bracket is at most this wide (in the field's unit); with "
        "spacing = \"log\", when its high end is at most this factor above its low end (> 1)"))
    spacing: Literal["linear", "log"] = Field("linear", description=(
        "how the bracket is halved: at its arithmetic middle (linear) or its geometric one "
        "(log: for fields a map steps by factors, such as background.rate; needs lo > 0)"))
    thresholds: Annotated[list[Number(gt=0)], BeforeValidator(_thresholds),
                          AfterValidator(_increasing)] = Field(
        [0.01, 0.30], validate_default=True, description=(
            "training slowdowns whose crossings are searched, as fractions (0.01 = 1 %)"))
    max_seeds: Int(1) = Field(6, description=(
        "seeds per probe at most (the seed axis gives the first ones)"))
    max_undecided: Int(0) = Field(2, description=(
        "undecided probes a search goes on after, probing windows around them (each "
        "undecided probe costs max_seeds); 0: the first undecided probe ends the search"))
    arm: Optional[Str] = Field(None, description=(
        "the arm compared with the reference (default: the only other arm)"))

    @model_validator(mode="after")
    def _range(self) -> Search:
        if self.hi <= self.lo:
            raise ConfigError("hi", f"must be greater than search.lo ({self.lo:g}), got "
                              f"{self.hi:g}")
        if self.spacing == "log" and self.lo <= 0:
            raise ConfigError("lo", f"must be > 0 with spacing = \"log\", got {self.lo:g}")
        if self.spacing == "log" and self.tolerance <= 1:
            raise ConfigError("tolerance", "with spacing = \"log\" it is the factor the "
                              "bracket's high end may be above its low end: must be > 1, got "
                              f"{self.tolerance:g}")
        return self


class GridFile(Section):
    """A grid file (workloads/sweeps/*.toml): a base scenario, fields set for
    every cell, axes, explicit points and paired arms."""

    name: Annotated[Str, AfterValidator(_non_empty)] = Field(None, description=(
        "names the sweep directory (default: the file's name)"))
    scenario: Annotated[Str, BeforeValidator(_scenario)] = Field(description=(
        "the base scenario: a name in workloads/scenarios or a path"))
    timeout: PositiveTime = Field("6h", validate_default=True, description=(
        "wall-clock limit of one cell"))
    set: SetFields = Field({}, description=(
        "scenario fields of every cell, e.g. \"run.duration\" = 2.0"))
    points: Annotated[list[dict[str, Any]], BeforeValidator(_points)] = Field([], description=(
        "explicit combinations of fields, each crossed with the axes; a point may have a "
        "`label`, its own `arms` and `reference`"))
    axes: AxesFields = Field({}, description=(
        "scenario field -> its values (a non-empty list); the cells are their product"))
    arms: ArmsFields = Field({}, description=(
        "arm name -> its scenario fields; `reference` names the arm the others are "
        "compared with"))
    adaptive: Adaptive = Field(Adaptive(), description=(
        "more seeds where the answer is undecided (max_seeds, budget)"))
    search: Optional[Search] = Field(None, description=(
        "a boundary search instead of a sweep (`harness boundary`): field, lo, hi, "
        "tolerance, spacing, thresholds, max_seeds, max_undecided, arm"))


_GRID = TypeAdapter(GridFile)


def read_grid(data: dict[str, Any]) -> GridFile:
    """A grid file's top level, checked (ConfigError naming the key)."""
    return validate(_GRID, data, GridFile)


def grid_json_schema() -> dict[str, Any]:
    """The JSON Schema of grid files (`harness schema --grid`,
    docs/schema/grid.schema.json)."""
    schema = GridFile.model_json_schema(schema_generator=_TomlSchema)
    schema["title"] = "ddnn-harness grid"
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema
