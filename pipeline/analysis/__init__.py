"""The answers in a store: estimates, intervals, the verdict, variance and convergence:
the xarray layer over :mod:`boardsweep.core.stats` (array functions), and the ``ds.boardsweep`` accessor.
"""
