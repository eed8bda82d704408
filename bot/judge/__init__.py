"""Judging: one judgment (prompt, injection screen, reply reading, repair) and the panel (samples and juries)."""
