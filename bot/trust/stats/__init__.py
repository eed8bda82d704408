"""Plain statistics, nothing of judgebot in them: intervals, kappa, alpha, exact tests, a confusion matrix, a ranking."""
