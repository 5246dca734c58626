"""What only the PostgreSQL backend has: URLs and passwords, many stores in one database, writers that lock one
branch, and connections the server ends at any moment.

Everything else (every command, on every input) runs on both backends through the ``store`` fixture.
"""

from __future__ import annotations

import json
import os
import random
import select
import subprocess
from pathlib import Path

import killpoints
import pg_stores
import pytest
from conftest import MNEM, new_store, run_mnem
from manual_clock import eventually
from mcp_support import call, connect
from mnem_history import export, ok, write

import mnem_bridge
from mnem_store.layout import StoreUrl

SECRET = "s3cret-Pa55"


@pytest.fixture(scope="session")
def password_role() -> str:
    """A role that must give its password (scram) over the socket: the server trusts every other role.

    Made if missing, else kept: pytest may set this fixture up again in one process (a worker given this
    module's tests apart, ``--dist worksteal``), and by then the role owns the first test's store.
    """
    admin = pg_stores.server_uri()
    import psycopg

    with psycopg.connect(admin, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = 'mnem_pw'").fetchone() is None:
            conn.execute(f"CREATE ROLE mnem_pw LOGIN PASSWORD '{SECRET}'")
        conn.execute("GRANT CREATE ON DATABASE postgres TO mnem_pw")
        hba = Path(conn.execute("SHOW hba_file").fetchone()[0])
        rules = hba.read_text()
        if "mnem_pw" not in rules:
            hba.write_text("local all mnem_pw scram-sha-256\n" + rules)
        conn.execute("SELECT pg_reload_conf()")
    socket = admin.split("host=", 1)[1].split("&", 1)[0]
    return f"postgresql://mnem_pw@/postgres?host={socket}"


def test_a_password_is_used_but_never_shown(password_role: str, tmp_path: Path) -> None:
    with_password = password_role.replace("mnem_pw@", f"mnem_pw:{SECRET}@") + "&store=pw1"
    refused = run_mnem("--json", "init", password_role + "&store=pw1", env={"PGPASSWORD": ""})
    assert refused.code != 0 and refused.json["error"]["code"] == "store_io"  # the password is really required
    created = run_mnem("init", with_password)
    assert created.code == 0, created.err
    assert SECRET not in created.out + created.err
    assert created.out == f"Initialised an empty Mnemosyne store in {password_role}&store=pw1\n"
    parsed = StoreUrl.parse(with_password)
    assert SECRET in parsed.conninfo and SECRET not in repr(parsed) + parsed.shown  # a log of the engine's value
    failed = run_mnem("--json", "checkout", "nowhere", "-C", with_password)
    assert failed.code == 1 and SECRET not in failed.out + failed.err

    echoed: list[str] = []
    with mnem_bridge.open(with_password) as store:
        mnem_bridge.agents.remember(store, "fact", "kept")
        echoed.append(store._client.last_command or "")
        assert SECRET not in repr(store) + str(store.root)
        with pytest.raises(mnem_bridge.InvalidRefError) as caught:
            store.checkout("nowhere")
        echoed.append(caught.value.command or "")
    assert echoed[0].startswith(f"{MNEM} -C '{password_role}&store=pw1' --json ")
    assert not any(SECRET in line for line in echoed)
    # The echoed line reruns by hand with the password from the environment, as the bridge gave it.
    again = run_mnem("--json", "show", "--node", "fact", "-C", f"{password_role}&store=pw1",
                     env={"PGPASSWORD": SECRET})
    assert again.code == 0 and again.json["content"] == "kept"


def test_many_stores_share_one_database_and_never_mix(tmp_path: Path) -> None:
    one = new_store(tmp_path / "one", "postgresql")
    two = new_store(tmp_path / "two", "postgresql")
    write(one, "in one", 1, {"fact": "one"})
    write(two, "in two", 2, {"fact": "two"})
    assert ok("--json", "show", cwd=one).json["fact"]["content"] == "one"
    assert ok("--json", "show", cwd=two).json["fact"]["content"] == "two"
    assert [c["message"] for c in ok("--json", "log", cwd=two).json] == ["in two"]


def test_a_schema_1_store_gains_the_lease_and_vector_tables_once(tmp_path: Path) -> None:
    store = new_store(tmp_path / "old", "postgresql")
    write(store, "before", 1000, {"fact": "kept"})
    pg_stores.downgrade(store, ("leases", "vectors", "pushes", "pushed_commits"), 1)
    assert ok("--json", "ls", "--live", cwd=store).json == ["fact"]
    assert pg_stores.schema_version(store) == "4"
    with pg_stores.connect(pg_stores.url_of(store)) as conn:
        assert conn.execute("SELECT count(*) FROM leases").fetchone() == (0,)
    assert ok("verify", cwd=store).code == 0


def build_history(store: Path) -> None:
    """Branches, a merge, a deletion and a node id with odd characters."""
    write(store, "root", 1000, {"plan": "basic", "owner": "ann", "odd id/ü ✓": {"nested": [1, 2.5, None]}})
    ok("branch", "side", cwd=store)
    ok("checkout", "side", cwd=store)
    write(store, "side", 2000, {"seats": 40}, delete=["owner"])
    ok("checkout", "main", cwd=store)
    write(store, "main", 3000, {"plan": "pro"})
    ok("merge", "side", "--time", "4000", cwd=store)
    write(store, "after", 5000, {"plan": "enterprise"})


@pytest.mark.parametrize(("source", "target"), [("postgresql", "sqlite"), ("sqlite", "postgresql")])
def test_an_export_moves_between_backends_with_identical_ids(source: str, target: str, tmp_path: Path) -> None:
    original = new_store(tmp_path / "original", source)
    build_history(original)
    exported = export(original)
    (tmp_path / "export.json").write_text(exported)
    destination = pg_stores.new_url() if target == "postgresql" else str(tmp_path / "moved")
    ok("import", str(tmp_path / "export.json"), destination, cwd=tmp_path)
    moved = pg_stores.register(tmp_path / "moved", destination) if target == "postgresql" else tmp_path / "moved"
    assert export(moved) == exported  # byte for byte: every id, ref and HEAD
    assert ok("--json", "verify", cwd=moved).json["objects"] == json.loads(exported)["objects"].__len__()
    assert ok("blame", "plan", cwd=moved).out == ok("blame", "plan", cwd=original).out


def branch_lock(store: Path, branch: str) -> object:
    """An outside transaction holding the engine's lock on one branch of a PostgreSQL store (as a writer would)."""
    import psycopg

    url = pg_stores.url_of(store)
    assert url is not None
    conn = psycopg.connect(url.rsplit("&store=", 1)[0], autocommit=False)
    conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"{pg_stores.schema(url)}/ref:{branch}",))
    return conn


