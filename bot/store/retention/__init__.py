"""Removing what people wrote once it is old (every figure kept), and a workspace's data on request."""
