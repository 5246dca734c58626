"""Limits on one call: how long a node id, how large a value and how large one write may be.

Upstream bounds none of them, and what one call stores, every later call
pays for: a 20 MB value took 8 s to recall over MCP stdio (the MCP SDK's
client reads a line in time quadratic in its length), and a 100,000-character
id went whole into ``mnem log --oneline``.  So a new write is held to four
limits, each an environment variable of the ``mnem`` process that writes
(``ENVIRONMENT``).  Every writer ends up in that process: the bridge runs
``mnem`` with its own environment, and so do mnem-mcp, ``MnemosyneStore``
and ``MnemosyneSaver`` through it, so one variable set where an agent, a
server or an app starts holds for all of its writes.  ``0`` lifts a limit;
anything else that is not a whole number is ``usage``, naming the variable.

* ``MNEM_MAX_ID_BYTES`` (1024, S3's limit on an object key): a new node's
  id, in UTF-8 bytes.
* ``MNEM_MAX_VALUE_BYTES`` (1 MiB): a new node's value, its content as
  compact JSON plus its provenance texts; about 250,000 tokens, more than a
  model's context takes back from one ``recall``, and a recall within 0.25 s
  on every path, the MCP SDK's client included (BENCHMARKS.md, "Limits on
  one call"; 16 MiB takes that client 5 to 20 s).
* ``MNEM_MAX_WRITE_NODES`` (10,000): the puts and deletes of one ``write``,
  so one call holds a store's write lock for a fraction of a second, far
  inside the ``MNEM_BUSY_TIMEOUT_MS`` other writers wait.
* ``MNEM_MAX_WRITE_BYTES`` (16 MiB, mnem-mcp's ``--max-body``): what one
  ``write`` payload, or one value ``add`` or ``--resolve-json`` gives, may
  hold before it is parsed: its size is known (a file's, or a worker
  request's) or read no further than one byte past the limit, so a larger
  one is refused before any of it is parsed or held past the limit.

They hold where new values enter (``add``, ``write``, a merge's
``--resolve-json``), before anything is written.  A search's query, filter
and vector (``mnem search``) are held to the value limit before they are
parsed: they are compared with values, and none needs to be larger.  What a store already holds,
and what an import, fetch, clone or push brings (written elsewhere, upstream
included), never meets them: such a store opens, reads, verifies, merges and
exports as before, and an over-long id it holds can still be removed.

``write --allow-reserved`` is ``MnemosyneSaver``'s, and no agent can pass
it: such a write is not held to the two limits on a whole write, nor its
puts of reserved ids (``mnem_ids.checkpoints.CHECKPOINT_PREFIX``) to the id and value
limits.  A checkpoint's channel value is the graph's whole state, as large
as its message list (445 KB for 200 messages of 2,000 characters), and
copying or deleting a thread is one write of every node it has: sizes the
graph reached, not one call chose.  Its puts of other ids are held as any.

A generated commit message names an id through ``in_message``: a long one is
cut, so ``log --oneline`` stays one line of reasonable length.

Two more limits bound a transfer's redaction records (``TransferLimits``;
``redaction_exchange`` uses them), set the same way in the environment of
the ``mnem`` that fetches, clones or pushes:

* ``MNEM_REDACTION_PAGE`` (10,000): the records one page carries, as this
  process asks for them or sends them; ``0`` makes a page as large as one
  message may be (``redaction_travel.MAX_REDACTIONS``), the bound that
  holds on every page received whatever this says.
* ``MNEM_MAX_TRANSFER_REDACTIONS`` (10,000,000): what another store may make
  one transfer examine: the ranges of record ids it answers and the ids it
  lists, each counted once, so a peer that answers for ever is refused.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any, BinaryIO, Final, NamedTuple

from .errors import UsageError, rust_debug

__all__ = [
    "DEFAULTS", "ENVIRONMENT", "ID_ENV", "MESSAGE_ID_CHARS", "NODES_ENV", "PAGE_ENV", "TRANSFER_ENV", "VALUE_ENV",
    "WRITE_ENV", "Limits", "TransferLimits", "in_message", "read_bounded",
]

ID_ENV: Final = "MNEM_MAX_ID_BYTES"
VALUE_ENV: Final = "MNEM_MAX_VALUE_BYTES"
NODES_ENV: Final = "MNEM_MAX_WRITE_NODES"
WRITE_ENV: Final = "MNEM_MAX_WRITE_BYTES"
#: Each limit's variable, in ``Limits``' field order.
ENVIRONMENT: Final = (ID_ENV, VALUE_ENV, NODES_ENV, WRITE_ENV)
#: Each limit's default, in the same order.
DEFAULTS: Final = (1024, 1 << 20, 10_000, 16 << 20)
PAGE_ENV: Final = "MNEM_REDACTION_PAGE"
TRANSFER_ENV: Final = "MNEM_MAX_TRANSFER_REDACTIONS"
#: The defaults of ``TransferLimits``' two variables.
PAGE_DEFAULT: Final = 10_000
TRANSFER_DEFAULT: Final = 10_000_000
#: The longest id a generated commit message shows whole (upstream's text); a longer one is cut to this length.
MESSAGE_ID_CHARS: Final = 80
_LIFT = "0 lifts the limit"


def in_message(node_id: str) -> str:
    """``node_id`` as a generated commit message names it: whole up to ``MESSAGE_ID_CHARS``, else cut with ``...``."""
    return node_id if len(node_id) <= MESSAGE_ID_CHARS else node_id[: MESSAGE_ID_CHARS - 3] + "..."


def _from_environment(name: str, default: int, unit: str | None = None) -> int | None:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    if not raw.isascii() or not raw.isdigit():
        unit = unit or ("nodes" if name == NODES_ENV else "bytes")
        raise UsageError(f"{name} must be a whole number of {unit} ({_LIFT}), got {rust_debug(raw[:40])}; "
                         f"unset it for the default, {default}")
    return int(raw) or None


class Limits(NamedTuple):
    """The limits in force for one invocation; ``None`` is no limit."""

    id_bytes: int | None
    value_bytes: int | None
    write_nodes: int | None
    write_bytes: int | None

    @classmethod
    def current(cls) -> Limits:
        """The limits this process's environment sets (module docstring); a malformed variable is ``usage``."""
        return cls(*(_from_environment(name, default) for name, default in zip(ENVIRONMENT, DEFAULTS, strict=True)))

    def check_id(self, node_id: str, where: str) -> None:
        """Refuse a new node's id longer than ``id_bytes`` UTF-8 bytes; ``where`` names it (``ID``, ``put[3].id``)."""
        if self.id_bytes is None or len(node_id) * 4 <= self.id_bytes:  # no character takes more than 4 bytes
            return
        size = len(node_id.encode("utf-8", "surrogatepass"))
        if size > self.id_bytes:
            raise UsageError(f"{where} {rust_debug(in_message(node_id))} is {size} bytes long, more than the limit of "
                             f"{self.id_bytes} bytes a node id may have ({ID_ENV}); choose a shorter id, or raise "
                             f"{ID_ENV} ({_LIFT})")

    def check_value(self, content: Any, texts: Iterable[str | None], where: str) -> None:
        """Refuse a new node whose content (as compact JSON) and provenance ``texts`` pass ``value_bytes``.

        Measured before the content is checked for storage, which walks it in
        Python: ``orjson`` writes it at C speed.  Content ``orjson`` cannot
        write (an integer beyond 64 bits, nesting past 255 levels) is not
        storable, and ``canonical.check_content`` refuses it next.
        """
        if self.value_bytes is None:
            return
        import orjson  # imported here, not at load: cli/jsonout.py says why

        try:
            size = len(orjson.dumps(content))
        except (orjson.JSONEncodeError, TypeError):
            return
        size += sum(len(text.encode("utf-8", "surrogatepass")) for text in texts if text is not None)
        if size > self.value_bytes:
            raise UsageError(f"{where} holds {size} bytes (its content as compact JSON, and its provenance), more "
                             f"than the limit of {self.value_bytes} bytes one node may hold ({VALUE_ENV}); split it "
                             f"over several nodes, or raise {VALUE_ENV} ({_LIFT})")

    def check_nodes(self, count: int) -> None:
        """Refuse a ``write`` of more than ``write_nodes`` puts and deletes."""
        if self.write_nodes is not None and count > self.write_nodes:
            raise UsageError(f"the write holds {count} puts and deletes, more than the limit of {self.write_nodes} one "
                             f"write may hold ({NODES_ENV}); split it into several writes, or raise {NODES_ENV} "
                             f"({_LIFT})")

    def check_input(self, size: int, what: str, *, exact: bool = True) -> None:
        """Refuse ``what`` (a payload, a value as given) of ``size`` bytes (``exact=False``: more than that)."""
        if self.write_bytes is not None and size > self.write_bytes:
            found = f"{size} bytes" if exact else f"more than {self.write_bytes} bytes"
            raise UsageError(f"{what} is {found}, more than the limit of {self.write_bytes} bytes one write may send "
                             f"({WRITE_ENV}, checked before it is parsed); split it into several writes, or raise "
                             f"{WRITE_ENV} ({_LIFT})")

    def check_argument(self, text: str, what: str) -> None:
        """Refuse a read's argument (``search``'s query, filter or vector) of more UTF-8 bytes than one value may hold.

        Such an argument is compared with values, and none needs to be
        larger than one of them (``value_bytes``); a larger one would only
        make every candidate's comparison slower.
        """
        if self.value_bytes is None or len(text) <= self.value_bytes // 4:
            return
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > self.value_bytes:
            raise UsageError(f"{what} is {size} bytes, more than the limit of {self.value_bytes} bytes a search's "
                             f"argument may have, the size of one value ({VALUE_ENV}); shorten it, or raise "
                             f"{VALUE_ENV} ({_LIFT})")

    def check_text(self, text: str, what: str) -> None:
        """``check_input`` for a value given as text (an argument), by its UTF-8 size."""
        if self.write_bytes is not None and len(text) > self.write_bytes // 4:
            self.check_input(len(text.encode("utf-8", "surrogatepass")), what)


