"""Bisect with a Python predicate: upstream's search, run client-side over a first-parent chain.

A Python callable cannot cross into the binary, so ``Store.bisect(predicate)``
fetches the chain once and reads only the states this binary search asks
for: the two precondition checks plus O(log n) probes.  The preconditions
and their messages are upstream's (``mnem bisect`` raises the same ones).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from .errors import InvalidRefError

__all__ = ["first_commit_where"]

logger = logging.getLogger(__name__)


def first_commit_where(chain: Sequence[str], good: str, holds: Callable[[str], bool]) -> str:
    """The first commit after ``good`` on ``chain`` where ``holds`` is true.

    Args:
        chain: Commit ids oldest first, ending at the known-bad commit.
        good: A commit on ``chain`` where the condition is false.
        holds: Whether the condition is true at a commit (assumed monotonic along the chain).

    Returns:
        The boundary commit: false before it, true from it on.

    Raises:
        InvalidRefError: ``good`` is the bad commit or not on the chain, the
            condition is already true at ``good``, or false at the bad commit.
    """
    bad = chain[-1]
    if good == bad:
        raise InvalidRefError("invalid ref: bisect: good and bad are the same commit")
    if good not in chain:
        raise InvalidRefError(f"invalid ref: bisect: {good} is not on {bad}'s first-parent history")
    if holds(good):
        raise InvalidRefError(f"invalid ref: bisect: the predicate is already true at good ({good})")
    if not holds(bad):
        raise InvalidRefError(f"invalid ref: bisect: the predicate is false at bad ({bad})")
    candidates = chain[chain.index(good) + 1 :]
    low, high = 0, len(candidates) - 1  # candidates[high] is known to hold
    while low < high:
        middle = (low + high) // 2
        if holds(candidates[middle]):
            high = middle
        else:
            low = middle + 1
    logger.debug("bisect: %s is the first of %d candidates to hold", candidates[low], len(candidates))
    return candidates[low]
