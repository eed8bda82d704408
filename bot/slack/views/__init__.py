"""Block Kit builders: pure functions from records to messages, modals and the Home tab, within Slack's limits."""
