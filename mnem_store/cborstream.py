"""CBOR read one value at a time from a file, strictly, for packs (``transfer``): never more than one value in memory.

``cbor2.loads`` of a whole pack holds every object of it at once, and
containers of tiny items cost many times their bytes as Python objects
(a list of a million one-byte nulls is 8 MB of pointers), so a sender could
make a receiver's memory grow far past what it sent.  A ``Reader`` instead
walks a pack's structure: it reads one header at a time and hands back
only leaves (a byte string, a text, an unsigned integer, null) and the
lengths of containers, so the caller decides what to keep.  It accepts only
the definite-length forms ``cbor2.dumps`` writes; any other item (an
indefinite length, a tag, a float, a length past the end of the file) is
``MalformedError``, before anything is read for it.
"""

from __future__ import annotations

import os
from typing import BinaryIO, Final

__all__ = ["ARRAY", "BYTES", "MAP", "TEXT", "UINT", "MalformedError", "Reader", "head"]

#: The CBOR major types a pack uses.
UINT: Final = 0
BYTES: Final = 2
TEXT: Final = 3
ARRAY: Final = 4
MAP: Final = 5
_SIMPLE: Final = 7
_NULL: Final = 0xF6
#: Bytes of the argument that follows an initial byte's additional information 24..27.
_ARGUMENT_SIZE: Final = {24: 1, 25: 2, 26: 4, 27: 8}
_NAMES: Final = {UINT: "an unsigned integer", 1: "a negative integer", BYTES: "a byte string", TEXT: "a text",
                 ARRAY: "an array", MAP: "a map", 6: "a tag", _SIMPLE: "a simple value or float"}


class MalformedError(Exception):
    """The bytes are not the CBOR the caller expects here; ``str()`` says what was found, for a message."""


def head(major: int, length: int) -> bytes:
    """The shortest CBOR header of ``major`` with argument ``length``: a container's, written before its items."""
    if length < 24:
        return bytes([major << 5 | length])
    for info, size in _ARGUMENT_SIZE.items():
        if length < 1 << (8 * size):
            return bytes([major << 5 | info]) + length.to_bytes(size, "big")
    raise ValueError(f"{length} does not fit a CBOR header")


class Reader:
    """Reads the values of a CBOR file from its current position, one header at a time.

    Args:
        fp: A readable, seekable binary file (a spooled request body, a temporary file, ``io.BytesIO``).
    """

    def __init__(self, fp: BinaryIO) -> None:
        self.fp = fp
        start = fp.tell()
        self.size = fp.seek(0, os.SEEK_END)
        fp.seek(start)

    def tell(self) -> int:
        """The offset of the next header."""
        return self.fp.tell()

    def seek(self, offset: int) -> None:
        """Read on from ``offset`` (one ``tell`` gave)."""
        self.fp.seek(offset)

    def at_end(self) -> bool:
        """Whether every byte of the file has been read."""
        return self.fp.tell() >= self.size

    def _read(self, count: int) -> bytes:
        if count > self.size - self.fp.tell():
            raise MalformedError(f"it ends {count - (self.size - self.fp.tell())} byte(s) early")
        return self.fp.read(count)

    def _head(self) -> tuple[int, int, int]:
        """The next header: its major type, its additional information and its argument."""
        first = self._read(1)[0]
        major, info = first >> 5, first & 0x1F
        if info < 24:
            return major, info, info
        size = _ARGUMENT_SIZE.get(info)
        if size is None or major == _SIMPLE:
            raise MalformedError(f"it holds {_NAMES[major]} of a form packs never use (initial byte 0x{first:02x})")
        return major, info, int.from_bytes(self._read(size), "big")

    def _expect(self, major: int) -> int:
        found, _, argument = self._head()
        if found != major:
            raise MalformedError(f"it holds {_NAMES[found]} where {_NAMES[major]} belongs")
        return argument

    def _container(self, major: int, per_item: int) -> int:
        length = self._expect(major)
        if length * per_item > self.size - self.fp.tell():  # every item takes at least a byte
            raise MalformedError(f"{_NAMES[major]} of {length} items is longer than the rest of it")
        return length

    def array(self) -> int:
        """The length of the array that begins here; its items follow."""
        return self._container(ARRAY, 1)

    def map(self) -> int:
        """The number of pairs of the map that begins here; its keys and values follow, in turn."""
        return self._container(MAP, 2)

    def uint(self) -> int:
        """An unsigned integer."""
        return self._expect(UINT)

    def bytes_(self) -> bytes:
        """A byte string."""
        return self._read(self._expect(BYTES))

    def text(self) -> str:
        """A text (UTF-8)."""
        data = self._read(self._expect(TEXT))
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise MalformedError("it holds a text that is not UTF-8") from None

    def bytes_or_null(self) -> bytes | None:
        """A byte string, or ``None`` for null."""
        offset = self.fp.tell()
        if self._read(1)[0] == _NULL:
            return None
        self.fp.seek(offset)
        return self.bytes_()
