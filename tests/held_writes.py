"""A ``mnem`` that holds one write inside its transaction until the test lets it go.

Some claims are about what happens while a write is under way: a server
stopped by SIGTERM lets the calls in flight finish; one tenant's write
completes while another tenant's is in the middle of its commit.  A sleep
cannot make a write be under way; ``HeldWrite`` can.  It writes a ``mnem``
to hand a server as ``--mnem``: the real one, except that ``Repo.write``
(the body of every commit, inside its write transaction), given the node
``node``, touches the file ``held`` and waits there until the test
touches ``release``.  The test waits for ``held`` (the program's own word
that it is mid-commit), does what it is testing, and releases the write.
"""

from __future__ import annotations

import sys
from pathlib import Path

from manual_clock import eventually

__all__ = ["HANG", "HeldWrite"]

#: Seconds either side waits for the other: only a hang reaches them (a held write then goes on by itself).
HANG = 120.0

SCRIPT = """#!{python}
import os, sys, time
from mnem_store import repo
HELD, RELEASE, NODE, HANG = {held!r}, {release!r}, {node!r}, {hang!r}
write = repo.Repo.write
def held_write(self, puts, *args, **kwargs):
    if any(node.id == NODE for node in puts):
        open(HELD, "w").close()
        deadline = time.monotonic() + HANG
        while not os.path.exists(RELEASE) and time.monotonic() < deadline:
            time.sleep(0.01)
    return write(self, puts, *args, **kwargs)
repo.Repo.write = held_write
from mnem_store.process import main
sys.exit(main())
"""


class HeldWrite:
    """A ``mnem`` in ``directory`` whose write of ``node`` waits mid-commit until ``release()``.

    Args:
        directory: Where the program and its two files go (a test's own folder).
        node: The node id whose write is held (every other write goes through).
    """

    def __init__(self, directory: Path, node: str) -> None:
        self.node = node
        self.held, self.released = directory / "held", directory / "release"
        self.binary = directory / "mnem"
        self.binary.write_text(SCRIPT.format(python=sys.executable, held=str(self.held), release=str(self.released),
                                             node=node, hang=HANG), encoding="utf-8")
        self.binary.chmod(0o755)

    def wait(self) -> None:
        """Wait until the write of ``node`` is held inside its transaction.

        Raises:
            AssertionError: It was not within ``HANG`` seconds.
        """
        eventually(self.held.exists, f"the write of {self.node} reached its commit", within=HANG)

    def release(self) -> None:
        """Let the held write go on (and any later write of ``node`` through at once)."""
        self.released.touch()
