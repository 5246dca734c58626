"""A mnem-mcp HTTP server as a remote: the real ``mnem`` pushing, cloning and fetching over HTTP with real tokens.

The server runs ``--auth jwt`` against the development issuer, so every
request carries a token minted the way any issuer mints one (``MNEM_TOKEN``),
and the served store is a plain folder that the tests also read directly.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cbor2
import httpx2
import pg_stores
import pytest
from conftest import new_store, run_mnem, store_fingerprint
from http_support import HttpServer, Issuer, free_port, served_with_jwt
from mnem_history import ok, write


class Hub:
    """The module's issuer and its HTTP server over one (initially empty) store."""

    def __init__(self, store: Path, issuer: Issuer, server: HttpServer) -> None:
        self.store, self.issuer, self.server = store, issuer, server

    def env(self, scope: str | None = "mnem:read mnem:write", sub: str = "alice@example.com") -> dict[str, str]:
        """The environment of a ``mnem`` that sends a token with ``scope`` (``None``: no token)."""
        return {} if scope is None else {"MNEM_TOKEN": self.issuer.mint(sub, scope=scope)}


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    store = new_store(tmp_path_factory.mktemp("hub") / "store", "sqlite")
    with served_with_jwt(store) as (issuer, server):
        yield Hub(store, issuer, server)


def refused(cwd: Path, *args: str, env: dict[str, str]) -> dict[str, Any]:
    """Run ``mnem --json ARGS`` expecting an error; the error document."""
    result = run_mnem("--json", *args, cwd=cwd, env=env)
    assert result.code != 0, (args, result.out)
    assert "Traceback" not in result.err
    error: dict[str, Any] = json.loads(result.out)["error"]
    return error


def portable(store: Path) -> dict[str, Any]:
    """HEAD, refs and every object of a store's export: equal for stores with identical ids."""
    doc = json.loads(ok("export", cwd=store).out)
    return {key: doc[key] for key in ("head", "refs", "objects")}


def test_pushed_to_http_then_cloned_to_a_folder_and_postgresql_the_ids_are_identical(hub: Hub, tmp_path: Path) -> None:
    source = new_store(tmp_path / "source", "sqlite")
    write(source, "one", 1000, {"a": "1", "b": {"deep": [1, 2]}})
    write(source, "two", 2000, {"a": "2"}, delete=["b"])
    ok("remote", "add", "hub", hub.server.url, cwd=source)
    pushed = ok("--json", "push", "hub", "main", cwd=source, env=hub.env()).json
    assert (pushed["status"], pushed["commits"]) == ("created", 2)
    back = tmp_path / "back"
    cloned = ok("--json", "clone", hub.server.url, str(back), cwd=tmp_path, env=hub.env("mnem:read")).json
    assert (cloned["commits"], cloned["head"]) == (2, "ref: main")
    url = pg_stores.new_url()
    ok("clone", hub.server.url, url, cwd=tmp_path, env=hub.env("mnem:read"))
    on_pg = pg_stores.register(tmp_path / "pg", url)
    assert portable(source) == portable(back) == portable(hub.store) == portable(on_pg)
    ok("verify", cwd=back)
    ok("verify", cwd=on_pg)
    assert ok("--json", "remote", "list", cwd=back).json[0]["url"] == hub.server.url

    # the hub moves on (another agent pushes), the first store fetches only the difference
    write(back, "three", 3000, {"c": "3"})
    write(back, "four", 4000, {"d": "4"})
    assert ok("--json", "push", cwd=back, env=hub.env()).json["status"] == "fast-forwarded"
    fetched = ok("--json", "fetch", "hub", cwd=source, env=hub.env("mnem:read")).json
    assert (fetched["commits"], fetched["branches"][0]["name"]) == (2, "hub/main")
    assert ok("resolve", "hub/main", cwd=source).out == ok("resolve", "main", cwd=back).out

    # diverged: a plain push is refused with conflict and the hub is unchanged; pull merges, then push succeeds
    write(source, "mine", 5000, {"e": "5"})
    ok("--json", "merge", "hub/main", cwd=source)
    write(back, "theirs", 6000, {"f": "6"})
    ok("push", cwd=back, env=hub.env())
    before = store_fingerprint(hub.store)
    error = refused(source, "push", "hub", "main", env=hub.env())
    assert error["code"] == "conflict" and "mnem pull hub main" in error["message"]
    assert store_fingerprint(hub.store) == before
    ok("pull", "hub", "main", cwd=source, env=hub.env())
    assert ok("--json", "push", "hub", "main", cwd=source, env=hub.env()).json["status"] == "fast-forwarded"
    ok("verify", cwd=hub.store)


