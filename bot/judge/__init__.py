"""Judging: one judgment (prompt, injection screen, reply reading, repair, context window), every way a verdict is
made, and the panel of judges (samples and juries).

Names are imported from their modules: a view that only reads samples (bot.judge.samples) loads without the judge's
client."""
