"""The user's intent, frozen: a sweep spec parsed, validated and its grid resolved.

Nothing here decides how the sweep runs (that is :mod:`boardsweep.pipeline.plan`).
"""
