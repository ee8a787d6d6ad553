"""Where tasks run: targets (embedded, a scheduler, a batch system), their settings,
the embedded cluster, batch jobs and the dashboard.
"""
