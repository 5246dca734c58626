"""Remotes through the bridge, in worker and one-shot mode, on both backends, against the real binary."""

from __future__ import annotations

from pathlib import Path

import pg_stores
import pytest
from conftest import BACKENDS, MNEM, new_store

import mnem_bridge


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mode", ["worker", "oneshot"])
def test_the_bridge_clones_fetches_pushes_and_pulls(backend: str, mode: str, tmp_path: Path) -> None:
    origin_folder = new_store(tmp_path / "origin", backend)
    with mnem_bridge.Mnem(MNEM, mode=mode) as client:
        origin = mnem_bridge.Store(pg_stores.address(origin_folder), client=client)
        origin.add("plan", "pro")
        first = origin.commit("start", author="lead")
        with mnem_bridge.clone(pg_stores.address(origin_folder), tmp_path / "copy", client=client) as copy:
            [remote] = copy.remotes()
            assert (remote.name, dict(remote.branches)) == ("origin", {"origin/main": first})
            assert copy.resolve("origin/main") == first and copy.head() == "ref: main"
            origin.add("plan", "enterprise")
            theirs = origin.commit("upgrade", author="lead")
            fetched = copy.fetch()
            assert (fetched.commits, fetched.objects) == (1, 3)
            assert fetched.branches == (mnem_bridge.MovedBranch("origin/main", first, theirs),)
            copy.add("note", "mine")
            copy.commit("mine", author="agent")
            with pytest.raises(mnem_bridge.ConflictError, match="force-with-lease"):
                copy.push()
            pulled = copy.pull()
            assert pulled.merge.ok and pulled.fetched.commits == 0
            pushed = copy.push()
            assert (pushed.status, pushed.new, pushed.commits) == ("fast-forwarded", copy.head_commit(), 2)
            assert origin.head_commit() == copy.head_commit()
            with pytest.raises(mnem_bridge.NotFoundError, match="mnem remote add nowhere URL"):
                copy.fetch("nowhere")
            with pytest.raises(mnem_bridge.InvalidRefError):
                copy.remote_add("a/b", tmp_path)
            assert copy.remote_add("mirror", origin_folder if backend == "sqlite" else
                                   pg_stores.address(origin_folder)).name == "mirror"
            assert copy.remote_remove("mirror").name == "mirror"
            assert [r.name for r in copy.remotes()] == ["origin"]
            with pytest.raises(mnem_bridge.UsageError, match="PGPASSWORD"):
                copy.remote_add("secret", "postgresql://u:pw@h/db?store=x")


@pytest.mark.parametrize("mode", ["worker", "oneshot"])
def test_the_serving_verbs_move_history_between_two_stores_as_an_http_server_uses_them(
        mode: str, tmp_path: Path) -> None:
    with mnem_bridge.Mnem(MNEM, mode=mode) as client:
        src = mnem_bridge.Store(new_store(tmp_path / "src", "sqlite"), client=client)
        dst = mnem_bridge.Store(pg_stores.address(new_store(tmp_path / "dst", "postgresql")), client=client)
        src.add("plan", "pro")
        first = src.commit("start", author="lead")
        src.add("plan", "enterprise")
        second = src.commit("upgrade", author="lead")
        advert = src.advertise()
        assert advert == {"format": 1, "head": "ref: main", "branches": {"main": second}, "redactions": []}
        pack = src.upload_pack([second], [])
        assert dst.receive_pack(pack, "main", None, second) == {
            "branch": "main", "old": None, "new": second, "status": "created", "commits": 2, "objects": 6,
            "redactions": 0}
        assert dst.log() == src.log() and dst.head_commit() == second
        assert src.upload_pack([second], [first]) != pack  # only the difference
        with pytest.raises(mnem_bridge.ConflictError, match="fetch, then push again"):
            dst.receive_pack(src.upload_pack([first], [first]), "main", first, second)  # main is elsewhere
        with pytest.raises(mnem_bridge.CorruptStoreError, match="nothing was written"):
            dst.receive_pack(b"\xa1garbage", "side", None, second)
        with pytest.raises(mnem_bridge.UsageError, match="full commit ids"):
            src.upload_pack(["abc"], [])
        with pytest.raises(mnem_bridge.NotFoundError, match="fetch again"):
            src.upload_pack(["00" * 32], [])
        assert dst.branches() == [("main", second)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_redaction_reaches_a_clone_through_the_bridges_fetch_and_push(backend: str, tmp_path: Path) -> None:
    """``Fetched.redactions`` and ``Pushed.redactions`` count the records a transfer applied (docs/remotes.md)."""
    origin_folder = new_store(tmp_path / "origin", backend)
    with mnem_bridge.Mnem(MNEM) as client:
        origin = mnem_bridge.Store(pg_stores.address(origin_folder), client=client)
        origin.add("token", "sk-live-0000")
        origin.commit("key", author="agent")
        with mnem_bridge.clone(pg_stores.address(origin_folder), tmp_path / "copy", client=client) as copy, \
                mnem_bridge.clone(pg_stores.address(origin_folder), tmp_path / "other", client=client) as other:
            origin.redact(nodes=["token"], reason="leaked", by="dpo")
            fetched = copy.fetch()
            assert (fetched.commits, fetched.redactions, fetched.residue) == (0, 1, None)
            assert [record.reason for record in copy.redactions()] == ["leaked"]
            other.redact(nodes=["token"], reason="also leaked", by="ann")
            pushed = other.push()
            assert (pushed.status, pushed.redactions) == ("up-to-date", 0)  # origin keeps its first record
            assert [record.reason for record in origin.redactions()] == ["leaked"]
