"""A run's tables and what is computed from them, pure pandas, no ns-3:
tables (Run, the one type for a run's tables in memory or on disk; the
readers of run and sweep directories; read_csv), summary (the per-cell
summary's vocabulary), metrics, run_changes (each metric's change between
runs), stats (intervals, and every verdict with its thresholds and words),
claims, comparing, frontier, services and service_changes (the services'
tables and metrics, and each one's change between runs), crossings (how a
boundary search ended, in words) and references (the published results the
reference suite compares with, as pure functions). What it may import:
pyproject.toml's import contracts; docs/architecture/code-map.md.
"""
