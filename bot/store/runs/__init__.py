"""Runs and their rows: made, saved before judging, claimed by the processes judging them, their verdicts and samples
recorded once, and their Batch API parts."""
