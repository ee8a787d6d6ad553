"""The ``boardsweep`` command: click commands that call the Python API
(:mod:`boardsweep.pipeline.api`), and the entry point that starts fast.
"""
