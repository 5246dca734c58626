"""The error taxonomy shared by the engine, the CLI and the JSON contract.

Every failure the engine can report is one of these classes.  Each carries a
stable snake_case ``code`` (the ``error.code`` of the ``--json`` contract and
the code the bridge maps back to a typed exception) and renders with upstream
Mnemosyne's Display prefix, so ``Error: <str(exc)>`` matches upstream's CLI.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "BusyError",
    "CommandError",
    "ConflictError",
    "CorruptStoreError",
    "ForeignStoreError",
    "FormatVersionError",
    "InvalidRefError",
    "MnemError",
    "NoStoreError",
    "NotFoundError",
    "StoreExistsError",
    "StoreIoError",
    "UsageError",
    "escaped",
    "printable",
    "rust_debug",
]


class MnemError(Exception):
    """Base of every engine error; ``str()`` is upstream's Display text."""

    code = "error"
    exit_code = 1
    prefix = ""

    def __init__(self, detail: str, *, cause: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        #: Upstream's anyhow "Caused by:" text, when the failure wraps another.
        self.cause = cause

    def __str__(self) -> str:
        return f"{self.prefix}{self.detail}"

    def details(self) -> dict[str, Any]:
        """Extra fields for the JSON error document (empty for most errors)."""
        return {}


class NotFoundError(MnemError):
    """An object was asked for by id and the store does not hold it."""

    code = "not_found"

    def __str__(self) -> str:
        return f"object {self.detail} not found"


class InvalidRefError(MnemError):
    """A bad name, revision or precondition: the caller asked for something impossible."""

    code = "invalid_ref"
    prefix = "invalid ref: "


class ConflictError(MnemError):
    """A ref compare-and-swap failed: the branch moved under the writer."""

    code = "conflict"
    prefix = "the branch moved under you: "


class CorruptStoreError(MnemError):
    """Bytes on disk (or in an export) do not decode to what they claim to be."""

    code = "corrupt_store"
    prefix = "corrupt store: "


class FormatVersionError(MnemError):
    """The store or export was written by a newer format than this release reads."""

    code = "format_version"

    def __init__(self, found: int, supported: int) -> None:
        super().__init__(f"{found}")
        self.found = found
        self.supported = supported

    def __str__(self) -> str:
        return f"unsupported format version {self.found}, this release supports up to {self.supported}"


class StoreExistsError(MnemError):
    """``init`` or ``import`` would create a store on top of (or inside) another."""

    code = "store_exists"

    def __str__(self) -> str:
        return f"a store already exists at {self.detail}"


class NoStoreError(MnemError):
    """No store where one was looked for: at or above the current folder, or exactly at an explicit path."""

    code = "no_store"

    def __init__(self, detail: str, *, exact: bool = False, inside: str | None = None) -> None:
        super().__init__(detail)
        self.exact = exact
        #: The store an exact path lies inside, if any: ``mnem init`` would refuse it there, so that is not the fix.
        self.inside = inside

    def __str__(self) -> str:
        if self.exact:
            import shlex  # only this message quotes: kept off every command's start-up

            if self.inside is not None:
                return (f"no mnemosyne store at {self.detail}: it is inside the store at {self.inside}, and no store "
                        f"is made inside another; to use that store pass {shlex.quote(self.inside)} (`mnem -C "
                        f"{shlex.quote(self.inside)} ...`), for a new store pass a path outside it")
            return f"no mnemosyne store at {self.detail}; create one with `mnem init {shlex.quote(self.detail)}`"
        return f"no mnemosyne store at or above {self.detail}"


class ForeignStoreError(NoStoreError):
    """A store found by walking up from the current folder belongs to another user, so it is not used.

    Like git's ``safe.directory``: another local user could plant a
    ``.mnem`` in a shared parent folder and receive every memory written
    below it.  Naming the store explicitly says it is trusted.
    """

    def __init__(self, root: str, owner: int) -> None:
        super().__init__(root)
        self.owner = owner

    def __str__(self) -> str:
        return (
            f"the store at {self.detail} belongs to another user (uid {self.owner}), and was only found by "
            f"walking up from the current folder, so it is not used; if you trust it, name it explicitly: "
            f"`mnem -C {self.detail} ...` or MNEM_STORE={self.detail}"
        )


class StoreIoError(MnemError):
    """The filesystem or the database failed underneath the engine."""

    code = "store_io"
    prefix = "storage error: "


class BusyError(StoreIoError):
    """Another writer held the store for longer than the bounded wait."""

    code = "busy"
    prefix = "store busy: "


class UsageError(MnemError):
    """The command line or a JSON payload is malformed (CLI exit status 2).

    Upstream reports these through clap or anyhow without a prefix, so the
    message is shown as is.
    """

    code = "usage"
    exit_code = 2


class CommandError(MnemError):
    """A CLI-level failure that upstream reports without a taxonomy prefix.

    Upstream's anyhow messages (``nothing staged; use `mnem add` ...``) are
    not core errors; they exit 1 and are classified here by ``code``.
    """

    def __init__(self, detail: str, code: str = "invalid_ref", *, cause: str | None = None) -> None:
        super().__init__(detail, cause=cause)
        self.code = code


def rust_debug(text: str) -> str:
    r"""Quote a string as Rust's ``{:?}`` does, since upstream builds many messages with it.

    Engine and CLI messages both need it, so it lives here rather than in
    the CLI renderer.  Rust escapes ``\0``, ``\t``, ``\r``, ``\n``, quotes
    and backslashes by name; combining marks and non-printable characters
    (the same Unicode categories Python's ``isprintable`` rejects) as
    ``\u{hex}``; everything else is kept.
    """
    import unicodedata  # for messages only: a read that succeeds never loads it

    named = {"\0": "\\0", "\t": "\\t", "\r": "\\r", "\n": "\\n", '"': '\\"', "\\": "\\\\"}
    out = ['"']
    for ch in text:
        if ch in named:
            out.append(named[ch])
        elif not ch.isprintable() or unicodedata.category(ch) in ("Mn", "Me"):
            out.append(escaped(ch))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def printable(text: str) -> str:
    r"""Text another party wrote (a remote's error message or reason phrase), safe to show on a terminal.

    A remote's words reach the user inside our messages, and a terminal acts
    on some characters: an escape sequence can clear the screen or recolour
    it, a carriage return or a bidi override can make a forged line look
    like ours, a bell rings.  Every character Python's ``isprintable``
    rejects except the space (controls, format characters such as bidi
    overrides, line and paragraph separators, surrogates) becomes
    ``\u{hex}``, as ``rust_debug`` writes it; everything else is kept, so a
    plain message reads unchanged.  The escaping is done once, where the
    text enters the engine, so the text output and the ``--json`` message
    carry the same words.
    """
    return "".join(ch if ch == " " or ch.isprintable() else escaped(ch) for ch in text)


def escaped(ch: str) -> str:
    r"""One character as ``\u{hex}`` (Rust's escape, which ``rust_debug`` and ``printable`` share)."""
    return f"\\u{{{ord(ch):x}}}"
