"""Reading figures back: a channel's history and spend, its weeks, samples of it, what people said of it, pairs judged
pairwise, and verdicts for comparisons."""
