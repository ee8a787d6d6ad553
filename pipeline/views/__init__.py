"""What a user sees: terminal output (banner, progress, summary, status, query rows)
and the report. Views render what they are handed; they never open a store.
"""
