"""Configuration: what a scenario or grid file may say, and reading it.

scenario (TOML, `base`, `--set` overrides, the validated Scenario), schema/
(the pydantic models), keys (the key reference), units, paths (the data
files), errors and catalog (the built-ins of `harness list`). The bottom
layer: it imports only itself, the architectures' settings models
(harness.training) and the policies' table (harness.traffic.schedulers);
catalog imports the built-ins of every layer inside its functions.
docs/architecture/code-map.md.
"""
