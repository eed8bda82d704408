"""Listeners: each acknowledges Slack at once, checks where it was asked, and hands the work to a flow or a task."""
