"""Configuration: what a scenario or grid file may say, and reading it.

scenario (TOML, `base`, `--set` overrides, the validated Scenario), schema/
(the pydantic models), keys (the key reference), units, paths (the data
files), environment (the environment variables the harness reads), errors
and registry (the plug-ins: training architectures and scheduling
policies). The bottom layer: it imports no other harness
package; the plug-ins register into its registry (pyproject.toml's
import contracts, checked by `lint-imports`). docs/architecture/code-map.md.
"""
