"""The history's tables, as SQLModel classes: runs and judgments, the trust loop, what processes share, and slack_sdk's
installation stores."""
