"""The thin Slack layer: wiring, Block Kit views, and the HTTP / Socket Mode server over the judge core."""
