"""The view's pages, one module per subject: runs, a run's rows and one row, comparisons, calibration, the weekly
trend, and the review queue with labeling."""
