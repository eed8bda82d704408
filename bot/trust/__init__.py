"""How far to trust the judge: people's labels, calibration figures, labeled cases, the drift check, the trust report."""
