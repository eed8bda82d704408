"""How the history counts: what makes a case one case, the one counting rule, the hourly tallies of verdicts and
votes, and what the judges were billed."""
