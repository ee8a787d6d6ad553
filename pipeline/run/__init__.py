"""Running a sweep: the orchestration, dispatch to Dask, what a worker does, the
kernels' warm-up, the run's record, and reproducibility checks.
"""
