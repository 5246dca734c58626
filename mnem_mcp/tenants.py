"""One server, many stores: over HTTP with bearer tokens, the token chooses the store a request reaches.

``mnem-mcp --transport http --auth jwt --store-per CLAIM --store TEMPLATE``
serves one store per value of the token claim ``CLAIM`` (``tenant``, or
``sub`` for a store per identity).  ``TEMPLATE`` is a folder or a
PostgreSQL URL holding ``{tenant}`` (``TENANT_FIELD``), replaced by the
claim's value: ``/srv/mnem/{tenant}``, or
``postgresql://db.example.com/mnem?store={tenant}``.  Nothing else picks
the store: no tool argument, resource URI, URL or header takes part, so a
caller reaches the store its token maps to and no other.

The value becomes a folder name or a PostgreSQL store name, so it must be
a safe name (``SAFE_NAME``): 1 to 58 lowercase letters, digits, ``_`` or
``-``, starting with a letter or digit.  That is the engine's rule for a
PostgreSQL store name without upper case, so ``..``, ``/``, ``%2e``, NUL or
an option (``-x``) can never be one, and no two accepted values name one
folder on a file system that ignores case.  A token whose claim is missing,
not a string, or not a safe name is refused when it is checked: ``403
access_denied`` naming the claim (``TenantVerifier``), before any route
runs; the router refuses it again (``TenantRefusedError``) should a
request ever reach it without one.

``StoreRouter`` has the interface the tools and resources already use
(``call``, ``open``, ``close``), and picks per request, from the verified
token (``get_access_token``), a ``TenantBinding``: a ``StoreBinding`` of its
own per store, with its own ``mnem`` worker, made on the store's first
request and kept.  A store is created on first use as with one store (a
new or empty folder; in PostgreSQL only with ``--create``).  At most
``max_stores`` bindings are kept: past that, the least recently used one's
worker is closed, once no call is running on it.

Calls on different stores run in parallel: each binding's calls run on a
thread of their own, one at a time per binding (its worker serialises them
anyway).  ``mnem_bridge.run_inline``, which one store's server uses, lets
the calls of one event loop take turns, so it would serialise every store
behind one another.  Scopes are the token's: ``mnem:read`` and
``mnem:write`` apply to the one store it maps to.

Other HTTP routes reach the same store as the tools by
``StoreRouter.binding_for_request()`` (``StoreBinding`` has the method too,
returning itself, so a route works alike with one store or many).
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Concatenate, Final, ParamSpec, TypeVar
from urllib.parse import quote

from mcp.server.auth.middleware.auth_context import get_access_token

import mnem_bridge

from .binding import StoreBinding, locate_store, store_internals

if TYPE_CHECKING:
    import anyio
    from mcp.server.auth.provider import AccessToken, TokenVerifier

__all__ = [
    "DEFAULT_MAX_STORES", "SAFE_NAME", "TENANT_FIELD", "StoreRouter", "StoreTemplate", "TenantBinding",
    "TenantRefusedError", "TenantVerifier", "tenant_of",
]

logger = logging.getLogger(__name__)

P = ParamSpec("P")
T = TypeVar("T")

#: What ``--store``'s template holds where the claim's value goes.
TENANT_FIELD: Final = "{tenant}"
#: A claim value that may name a store: a folder name and a PostgreSQL store name alike (see the module's docstring).
SAFE_NAME: Final = re.compile(r"[a-z0-9][a-z0-9_-]{0,57}")
#: What a claim's name may be (``--store-per``): a JSON object key an issuer writes, no spaces or braces.
CLAIM_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}")
#: How many stores' bindings (and ``mnem`` workers) are kept by default.
DEFAULT_MAX_STORES: Final = 32
#: How much of a refused claim value a message shows.
_SHOWN: Final = 80


class TenantRefusedError(PermissionError):
    """A request whose token maps to no store here: no token, no claim, or a value that cannot name a store.

    Args:
        claim: The claim that chooses the store (``--store-per``).
        description: What is wrong and what to do, for the client's developer.

    Attributes:
        code: The OAuth error code it is answered with (``403 access_denied`` over HTTP).
    """

    code: Final = "access_denied"

    def __init__(self, claim: str, description: str) -> None:
        super().__init__(description)
        self.claim = claim
        self.description = description


def tenant_of(token: AccessToken | None, claim: str) -> str:
    """The store name a verified token maps to: its ``claim``, checked against ``SAFE_NAME``.

    Args:
        token: The request's verified token (``None``: the request carries none).
        claim: The claim that chooses the store.

    Returns:
        The claim's value.

    Raises:
        TenantRefusedError: No token, no such claim, or a value that is not a safe name (the message names the
            claim and the rule).
    """
    if token is None:
        raise TenantRefusedError(claim, f"this server serves one store per token claim '{claim}', and the request "
                                        "carries no bearer token")
    claims = token.claims or {}
    value = claims.get(claim, token.subject if claim == "sub" else None)
    if value is None:
        raise TenantRefusedError(claim, f"the token has no '{claim}' claim, which chooses the store on this server: "
                                        f"ask the issuer for a token that carries one")
    if not isinstance(value, str) or not SAFE_NAME.fullmatch(value):
        shown = repr(value)[:_SHOWN] + ("..." if len(repr(value)) > _SHOWN else "")
        raise TenantRefusedError(claim, f"the token's '{claim}' claim is {shown}, which cannot name a store: it must "
                                        "be 1 to 58 lowercase letters, digits, '_' or '-', starting with a letter or "
                                        "digit")
    return value


@dataclass(frozen=True, slots=True)
class StoreTemplate:
    """Where each tenant's store is: a folder or a PostgreSQL URL holding ``{tenant}`` (``parse`` makes one).

    Attributes:
        text: The template, a folder's made absolute (``~`` expanded, a relative one against the working directory).
        base: For a folder, the folder every tenant's store lies in (what is left before ``{tenant}``); ``None``
            for a URL.
    """

    text: str
    base: Path | None

    @classmethod
    def parse(cls, text: str) -> StoreTemplate:
        """Check a ``--store`` template and make a folder's absolute.

        Args:
            text: The template.

        Returns:
            The template.

        Raises:
            ValueError: It holds no ``{tenant}``, holds other braces, or is a relative folder where the working
                directory cannot be what was meant (``binding.locate_store``'s rule).
        """
        if TENANT_FIELD not in text:
            raise ValueError(f"--store with --store-per must hold {TENANT_FIELD} where the claim's value goes "
                             f"(e.g. /srv/mnem/{TENANT_FIELD}), got {text!r}")
        if {"{", "}"} & set(text.replace(TENANT_FIELD, "")):
            raise ValueError(f"--store's template may hold {TENANT_FIELD} and no other braces, got {text!r}")
        located = locate_store(text)  # the template as a path or URL: braces are only characters to it
        if located.refused is not None:
            raise ValueError(located.refused)
        if isinstance(located.path, mnem_bridge.StoreUrl):
            return cls(text, None)
        folder = os.path.abspath(os.path.expanduser(text))
        head = folder.split(TENANT_FIELD)[0]  # /srv/mnem/ of /srv/mnem/{tenant}; /srv/mnem/t- of /srv/mnem/t-{tenant}
        return cls(folder, Path(head) if head.endswith(os.sep) else Path(head).parent)

    def fill(self, tenant: str) -> Path | mnem_bridge.StoreUrl:
        """The store of one tenant.

        Args:
            tenant: A safe name (``tenant_of``).

        Returns:
            Its folder (inside ``base``) or URL.

        Raises:
            ValueError: The folder is not inside ``base`` (which a safe name cannot cause: a check in depth).
        """
        where = mnem_bridge.store_address(self.text.replace(TENANT_FIELD, tenant))
        if isinstance(where, Path) and self.base is not None and not Path(os.path.normpath(where)).is_relative_to(
                self.base):
            raise ValueError(f"the store of {tenant!r} would be {where}, outside {self.base}")
        return where

    def __str__(self) -> str:
        """The template as a log shows it: a URL without its password."""
        if self.base is not None:
            return self.text
        return str(mnem_bridge.StoreUrl.parse(self.text)).replace(quote(TENANT_FIELD), TENANT_FIELD)


class TenantBinding(StoreBinding):
    """One tenant's store, with its own ``mnem`` worker; its calls run on a thread of its own, one at a time.

    Made by ``StoreRouter``, which it tells when a call begins and ends, so
    that the router closes the worker of a binding it no longer keeps only
    once no call is running on it.

    Args:
        router: The router that keeps it.
        tenant: The claim's value.
        path: Its store.
        binary: The ``mnem`` to run.
        timeout: Seconds one ``mnem`` invocation may take.
        create: Create a PostgreSQL store that does not exist yet.
    """

    def __init__(self, router: StoreRouter, tenant: str, path: Path | mnem_bridge.StoreUrl, binary: str | None,
                 timeout: float, *, create: bool) -> None:
        super().__init__(path, binary, timeout, create=create, origin="--store")
        self.router = router
        self.tenant = tenant
        self.calls = 0  # calls running (and start-up's preparation): it is closed only at 0, under the router's lock
        self._limiter: anyio.CapacityLimiter | None = None

    def __repr__(self) -> str:
        return f"TenantBinding(tenant={self.tenant!r}, path={str(self.path)!r})"

    async def call(self, fn: Callable[Concatenate[mnem_bridge.Store, P], T], /, *args: P.args,
                   **kwargs: P.kwargs) -> T:
        """``fn(store, *args, **kwargs)`` on this store, on a thread: other stores' calls run meanwhile.

        Returns:
            What ``fn`` returns.

        Raises:
            mnem_bridge.MnemError: No binary, no store, or the binary's own error.
        """
        import anyio
        import anyio.to_thread

        def open_and_call() -> T:
            with self._opened() as store:
                return fn(store, *args, **kwargs)

        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(1)  # one thread per store: a flood on one leaves threads for others
        self.router.began(self)
        try:
            return await anyio.to_thread.run_sync(open_and_call, limiter=self._limiter)
        finally:
            self.router.ended(self)

    @contextmanager
    def open(self) -> Iterator[mnem_bridge.Store]:
        """A store for one call, as ``StoreBinding.open``, counted as a call while it is open.

        Yields:
            The open store.

        Raises:
            mnem_bridge.MnemError: No binary, no store, or the binary's own error.
        """
        self.router.began(self)
        try:
            with self._opened() as store:
                yield store
        finally:
            self.router.ended(self)

    @contextmanager
    def _opened(self) -> Iterator[mnem_bridge.Store]:
        """``StoreBinding.open``, with a missing store's message kept to this tenant (see ``_missing``)."""
        try:
            with super().open() as store:
                yield store
        except mnem_bridge.NoStoreError as exc:
            raise self._missing(exc) from None

    def _missing(self, exc: mnem_bridge.NoStoreError) -> mnem_bridge.NoStoreError:
        """``no_store`` for this tenant, without the engine's text, which lists the stores a database holds."""
        logger.info("the store of %s %r cannot be used: %s", self.router.claim, self.tenant, exc)
        return mnem_bridge.NoStoreError(
            f"the store for {self.router.claim} {self.tenant!r} does not exist and was not created (in PostgreSQL "
            "only with mnem-mcp --create); the server's log says why")

    def prepare(self) -> None:
        """The store's first use (``settle``), then which store is served or why not, in that order.

        ``start`` runs this on a thread of its own, counted as a call.
        """
        try:
            self.settle()
        except mnem_bridge.MnemError as exc:  # every call answers it, so only logged here
            logger.warning("the store of %s %r at %s cannot be used: %s", self.router.claim, self.tenant, self.path,
                           exc)
        else:
            logger.info("serving the store of %s %r at %s", self.router.claim, self.tenant, self.path)
        finally:
            self.router.ended(self)

    def created(self, root: Path | mnem_bridge.StoreUrl) -> None:
        """Log that ``settle`` created this tenant's store."""
        logger.info("created the store of %s %r at %s", self.router.claim, self.tenant, root)


class StoreRouter:
    """Per request, the store the token maps to (see the module's docstring); tools call it as a ``StoreBinding``.

    Args:
        template: Where each tenant's store is.
        claim: The token claim whose value chooses the store.
        binary: The ``mnem`` to run (``None``: the bridge's lookup).
        timeout: Seconds one ``mnem`` invocation may take.
        create: Create a PostgreSQL store that does not exist yet (``--create``); a folder is created anyway.
        max_stores: How many stores' bindings (and workers) are kept; the least recently used beyond it is closed.

    Raises:
        ValueError: ``claim`` is not a claim name, or ``max_stores`` is below 1.
    """

    def __init__(self, template: StoreTemplate, claim: str, binary: str | None = None,
                 timeout: float = mnem_bridge.DEFAULT_TIMEOUT, *, create: bool = False,
                 max_stores: int = DEFAULT_MAX_STORES) -> None:
        if not CLAIM_NAME.fullmatch(claim):
            raise ValueError(f"--store-per names a token claim (e.g. tenant or sub), got {claim!r}")
        if max_stores < 1:
            raise ValueError(f"--max-stores must be at least 1, got {max_stores}")
        self.template = template
        self.claim = claim
        self.binary = binary
        self.timeout = timeout
        self.create = create
        self.max_stores = max_stores
        self._kept: OrderedDict[str, TenantBinding] = OrderedDict()  # least recently used first
        self._let_go: set[TenantBinding] = set()  # no longer kept, closed when their last call ends
        self._closing: list[threading.Thread] = []
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"StoreRouter(claim={self.claim!r}, template={str(self.template)!r}, max_stores={self.max_stores})"

    def __str__(self) -> str:
        """What an operator reads at start-up: the claim, where the stores are, how many workers are kept."""
        created = "each created on its first use" + (", in PostgreSQL only with --create"
                                                      if self.template.base is None and not self.create else "")
        return (f"one store per value of the token claim {self.claim!r}, at {self.template} ({created}); at most "
                f"{self.max_stores} stores' mnem workers run at once")

    def binding_for_request(self) -> TenantBinding:
        """The binding of the store the current request's token maps to (HTTP routes resolve stores by this).

        It reads the verified token the SDK's middleware set for this request
        (``get_access_token``); nothing the client sends otherwise counts.

        Returns:
            The binding, made (and its store created) on the store's first use.

        Raises:
            TenantRefusedError: The request carries no token, or its token maps to no store.
        """
        return self.binding_for(tenant_of(get_access_token(), self.claim))

    def binding_for(self, tenant: str) -> TenantBinding:
        """The binding of one tenant's store, made on first use; the least recently used beyond the bound let go.

        Args:
            tenant: A safe name (``tenant_of``).

        Returns:
            The binding.
        """
        with self._lock:
            binding = self._kept.get(tenant)
            if binding is not None:
                self._kept.move_to_end(tenant)
                return binding
            binding = TenantBinding(self, tenant, self.template.fill(tenant), self.binary, self.timeout,
                                    create=self.create)
            binding.calls = 1  # its preparation, ended by prepare()
            self._kept[tenant] = binding
            while len(self._kept) > self.max_stores:
                _, oldest = self._kept.popitem(last=False)
                self._let_go.add(oldest)
                self._close_if_idle(oldest)
        binding.start(lambda _: binding.prepare())
        return binding

    def internals(self) -> list[str]:
        """Where every tenant's store lies and the binary, which a remote client is never told (``errors.Redaction``).

        Returns:
            The folder the template puts every store in, the current request's store (``store_internals``; and
            the binary its worker runs), and ``--mnem``.  Nothing is made to find them.
        """
        found = [] if self.template.base is None else [str(self.template.base), os.path.realpath(self.template.base)]
        found += [] if self.binary is None else [self.binary, os.path.realpath(self.binary)]
        try:
            tenant = tenant_of(get_access_token(), self.claim)
        except TenantRefusedError:  # a request that maps to no store: no store of it to leave out
            return found
        with self._lock:
            binding = self._kept.get(tenant)
        return found + (store_internals(self.template.fill(tenant)) if binding is None else binding.internals())

    async def call(self, fn: Callable[Concatenate[mnem_bridge.Store, P], T], /, *args: P.args,
                   **kwargs: P.kwargs) -> T:
        """``fn(store, *args, **kwargs)`` on the current request's store (``binding_for_request``).

        Returns:
            What ``fn`` returns.

        Raises:
            TenantRefusedError: The request's token maps to no store.
            mnem_bridge.MnemError: No binary, no store, or the binary's own error.
        """
        return await self.binding_for_request().call(fn, *args, **kwargs)

    @contextmanager
    def open(self) -> Iterator[mnem_bridge.Store]:
        """The current request's store, for one call (``binding_for_request``).

        Yields:
            The open store.

        Raises:
            TenantRefusedError: The request's token maps to no store.
            mnem_bridge.MnemError: No binary, no store, or the binary's own error.
        """
        with self.binding_for_request().open() as store:
            yield store

    def began(self, binding: TenantBinding) -> None:
        """Count a call on ``binding`` (``TenantBinding`` calls it)."""
        with self._lock:
            binding.calls += 1

    def ended(self, binding: TenantBinding) -> None:
        """Count a call on ``binding`` as over, and close its worker if it was let go and this was its last."""
        with self._lock:
            binding.calls -= 1
            self._close_if_idle(binding)

    def _close_if_idle(self, binding: TenantBinding) -> None:
        """Close a binding let go with no call running, on a thread (a worker takes time to exit); under the lock."""
        if binding.calls or binding not in self._let_go:
            return
        self._let_go.discard(binding)
        logger.info("closing the worker of %s %r (more than %d stores in use)", self.claim, binding.tenant,
                    self.max_stores)
        closing = threading.Thread(target=binding.close, name="mnem-mcp-close", daemon=True)
        self._closing = [thread for thread in self._closing if thread.is_alive()] + [closing]
        closing.start()

    def workers(self) -> dict[str, int | None]:
        """Each kept store's worker process id, by tenant (``None``: none running), least recently used first."""
        with self._lock:
            kept = list(self._kept.items())
        return {tenant: binding.worker_pid() for tenant, binding in kept}

    def close(self) -> None:
        """Close every binding's worker and wait for those being closed; the router can be used again after."""
        with self._lock:
            bindings = [*self._kept.values(), *self._let_go]
            self._kept.clear()
            self._let_go.clear()
            closing, self._closing = self._closing, []
        for binding in bindings:
            binding.close()
        for thread in closing:
            thread.join()


class TenantVerifier:
    """A token verifier that also refuses a token mapping to no store: ``403 access_denied`` naming the claim.

    Refused where tokens are checked, so a token that maps to no store opens
    no route of the server, and its client learns why before any call.

    Args:
        verifier: What checks the token itself (``auth.JwtVerifier``).
        claim: The claim that chooses the store.
    """

    def __init__(self, verifier: TokenVerifier, claim: str) -> None:
        self.verifier = verifier
        self.claim = claim

    async def verify_token(self, token: str) -> AccessToken | None:
        """The inner verifier's answer, if the token also maps to a store.

        Args:
            token: The bearer token.

        Returns:
            The access token (``None`` when the inner verifier refuses it without a reason).

        Raises:
            auth.TokenRefusedError: The inner verifier's refusal, or 403 ``access_denied`` for a token that maps
                to no store.
        """
        access = await self.verifier.verify_token(token)
        if access is None:
            return None
        try:
            tenant_of(access, self.claim)
        except TenantRefusedError as exc:
            from .auth import TokenRefusedError

            logger.info("refused a bearer token: %s", exc.description)
            raise TokenRefusedError(403, TenantRefusedError.code, exc.description) from exc
        return access
