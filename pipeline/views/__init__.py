"""What a user sees: terminal output (banner, progress, summary, status, query rows)
and the report.
"""
