"""The TTL sweeper: a background thread that records expirations as commits now and then.

Expired items vanish from reads the moment their TTL runs out; a sweep
(``MnemosyneStore.sweep_ttl``, ``mnem expire``) only writes their removal
into history.  So the interval decides how soon history says so, never
what a read returns, and a failed sweep is logged and tried again at the
next interval rather than stopping the thread.
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
from collections.abc import Callable

__all__ = ["Sweeper"]

logger = logging.getLogger(__name__)


class Sweeper:
    """Runs ``sweep`` every interval on a daemon thread until stopped.

    Args:
        sweep: What one sweep does; returns how many items it removed.
    """

    def __init__(self, sweep: Callable[[], int]) -> None:
        self._sweep = sweep
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def start(self, interval: float) -> concurrent.futures.Future[None]:
        """Start sweeping every ``interval`` seconds (a running sweeper keeps its interval).

        Returns:
            A future done when the sweeper stops; cancelling it stops the sweeper.
        """
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        future.add_done_callback(lambda done: self._stop.set() if done.cancelled() else None)
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                logger.info("the TTL sweeper is already running")
                return future
            self._stop.clear()
            self._thread = threading.Thread(target=self._loop, args=(interval, future), daemon=True,
                                            name="mnem-ttl-sweeper")
            self._thread.start()
        logger.info("sweeping expired items every %.3g minutes", interval / 60)
        return future

    def _loop(self, interval: float, future: concurrent.futures.Future[None]) -> None:
        while not self._stop.wait(interval):
            try:
                removed = self._sweep()
            except Exception:
                logger.exception("a TTL sweep failed; trying again in %.3g minutes", interval / 60)
            else:
                if removed:
                    logger.info("swept %d expired items", removed)
        if not future.done():
            future.set_result(None)

    def stop(self, timeout: float | None = None) -> bool:
        """Stop sweeping; returns whether the thread ended within ``timeout`` seconds (True when none ran)."""
        with self._lock:
            thread, self._thread = self._thread, None
        self._stop.set()
        if thread is None:
            return True
        thread.join(timeout)
        return not thread.is_alive()
