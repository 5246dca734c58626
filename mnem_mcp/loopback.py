"""Whether a listening address keeps ``mnem-mcp`` on this machine.

Its own module because ``cli`` checks it before anything heavy is imported
(``--auth none`` is refused off loopback), and ``http`` builds the loopback
``Host`` allow-list from it.
"""

from __future__ import annotations

import ipaddress

__all__ = ["is_loopback"]


def is_loopback(host: str) -> bool:
    """Whether binding (or naming) ``host`` stays on this machine.

    Args:
        host: A ``--host`` value or a URL's host: a name or an address (IPv6 with or without brackets).

    Returns:
        ``True`` for ``localhost`` and loopback addresses (127.0.0.0/8, ::1).
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
