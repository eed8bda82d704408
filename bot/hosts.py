"""Which hosts a server binds to that only this machine reaches: what the MCP server and the web view serve freely,
and beyond which they ask for a sign-in."""

from __future__ import annotations

import ipaddress


def loopback(host: str) -> bool:
    """Whether `host` is an address only this machine reaches (127.0.0.0/8, ::1, localhost)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:  # a name, which may stand for any interface
        return False
