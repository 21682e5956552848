"""Many runs: grid and cells, sweepdir (the sweep directory), sweeping
(run_sweep) and executors (the processes cells run in), adaptive seeds,
cost estimates, aggregate (the sweep's tables), reference results, boundary
(the bisection) and searching (running it), alone (each job against itself
alone). Imports the layers below: harness.config, harness.training,
harness.engine, harness.analysis, harness.io.outdir (the boundary
figure only inside the function that draws it). docs/architecture/code-map.md.
"""