class TransferLimits(NamedTuple):
    """The limits on one transfer's redaction records (module docstring); ``total`` None is no limit."""

    page: int
    total: int | None

    @classmethod
    def current(cls, most_per_page: int) -> TransferLimits:
        """The limits this process's environment sets; a page is at most ``most_per_page``; malformed is ``usage``."""
        page = _from_environment(PAGE_ENV, PAGE_DEFAULT, "records")
        return cls(min(page or most_per_page, most_per_page),
                   _from_environment(TRANSFER_ENV, TRANSFER_DEFAULT, "records and ids"))


def read_bounded(stream: BinaryIO, limits: Limits, what: str) -> bytes:
    """All of ``stream``, refused (``Limits.check_input``) as soon as its size passes the limit.

    A seekable stream (a file, a worker request's buffer) says its size, so
    a larger one is refused unread, naming that size.  A pipe is read up to
    one byte past the limit and refused there, so an endless one is too.  A
    terminal is read to its end (a person typing, who ends it once with
    Ctrl-D: a read past it would wait for a second one).
    """
    if limits.write_bytes is None:
        return stream.read()
    try:
        if stream.seekable():
            here = stream.tell()
            size = stream.seek(0, os.SEEK_END) - here
            stream.seek(here)
            limits.check_input(size, what)
            return stream.read()
    except OSError:  # a stream that claims to seek and cannot: read it as a pipe
        pass
    if stream.isatty():
        data = stream.read()
        limits.check_input(len(data), what)
        return data
    chunks: list[bytes] = []
    held = 0
    while held <= limits.write_bytes and (chunk := stream.read(limits.write_bytes + 1 - held)):
        chunks.append(chunk)
        held += len(chunk)
    limits.check_input(held, what, exact=held <= limits.write_bytes)
    return b"".join(chunks)