def test_a_token_without_the_write_scope_cannot_push_and_no_token_cannot_read(hub: Hub, tmp_path: Path) -> None:
    source = new_store(tmp_path / "source", "sqlite")
    write(source, "one", 1000, {"x": "1"})
    ok("branch", "read-only-try", cwd=source)
    ok("remote", "add", "hub", hub.server.url, cwd=source)
    before = store_fingerprint(hub.store)
    error = refused(source, "push", "hub", "read-only-try", env=hub.env("mnem:read"))
    assert error["code"] == "usage" and "MNEM_TOKEN" in error["message"] and "mnem:write" in error["message"]
    error = refused(source, "fetch", "hub", env=hub.env(None))
    assert error["code"] == "usage" and "MNEM_TOKEN" in error["message"]
    error = refused(source, "fetch", "hub", env={"MNEM_TOKEN": "not-a-token"})
    assert error["code"] == "usage"
    assert store_fingerprint(hub.store) == before


def test_a_corrupt_or_foreign_pack_is_refused_and_nothing_is_written(hub: Hub, tmp_path: Path) -> None:
    token = hub.issuer.mint(scope="mnem:read mnem:write")
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/cbor"}
    url = f"{hub.server.url}/sync/receive?branch=intruder&old=&new={'ab' * 32}&force=0"
    before = store_fingerprint(hub.store)
    for body, code in [(b"\xa1garbage", "corrupt_store"),
                       (cbor2.dumps({"pack": 1, "format": 99, "commits": [], "nodes": []}), "format_version"),
                       (cbor2.dumps({"pack": 1, "format": 1, "commits": [[b"\x00" * 8, []]], "nodes": []}),
                        "corrupt_store"),
                       # a valid pack that lacks the commit the push names: the branch would point at nothing
                       (cbor2.dumps({"pack": 1, "format": 1, "commits": [], "nodes": []}), "corrupt_store")]:
        answer = httpx2.post(url, content=body, headers=headers, timeout=30)
        assert answer.json()["error"]["code"] == code, answer.text
        assert answer.status_code == 422
    assert store_fingerprint(hub.store) == before


def test_an_unreachable_remote_is_store_io_naming_the_url(tmp_path: Path) -> None:
    source = new_store(tmp_path / "source", "sqlite")
    url = f"http://127.0.0.1:{free_port()}/mcp"
    ok("remote", "add", "gone", url, cwd=source)
    error = refused(source, "fetch", "gone", env={})
    assert error["code"] == "store_io" and url in error["message"]
    error = refused(source, "remote", "add", "bad", "http://user:secret@127.0.0.1/mcp", env={})
    assert error["code"] == "usage" and "MNEM_TOKEN" in error["message"]
    error = refused(tmp_path, "clone", str(source), url, env={})
    assert error["code"] == "usage" and "mnem push hub main" in error["message"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["source"]


def test_with_a_store_per_tenant_each_token_pushes_to_and_clones_from_its_own_store(tmp_path: Path) -> None:
    from test_http_tenants import tenant_server

    with tenant_server(tmp_path) as tenants:
        clones = {}
        for tenant in ("acme", "globex"):
            local = new_store(tmp_path / f"local-{tenant}", "sqlite")
            write(local, f"{tenant} start", 1000, {"owner": tenant})
            ok("remote", "add", "hub", tenants.server.url, cwd=local)
            env = {"MNEM_TOKEN": tenants.token(tenant, sub=f"agent@{tenant}")}
            assert ok("--json", "push", "hub", "main", cwd=local, env=env).json["status"] == "created"
            clones[tenant] = tmp_path / f"clone-{tenant}"
            ok("clone", tenants.server.url, str(clones[tenant]), cwd=tmp_path, env=env)
            assert portable(clones[tenant]) == portable(local) == portable(tenants.stores / tenant)
        for tenant, other in (("acme", "globex"), ("globex", "acme")):
            assert tenants.memory(tenant)["owner"]["content"] == tenant
            assert ok("--json", "show", cwd=clones[tenant]).json["owner"]["content"] == tenant
            # a ?store= or a header naming the other tenant changes nothing: the token decides
            answer = httpx2.get(f"{tenants.server.url}/sync/refs?store={other}", timeout=30, headers={
                "Authorization": f"Bearer {tenants.token(tenant)}", "X-Tenant": other, "Mcp-Store": other})
            assert answer.json()["branches"] == {"main": ok("resolve", "main", cwd=clones[tenant]).out.strip()}
        refused_tenant = httpx2.get(f"{tenants.server.url}/sync/refs", timeout=30,
                                    headers={"Authorization": f"Bearer {tenants.token('../acme')}"})
        assert refused_tenant.status_code == 403 and "tenant" in refused_tenant.json()["error_description"]
        local = tmp_path / "local-acme"
        error = refused(local, "fetch", "hub", env={"MNEM_TOKEN": tenants.token("../acme")})
        assert error["code"] == "usage" and "MNEM_TOKEN" in error["message"] and "tenant" in error["message"]
