"""Many runs: grid and cells, sweepdir (the sweep directory), sweeping
(run_sweep) and executors (the processes cells run in), adaptive seeds,
cost estimates, aggregate (the sweep's tables), reference results, boundary
(the bisection), search_plan and searching (running it), alone (each job
against itself alone), findings (kept results). Draws nothing: the service
layer draws. docs/architecture/code-map.md.
"""
