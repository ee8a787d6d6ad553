"""What to run: the task layout (decided once), the tasks and seeds, sizes, growth,
precision rounds and power planning, all from a spec, before any work.
"""
