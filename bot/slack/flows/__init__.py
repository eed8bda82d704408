"""Flows: what the bot does after an ack, over time (a card, a file's run, its recovery, a digest's post)."""
