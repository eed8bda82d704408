"""The trust loop's records: people's labels and votes, cases, the review queue and its reviewers, rubric revisions and
channels' own judges."""
