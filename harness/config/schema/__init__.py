"""The scenario file's schema: one pydantic model per table, its keys' types,
defaults, ranges and descriptions declared once, next to each other.

- harness.config.schema.base: the models' base (frozen, unknown keys refused), the
  value types (integers in ns-3's ranges, times, rates and sizes read by
  harness.config.units), and pydantic's errors as this project's one-line
  ConfigError (``network.buffer.size: must be >= 1 (got 0)``);
- harness.config.schema.run, .network, .tcp, .background, .training, .service:
  the sections; each training architecture's own settings model lives with
  its plug-in (harness/training/ring.py, ps.py, sharded.py) on the base of
  harness.config.schema.training;
- harness.config.schema.topology: topology files (one model per `kind`);
- harness.config.schema.scenario: the scenario, its cross-section checks and digest;
- harness.config.schema.grid: a grid file's top level.

harness.config.scenario re-exports what the rest of the code uses; the JSON Schema
of scenario files is `harness schema` (docs/schema/scenario.schema.json).
Nothing is imported here at import time, so that a plug-in can import the
job base without the whole schema.
"""


def json_schema(kind: str = "scenario") -> dict:
    """The JSON Schema of scenario files (kind "scenario") or grid files ("grid")."""
    if kind == "grid":
        from harness.config.schema.grid import grid_json_schema
        return grid_json_schema()
    from harness.config.schema.scenario import scenario_json_schema
    return scenario_json_schema()
