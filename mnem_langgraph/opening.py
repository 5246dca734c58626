"""Opening the store a LangGraph adapter works on, by ``mnem-mcp --store``'s rule.

``MnemosyneStore`` and ``MnemosyneSaver`` take the same ``path`` and
``create`` arguments and must refuse and create exactly the same stores, so
the rule lives here once rather than in each constructor.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable

import mnem_bridge

__all__ = ["open_store"]

logger = logging.getLogger(__name__)


def open_store(
    path: str | os.PathLike[str] | None,
    *,
    mnem: str | os.PathLike[str] | None,
    timeout: float,
    create: bool | None,
    clock: Callable[[], int] | None,
) -> tuple[mnem_bridge.Mnem, mnem_bridge.Store]:
    """A client with its own ``mnem`` worker, and the store at ``path`` opened through it.

    An explicit folder (``path`` or ``$MNEM_STORE``) is taken exactly and, with
    ``create=None``, created on first use when nothing else is there; a
    PostgreSQL URL is never created unless ``create=True``, and is checked
    here so that a typo in ``store=`` fails now, naming the database's stores,
    not at a graph's first write.  The client is closed again if the store
    cannot be opened, so no worker outlives a failed constructor.

    Args:
        path: A folder, a PostgreSQL URL, or ``None`` (``$MNEM_STORE``, else discovery).
        mnem: The ``mnem`` binary (``None``: the bridge's search).
        timeout: Seconds one invocation may take.
        create: ``None`` (folders yes, URLs no), ``True`` or ``False``.
        clock: "Now" in Unix milliseconds, sent with every call (``None``: the system clock).

    Returns:
        ``(client, store)``; closing the client ends the worker.

    Raises:
        NoStoreError: No store there, and none may be created.
        BinaryNotFoundError: No ``mnem`` binary.
    """
    where = path if path is not None else os.environ.get("MNEM_STORE") or None
    url = where is not None and isinstance(mnem_bridge.store_address(where), mnem_bridge.StoreUrl)
    client = mnem_bridge.Mnem(mnem, timeout=timeout, clock=clock)
    try:
        store = mnem_bridge.open(where, client=client, exact=True, create=not url if create is None else create)
        if url and not create:
            store.head()
    except BaseException:
        client.close()
        raise
    return client, store