def blocked_by(holder: object) -> bool:
    """Whether a server session waits for a lock ``holder`` (a connection) holds: a writer queued behind it."""
    import psycopg

    pid = holder.info.backend_pid  # type: ignore[attr-defined]
    with psycopg.connect(pg_stores.server_uri(), autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE %s = ANY(pg_blocking_pids(pid))", (pid,))
        return bool(row.fetchone()[0])  # type: ignore[index]


def test_writers_wait_only_for_their_own_branch_and_readers_never_wait(tmp_path: Path) -> None:
    """A writer on a locked branch queues until the lock goes (or gives up ``busy``); readers and other branches go on.

    The queued writer is seen waiting on the server (``pg_blocking_pids``),
    not timed, so a loaded machine changes nothing.
    """
    store = new_store(tmp_path / "store", "postgresql")
    write(store, "root", 1, {"a": 1})
    ok("branch", "side", cwd=store)
    held = branch_lock(store, "main")
    try:
        busy = run_mnem("--json", "write", "-m", "blocked", input='{"put": [{"id": "b", "content": 2}]}',
                        cwd=store, env={"MNEM_BUSY_TIMEOUT_MS": "1000"})
        assert busy.code != 0 and busy.json["error"]["code"] == "busy", busy.out
        assert [c["message"] for c in ok("--json", "log", cwd=store).json] == ["root"]  # a reader does not wait
        ok("checkout", "side", cwd=store)  # HEAD is not behind the branch lock
        other = ok("--json", "write", "-m", "on side", input='{"put": [{"id": "c", "content": 3}]}', cwd=store,
                   env={"MNEM_BUSY_TIMEOUT_MS": "1000"})
        assert other.json["commit"]["message"] == "on side"
    finally:
        held.close()  # type: ignore[attr-defined]
    ok("checkout", "main", cwd=store)  # moving HEAD onto main takes main's lock too
    held = branch_lock(store, "main")
    try:
        payload = tmp_path / "payload.json"
        payload.write_text('{"put": [{"id": "b", "content": 2}]}')
        queued = subprocess.Popen(
            [MNEM, "--json", "write", "-m", "unblocked", "--file", str(payload)], stdout=subprocess.PIPE,
            env={**os.environ, "MNEM_STORE": pg_stores.address(store), "MNEM_BUSY_TIMEOUT_MS": "600000"},
        )
        eventually(lambda: blocked_by(held), "the write queued behind the branch lock")
    finally:
        held.close()  # type: ignore[attr-defined]
    out, _ = queued.communicate(timeout=60)
    assert queued.returncode == 0 and json.loads(out)["commit"]["message"] == "unblocked", out
    assert [c["message"] for c in ok("--json", "log", cwd=store).json] == ["unblocked", "root"]


def terminate_mnem_sessions() -> int:
    """End every server session the engine opened (``application_name`` mnem), as an operator or failover would."""
    import psycopg

    with psycopg.connect(pg_stores.server_uri(), autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'mnem' "
            "AND pid <> pg_backend_pid()"
        ).fetchall()
    return len(rows)


def request(worker: subprocess.Popen[bytes], argv: list[str], stdin: str | None = None) -> dict[str, object]:
    assert worker.stdin is not None and worker.stdout is not None
    worker.stdin.write(json.dumps({"argv": argv, "stdin": stdin}).encode() + b"\n")
    worker.stdin.flush()
    answer: dict[str, object] = json.loads(worker.stdout.readline())
    return answer


def test_a_worker_replaces_a_pooled_connection_the_server_ended(tmp_path: Path) -> None:
    store = new_store(tmp_path / "store", "postgresql")
    url = pg_stores.address(store)
    worker = subprocess.Popen([MNEM, "serve", "--stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert request(worker, ["-C", url, "--json", "log"])["exit"] == 0
        assert terminate_mnem_sessions() >= 1
        answer = request(worker, ["-C", url, "--json", "write", "-m", "after"], '{"put": [{"id": "a", "content": 1}]}')
        assert answer["exit"] == 0, answer
    finally:
        assert worker.stdin is not None
        worker.stdin.close()
        worker.wait(timeout=30)
    assert [c["message"] for c in ok("--json", "log", cwd=store).json] == ["after"]


#: The writes one worker makes while its sessions are ended, and how many times they are ended.
WRITES, ENDS = 150, 60


def write_request(url: str, n: int) -> bytes:
    """A worker's request line: write ``n``, a commit of three nodes (a half-made one would show as fewer)."""
    payload = json.dumps({"put": [{"id": f"n{n}-{part}", "content": part} for part in range(3)]})
    return json.dumps({"argv": ["-C", url, "--json", "write", "-m", f"w{n}"], "stdin": payload}).encode() + b"\n"


def test_sessions_ended_at_chosen_steps_leave_whole_commits_and_every_acknowledged_write(tmp_path: Path) -> None:
    """A worker's sessions are ended at seeded steps of its run (``killpoints``): it stops there, they end, it runs on.

    The steps are drawn from a whole run of the same writes on another store, three quarters of them from the
    first write's body to the last's, so many ends fall inside a commit's transaction.
    """
    scratch = pg_stores.address(new_store(tmp_path / "scratch", "postgresql"))
    run = killpoints.measure(["serve", "--stdio"], b"".join(write_request(scratch, n) for n in range(WRITES)))
    stops = killpoints.aimed(run, ENDS, random.Random(14))
    store = new_store(tmp_path / "store", "postgresql")
    url = pg_stores.address(store)
    report, reported = os.pipe()
    resumed, resume = os.pipe()
    worker = subprocess.Popen(killpoints.argv(stops, reported, ["serve", "--stdio"], resume=resumed),
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, pass_fds=(reported, resumed))
    os.close(reported)
    os.close(resumed)
    assert worker.stdin is not None and worker.stdout is not None
    acknowledged, refused, ended, inside = set(), 0, 0, 0
    try:
        for n in range(WRITES):
            worker.stdin.write(write_request(url, n))
            worker.stdin.flush()
            while True:
                ready, _, _ = select.select([report, worker.stdout], [], [], killpoints.HANG)
                assert ready, "the worker neither answered nor reached a stop point"
                if report not in ready:
                    break
                stopped = killpoints.said(report)
                assert stopped.stopped, stopped
                ended += terminate_mnem_sessions()  # while the worker waits at its step
                inside += stopped.inside
                os.write(resume, b"g")
            answer = json.loads(worker.stdout.readline())
            if answer["exit"] == 0:
                acknowledged.add(json.loads(str(answer["stdout"]))["commit"]["id"])
            else:
                error = json.loads(str(answer["stdout"]))["error"]
                assert error["code"] in ("store_io", "busy"), error
                refused += 1
    finally:
        worker.stdin.close()
        # A step drawn past the last write's answer (``aimed`` draws a few up to a quarter past the run's end)
        # falls in the worker's shut-down, where it waits to be resumed like any other.
        while killpoints.said(report).stopped:
            os.write(resume, b"g")
        worker.wait(timeout=killpoints.HANG)
        os.close(report)
        os.close(resume)
    assert ended > 10 and inside > 10 and refused > 0  # sessions really ended, many of them mid-commit
    assert ok("--json", "verify", cwd=store).json["refs"] == 1
    log = ok("--json", "log", "--first-parent", cwd=store).json
    assert acknowledged <= {c["id"] for c in log}
    groups: dict[str, set[str]] = {}
    for node_id in ok("--json", "show", cwd=store).json:
        groups.setdefault(node_id.split("-")[0], set()).add(node_id)
    assert all(len(parts) == 3 for parts in groups.values())  # no half-commit
    assert len(groups) == len(log)


def test_a_missing_store_a_bad_name_and_no_server_each_say_what_to_do(tmp_path: Path) -> None:
    missing = pg_stores.new_url()
    result = run_mnem("--json", "log", "-C", missing)
    assert result.json["error"]["code"] == "no_store"
    shown = missing.replace("postgres:@", "postgres@")  # the URL as printed: its (empty) password cut out
    assert f"to create this one, run `mnem init '{shown}'`" in result.json["error"]["message"]
    bad = run_mnem("--json", "log", "-C", missing.rsplit("store=", 1)[0] + "store=no%20spaces")
    assert bad.json["error"]["code"] == "usage" and "store name" in bad.json["error"]["message"]
    # With an hour to wait for a busy store, an answer at all shows no server is not waited for as a busy one:
    # run_mnem would give up first.
    gone = run_mnem("--json", "log", "-C", f"postgresql://postgres@/postgres?host={tmp_path}&store=x",
                    env={"MNEM_BUSY_TIMEOUT_MS": "3600000"})
    message = gone.json["error"]["message"]
    assert gone.json["error"]["code"] == "store_io"
    assert f"cannot connect to PostgreSQL at the unix socket {tmp_path}/.s.PGSQL.5432" in message
    assert "start the server, or check the host and port in the store URL" in message


def test_a_typo_in_the_store_name_creates_nothing_and_names_the_stores_there(tmp_path: Path) -> None:
    real = new_store(tmp_path / "real", "postgresql")
    url = pg_stores.address(real)
    typo = url + "x"
    with pg_stores.connect(url) as conn:
        schemas_before = conn.execute("SELECT count(*) FROM pg_namespace").fetchone()
    refused = run_mnem("--json", "log", "-C", typo)
    error = refused.json["error"]
    assert error["code"] == "no_store"
    assert url.rsplit("store=", 1)[1] in error["stores"] and typo.rsplit("store=", 1)[1] not in error["stores"]
    assert "that database holds the stores " in error["message"] and "fix store= in the URL" in error["message"]
    assert "`mnem-mcp --create`" in error["message"] and "MnemosyneStore(url, create=True)" in error["message"]
    with pytest.raises(mnem_bridge.NoStoreError) as caught, mnem_bridge.open(typo) as store:
        store.head()
    assert "holds the stores" in str(caught.value)
    with pg_stores.connect(url) as conn:
        assert conn.execute("SELECT count(*) FROM pg_namespace").fetchone() == schemas_before  # nothing created


@pytest.mark.anyio
async def test_mnem_mcp_takes_the_password_from_pgpassword_in_its_env(password_role: str) -> None:
    """docs/postgres.md's MCP client config: the URL without the password, ``PGPASSWORD`` in the server's env."""
    url = password_role + "&store=pw_mcp"
    assert run_mnem("init", url, env={"PGPASSWORD": SECRET}).code == 0
    async with connect("stdio", url, env={"PGPASSWORD": SECRET}) as client:
        assert (await call(client, "remember", id="plan", content="pro"))["commit"]
    async with connect("stdio", url, env={"PGPASSWORD": "wrong"}) as client:
        text = (await client.call_tool("history", {})).content[0].text
    assert text.startswith("store_io: cannot connect to PostgreSQL at the unix socket "), text
    assert "PGPASSWORD" in text and SECRET not in text and "wrong" not in text
