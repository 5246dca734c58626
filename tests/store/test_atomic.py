"""Commands that must be atomic under SIGKILL and on a full disk, and stores that must stay readable read-only.

A. ``init``, ``checkout -b``, ``branch``, ``export -o`` and ``import`` are killed with SIGKILL, 200 times each
   (``checkout -b`` as many as it takes to kill at every step of its transaction, about 400), at steps of
   their own run (``killpoints``), not at moments: three quarters at the steps of the command's work (every
   one of them when they are fewer), the rest anywhere from start-up to a quarter past the end.  After every
   kill the store (if any) opens, verifies, and HEAD names a branch that exists; an export file is one of the
   two whole exports; a store that ``init`` or ``import`` did not finish is absent and the same command then
   succeeds.  Temporary leftovers must be cleaned by the next finished run of the same command.
B. The same commands on a small tmpfs filled to the last byte: a typed ``store_io`` error, nothing changed,
   nothing left behind, and the command works once there is space again.
C. A store on a read-only file system or behind a read-only bind mount: every read answers as on the writable
   store; every write is refused with a ``store_io`` error that says the store is read-only.

Mounting needs root, which CI and developers are here.  Every mount is undone by the ``mounts`` fixture.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import random
import shutil
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Self

import killpoints
import orjson
import pytest
from conftest import MNEM, Run, run_mnem, store_fingerprint

KILLS = 200  # per command
LANES = 2  # killed commands running at once, each on its own store (the machine has 2 cores)
PAGE = os.sysconf("SC_PAGE_SIZE")  # tmpfs hands out space a page at a time
LADDER = 96  # full-disk probes: 0, 1, 2, ... pages free, until the command succeeds
SQLITE_SIDECARS = ("-wal", "-shm", "-journal")  # SQLite's own files: come and go with connections


# ----------------------------------------------------------------------------- helpers


def entries(top: Path) -> set[str]:
    """Every file and folder under ``top`` as relative paths, SQLite's journal files left out (empty if absent)."""
    return {p.relative_to(top).as_posix() for p in top.rglob("*") if not p.name.endswith(SQLITE_SIDECARS)}


def under(prefix: str, names: set[str]) -> set[str]:
    return {prefix} | {f"{prefix}/{name}" for name in names}


def no_traceback(result: Run) -> None:
    assert "Traceback" not in result.out + result.err, result.out + result.err


def assert_store_io(result: Run, what: str) -> None:
    """A typed storage error: exit 1, ``store_io``, not a bug caught by the last-resort handler."""
    no_traceback(result)
    assert result.code == 1, f"{what}: exit {result.code}: {result.out}{result.err}"
    error = result.json["error"]
    assert error["code"] == "store_io", f"{what}: {error}"
    assert "internal error" not in error["message"], f"{what}: an untyped failure: {error['message']}"


class Checker:
    """A ``mnem serve --stdio`` worker that runs the checks after each kill (and the read-only tests' commands).

    A request goes through the same ``invoke`` as a one-shot ``mnem`` and opens a
    store it has not seen as a one-shot process does, without paying ~80 ms of
    process start: that is what lets every one of the 1,100 kills be checked within
    the file's time budget.  The worker keeps stores open, so it is only ever
    pointed at stores no killed command touches again: a copy taken after the
    kill, or a root that ``init``/``import`` will not be run in again.
    """

    RECYCLE = 200  # requests; a worker keeps each store it opened open until it exits

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.requests = 0

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __call__(self, *argv: str, input: str | None = None) -> Run:
        if self.proc is None or self.requests >= self.RECYCLE:
            self.close()
            self.proc = subprocess.Popen([MNEM, "serve", "--stdio"], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            self.requests = 0
        self.requests += 1
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(orjson.dumps({"argv": [str(a) for a in argv], "stdin": input}) + b"\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, f"the checking worker died on {argv}"
        answer = orjson.loads(line)
        return Run(answer["exit"], answer["stdout"], answer["stderr"])

    def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        with contextlib.suppress(OSError):
            proc.stdin.close()  # type: ignore[union-attr]
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()  # type: ignore[union-attr]


Mnem = Callable[..., Run]


def check_store(mnem: Mnem, root: Path) -> tuple[dict[str, Any], dict[str, str]]:
    """The store at ``root`` opens and verifies, and HEAD names a branch that exists once any does.

    Returns ``status --json`` and the branches (name -> commit).
    """
    status = mnem("-C", str(root), "--json", "status")
    no_traceback(status)
    assert status.code == 0, f"the store at {root} does not open: {status.out}{status.err}"
    listed = mnem("-C", str(root), "--json", "branch")
    assert listed.code == 0, f"branch --json at {root}: {listed.out}"
    branches = {b["name"]: b["commit"] for b in listed.json}
    head = status.json
    if branches and head["branch"] is not None:
        assert head["branch"] in branches, (
            f"HEAD names branch {head['branch']!r}, which does not exist (branches: {sorted(branches)})"
        )
        assert head["commit"] == branches[head["branch"]]
    verified = mnem("-C", str(root), "--json", "verify")
    assert verified.code == 0, f"verify fails at {root}: {verified.out}{verified.err}"
    return head, branches


def check_copy(mnem: Mnem, store: Path, scratch: Path) -> tuple[dict[str, Any], dict[str, str]]:
    """``check_store`` on a copy of ``store`` as the kill left it, so the checker never holds the real store open."""
    shutil.copytree(store, scratch, symlinks=True)
    try:
        return check_store(mnem, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def tally(stopped: killpoints.Stopped) -> Counter[str]:
    """One kill counted: whether it interrupted the command, and whether it fell inside the command's work."""
    return Counter(interrupted=stopped.stopped, inside=stopped.inside)


def in_lanes(body: Callable[[int, threading.Event], Counter[str]]) -> Counter[str]:
    """Run ``body(lane, stop)`` in LANES threads at once and add up the kills they counted.

    The first failure sets ``stop`` (the other lanes return at their next kill)
    and is the one raised.
    """
    stop = threading.Event()
    failures: list[BaseException] = []
    lock = threading.Lock()

    def lane(index: int) -> Counter[str]:
        try:
            return body(index, stop)
        except BaseException as exc:
            with lock:
                failures.append(exc)
            stop.set()
            raise

    pool = ThreadPoolExecutor(LANES)
    try:
        futures = [pool.submit(lane, index) for index in range(LANES)]
        wait(futures)
    except BaseException:  # ^C: the lanes stop at their next kill, and their processes are reaped
        stop.set()
        raise
    finally:
        pool.shutdown(wait=True)
    if failures:
        raise failures[0]
    return sum((future.result() for future in futures), Counter())


def fill(filler: Path) -> None:
    """Grow ``filler`` until the file system is full, to the last byte."""
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        for chunk in (1 << 16, PAGE, 1):
            while True:
                try:
                    os.write(fd, bytes(chunk))
                except OSError as exc:
                    if exc.errno != errno.ENOSPC:
                        raise
                    break
    finally:
        os.close(fd)


def fill_leaving(filler: Path, pages: int) -> None:
    """Fill the file system, then free ``pages`` pages: each probe fails at a different point of a command."""
    fill(filler)
    os.truncate(filler, max(0, filler.stat().st_size - pages * PAGE))


# ----------------------------------------------------------------------------- fixtures


@dataclass
class History:
    """A store with history on two branches, HEAD on the second, and what it answers."""

    root: Path
    export: Path  # ``export -o`` of it
    export_stdout: str  # ``export`` to stdout
    tip: str  # HEAD's commit
    head: str  # HEAD's branch
    first: str  # the root commit
    branches: dict[str, str]
    answers: dict[tuple[str, ...], Any]  # --json show / log / status / branch
    init_listing: set[str]  # entries() of a store just made by init
    import_listing: set[str]  # entries() of a store just made by importing ``export``


def write(root: Path, message: str, time_ms: int, puts: list[dict[str, Any]], deletes: tuple[str, ...] = ()) -> None:
    result = run_mnem("-C", str(root), "--json", "write", "-m", message, "--author", "agent", "--time", str(time_ms),
                      input=json.dumps({"put": puts, "delete": list(deletes)}))
    assert result.code == 0, result.out + result.err


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    base = tmp_path_factory.mktemp("history")
    root = base / "store"
    assert run_mnem("init", str(root)).code == 0
    init_listing = entries(root)
    write(root, "open the case", 1_000, [{"id": "plan", "content": "enterprise", "source": "ticket-1"},
                                        {"id": "owner", "content": {"name": "ana"}}])
    write(root, "downgrade", 2_000, [{"id": "plan", "content": "pro", "source": "billing-2"}])
    write(root, "region", 3_000, [{"id": "region", "content": "eu", "step": "step-3"}])
    assert run_mnem("-C", str(root), "checkout", "-b", "feature").code == 0
    write(root, "try a flag", 4_000, [{"id": "flag", "content": True}], deletes=("owner",))
    write(root, "move", 5_000, [{"id": "region", "content": ["us", 1]}])
    export = base / "history.json"
    assert run_mnem("-C", str(root), "export", "-o", str(export)).code == 0
    assert run_mnem("import", str(export), str(base / "imported")).code == 0
    asked: list[tuple[str, ...]] = [("show",), ("log",), ("status",), ("branch",)]
    answers = {argv: run_mnem("-C", str(root), "--json", *argv).json for argv in asked}
    status = answers[("status",)]
    return History(
        root=root,
        export=export,
        export_stdout=run_mnem("-C", str(root), "export").out,
        tip=status["commit"],
        head=status["branch"],
        first=answers[("log",)][-1]["id"],
        branches={b["name"]: b["commit"] for b in answers[("branch",)]},
        answers=answers,
        init_listing=init_listing,
        import_listing=entries(base / "imported"),
    )


def holds_history(mnem: Mnem, root: Path, history: History) -> None:
    """The store at ``root`` holds exactly the exported memory: same memory, log, HEAD and branches."""
    for argv, expected in history.answers.items():
        got = mnem("-C", str(root), "--json", *argv)
        assert got.code == 0 and got.json == expected, f"{argv} at {root}: {got.out}{got.err}"


def mount(*argv: str) -> None:
    done = subprocess.run(["mount", *argv], capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"mount {' '.join(argv)}: {done.stderr}"


def unmount(where: Path) -> bool:
    """Unmount ``where``, retrying while a process that is ending still uses it; lazily (False) if it never lets go.

    The bound only ends a wait for a process that will not end; nothing is timed.
    """
    deadline = time.monotonic() + 60
    while subprocess.run(["umount", str(where)], capture_output=True, check=False).returncode != 0:
        if time.monotonic() > deadline:
            subprocess.run(["umount", "-l", str(where)], capture_output=True, check=False)  # never leave it mounted
            return False
        time.sleep(0.1)
    return True


@pytest.fixture
def mounts(tmp_path: Path):
    """Mount a small tmpfs or a bind mount under ``tmp_path``; everything is unmounted at teardown."""
    mounted: list[Path] = []

    def tmpfs(name: str, kib: int) -> Path:
        where = tmp_path / name
        where.mkdir()
        mount("-t", "tmpfs", "-o", f"size={kib}k,mode=0700", "tmpfs", str(where))
        mounted.append(where)
        return where

    def bind(source: Path, name: str) -> Path:
        where = tmp_path / name
        where.mkdir()
        mount("--bind", str(source), str(where))
        mounted.append(where)
        return where

    def read_only(where: Path, *, bind: bool) -> None:
        mount("-o", "remount,bind,ro" if bind else "remount,ro", str(where))
        with pytest.raises(OSError) as refused:
            (where / "probe").write_bytes(b"")
        assert refused.value.errno == errno.EROFS

    try:
        yield SimpleNamespace(tmpfs=tmpfs, bind=bind, read_only=read_only)
    finally:
        stuck = [where for where in reversed(mounted) if not unmount(where)]
        assert not stuck, f"had to lazily unmount {stuck}"


# ----------------------------------------------------------------------------- A. SIGKILL at random moments


def made_or_absent(mnem: Mnem, box: Path, args: list[str], clean: set[str]) -> str:
    """After a killed ``init``/``import`` into ``box/store``: a whole store, or none and the same command succeeds.

    Returns "made" or "absent".  When the command had to be run again, what it
    leaves must be exactly what a run never killed leaves (``clean``): whatever
    temporary files the killed run left, the finished one cleaned them.
    """
    root = box / "store"
    if (root / ".mnem").exists():
        check_store(mnem, root)
        return "made"
    again = mnem(*args)
    assert again.code == 0, f"a kill left no store at {root}, and then the same command fails: {again.out}{again.err}"
    assert entries(box) == clean, f"leftovers the finished run did not clean: {sorted(entries(box) ^ clean)}"
    check_store(mnem, root)
    return "absent"


#: The work of a store-creating command: building the new store and publishing it (``init`` and ``import``).
CREATE = "mnem_store/sqlite/backend.py:create"


def creation_killed_at_random(tmp_path: Path, command: Callable[[Path], list[str]], seed: int,
                              check: Callable[[Mnem, Path], None] | None = None) -> None:
    """Kill a store-creating command (``init``/``import``) at steps of its run: each time nothing or a whole store."""
    run = killpoints.measure(command(tmp_path / "timing" / "store"), marker=CREATE)
    clean = entries(tmp_path / "timing")  # store, store/.mnem and what a finished run puts in it
    points = killpoints.aimed(run, KILLS, random.Random(seed))

    def lane(index: int, stop: threading.Event) -> Counter[str]:
        home = tmp_path / f"lane{index}"
        home.mkdir()
        kills: Counter[str] = Counter()
        with Checker() as mnem:
            for n, point in enumerate(points[index::LANES]):
                if stop.is_set():
                    return kills
                box = home / f"kill{n}"
                box.mkdir()
                args = command(box / "store")
                kills += tally(killpoints.kill(args, point, CREATE))
                made_or_absent(mnem, box, args, clean)
                if check is not None:
                    check(mnem, box / "store")
        if check is not None:
            check(run_mnem, box / "store")  # and a one-shot process agrees with the checker
        check_store(run_mnem, box / "store")
        return kills

    kills = in_lanes(lane)
    assert kills["interrupted"] > KILLS // 4  # the kills really landed before the command had finished
    assert kills["inside"] > KILLS // 2  # most of them while it was building or publishing the store


def test_init_killed_at_random(tmp_path: Path) -> None:
    creation_killed_at_random(tmp_path, lambda where: ["--json", "init", str(where)], 100)


def test_import_killed_at_random(tmp_path: Path, history: History) -> None:
    creation_killed_at_random(
        tmp_path,
        lambda where: ["--json", "import", str(history.export), str(where)],
        200,
        lambda mnem, root: holds_history(mnem, root, history),
    )


def new_branch_killed_at_random(tmp_path: Path, history: History, command: tuple[str, ...], seed: int,
                                every_step: bool = False) -> None:
    """``checkout -b NAME`` or ``branch NAME`` killed on one store per lane, a new NAME each time.

    ``every_step``: as many kills as it takes (``KILLS`` at least) for the aimed three quarters to fall on
    every step of the command's transaction at least once.
    """
    switches = command[0] == "checkout"
    marker = "mnem_store/porcelain/branches.py:" + ("checkout" if switches else "branch_create")  # its one transaction
    shutil.copytree(history.root, tmp_path / "timing")
    run = killpoints.measure(["-C", str(tmp_path / "timing"), "--json", *command, "timing"], marker=marker)
    kills = max(KILLS, (run.last - run.first + 2) * 4 // 3 + 2) if every_step else KILLS
    points = killpoints.aimed(run, kills, random.Random(seed))

    def lane(index: int, stop: threading.Event) -> Counter[str]:
        home = tmp_path / f"lane{index}"
        store = home / "store"
        shutil.copytree(history.root, store)
        args = ["-C", str(store), "--json", *command]
        assert run_mnem(*args, "warm").code == 0  # a finished run first: the files it keeps are there from now on
        clean = entries(store)
        head = "warm" if switches else history.head
        made = {"warm"}
        counted: Counter[str] = Counter()
        with Checker() as mnem:
            for n, point in enumerate(points[index::LANES]):
                if stop.is_set():
                    return counted
                name = f"kill{n}"
                stopped = killpoints.kill([*args, name], point, marker)
                counted += tally(stopped)
                status, branches = check_copy(mnem, store, home / f"check{n}")
                allowed = (head, name) if switches else (head,)
                assert status["branch"] in allowed, f"HEAD is {status['head']!r} after {command} {name} was killed"
                assert status["commit"] == history.tip
                if name in branches:
                    made.add(name)
                assert branches == {**history.branches, **{m: history.tip for m in made}}, "branches changed"
                if not stopped.stopped:
                    assert name in branches and status["branch"] == (name if switches else head)
                    assert entries(store) == clean, f"a finished run left {sorted(entries(store) ^ clean)}"
                head = status["branch"]
        # a finished run cleans whatever temporary files the killed ones left
        final = run_mnem(*args, f"final{index}")
        assert final.code == 0, final.out
        assert entries(store) == clean, f"left behind: {sorted(entries(store) ^ clean)}"
        check_store(run_mnem, store)
        return counted

    counted = in_lanes(lane)
    assert counted["interrupted"] > kills // 4
    assert counted["inside"] > kills // 2  # most kills fell inside the command's transaction


def test_checkout_b_killed_at_random(tmp_path: Path, history: History) -> None:
    # Every step of checkout's transaction is killed in (about 300 steps, so about 400 kills): an engine that moved
    # HEAD before the new branch was committed would be killed between the two, however narrow the gap.
    new_branch_killed_at_random(tmp_path, history, ("checkout", "-b"), 300, every_step=True)


def test_branch_killed_at_random(tmp_path: Path, history: History) -> None:
    new_branch_killed_at_random(tmp_path, history, ("branch",), 400)


#: The export kills' export file is ~4 MB.  The contents are control characters: JSON spells each as ``\u00XX``,
#: six bytes, while the store keeps them compressed, so the store stays small and quick to copy and verify.
BIG_NODES, BIG_SIZE = 4, 170_000
#: The work of ``export -o``: the temporary file written, synced and renamed over the old export.
REPLACE = "mnem_store/portable.py:replace_file"


def test_export_over_a_good_export_killed_at_random(tmp_path: Path) -> None:
    source = tmp_path / "source"
    assert run_mnem("init", str(source)).code == 0
    write(source, "big", 1_000, [{"id": f"big{i}", "content": chr(1 + i) * BIG_SIZE} for i in range(BIG_NODES)])
    assert run_mnem("-C", str(source), "export", "-o", str(tmp_path / "old.json")).code == 0
    write(source, "small", 2_000, [{"id": "small", "content": "one more"}])
    assert run_mnem("-C", str(source), "export", "-o", str(tmp_path / "new.json")).code == 0
    old, new = (tmp_path / "old.json").read_bytes(), (tmp_path / "new.json").read_bytes()
    assert old != new and len(old) > 4_000_000
    assert json.loads(old)["refs"] and json.loads(new)["refs"]  # both are whole exports
    (tmp_path / "timing").mkdir()  # measured as the lanes run it: over the old export, alone in its folder
    (tmp_path / "timing" / "backup.json").write_bytes(old)
    run = killpoints.measure(["-C", str(source), "--json", "export", "-o", str(tmp_path / "timing" / "backup.json")],
                             marker=REPLACE)
    points = killpoints.aimed(run, KILLS, random.Random(500))

    def lane(index: int, stop: threading.Event) -> Counter[str]:
        home = tmp_path / f"lane{index}"
        store = home / "store"
        shutil.copytree(source, store)
        out = home / "out"
        out.mkdir()
        backup = out / "backup.json"
        args = ["-C", str(store), "--json", "export", "-o", str(backup)]
        assert run_mnem(*args).code == 0
        assert backup.read_bytes() == new
        kills: Counter[str] = Counter()
        with Checker() as mnem:
            for n, point in enumerate(points[index::LANES]):
                if stop.is_set():
                    return kills
                if backup.read_bytes() != old:  # every kill replaces the old export
                    backup.with_name("reset").write_bytes(old)
                    os.replace(backup.with_name("reset"), backup)
                stopped = killpoints.kill(args, point, REPLACE)
                kills += tally(stopped)
                assert backup.exists(), f"kill {n} left no {backup.name}"
                now = backup.read_bytes()
                assert now in (old, new), (
                    f"kill {n} left {backup.name} neither the old nor the new export: {len(now)} bytes "
                    f"(old {len(old)}, new {len(new)})"
                )
                if not stopped.stopped:
                    assert now == new
                    assert entries(out) == {"backup.json"}, f"a finished export left {sorted(entries(out))}"
                check_copy(mnem, store, home / f"check{n}")
        final = run_mnem(*args)
        assert final.code == 0, final.out
        assert backup.read_bytes() == new
        assert entries(out) == {"backup.json"}, f"the kills left {sorted(entries(out))}"
        check_store(run_mnem, store)
        return kills

    kills = in_lanes(lane)
    assert kills["interrupted"] > KILLS // 4
    assert kills["inside"] > KILLS // 2  # most kills fell while the file was written, synced or renamed


# ----------------------------------------------------------------------------- B. a full disk
#
# Each test is a ladder of probes: fill the tmpfs to the last byte, free 0, 1, 2, ... pages, run the command,
# until it succeeds.  A command needs room for several things (SQLite's -shm and -wal, a temporary file, the
# file itself), so the probes make it fail at each of them in turn; the first probe (nothing free) must fail,
# or the test never made it hit ENOSPC.  The filler is deleted after every probe.


def test_init_on_a_full_disk(mounts: SimpleNamespace, history: History) -> None:
    disk = mounts.tmpfs("disk", 1024)
    filler, root = disk / "filler", disk / "store"
    outcomes = []
    for pages in range(LADDER):
        fill_leaving(filler, pages)
        result = run_mnem("--json", "init", str(root))  # always the same place: a failure must not block the next
        filler.unlink()
        if result.code == 0:
            outcomes.append("ok")
            break
        outcomes.append("failed")
        assert_store_io(result, f"init with {pages} page(s) free")
        if pages == 0:
            again = run_mnem("--json", "init", str(root))
            assert again.code == 0, f"init failed on a full disk; with space again, init there fails: {again.out}"
            assert entries(disk) == under("store", history.init_listing), f"left behind: {sorted(entries(disk))}"
            assert run_mnem("-C", str(root), "--json", "status").code == 0
            shutil.rmtree(root)
    assert outcomes[0] == "failed", "init succeeded on a full disk: the test never made it hit ENOSPC"
    assert outcomes[-1] == "ok", f"init still fails with {LADDER} pages free"
    assert entries(disk) == under("store", history.init_listing), f"the failures left {sorted(entries(disk))}"
    check_store(run_mnem, root)


@pytest.mark.parametrize("command", [("checkout", "-b"), ("branch",)], ids=["checkout-b", "branch"])
def test_new_branch_on_a_full_disk(mounts: SimpleNamespace, history: History, command: tuple[str, ...]) -> None:
    disk = mounts.tmpfs("disk", 1024)
    store = disk / "store"
    shutil.copytree(history.root, store)
    # one finished run first, so whatever files the command keeps for good are there before the probes
    argv = ("-C", str(store), "--json", *command)
    assert run_mnem(*argv, "warm-up").code == 0
    head = "warm-up" if command[0] == "checkout" else history.head
    known = {**history.branches, "warm-up": history.tip}
    filler = disk / "filler"
    outcomes = []
    for pages in range(LADDER):
        name = f"x{pages}"
        before = store_fingerprint(store)  # HEAD, config and every row
        fill_leaving(filler, pages)
        listing = entries(disk)
        result = run_mnem(*argv, name)
        left = entries(disk) - listing
        filler.unlink()
        if result.code == 0:
            outcomes.append("ok")
            status, branches = check_store(run_mnem, store)
            assert branches == {**known, name: history.tip}
            assert status["branch"] == (name if command[0] == "checkout" else head)
            break
        outcomes.append("failed")
        what = f"{' '.join(command)} {name} with {pages} page(s) free"
        assert_store_io(result, what)
        assert not left, f"{what} left {sorted(left)}"
        assert store_fingerprint(store) == before, f"{what} failed, yet changed the store (HEAD, config or rows)"
        verified = run_mnem("-C", str(store), "--json", "verify")  # with space again: it opens and is whole
        assert verified.code == 0, f"after {what}: {verified.out}"
    assert outcomes[0] == "failed", f"{command} succeeded on a full disk: the test never made it hit ENOSPC"
    assert outcomes[-1] == "ok", f"{command} still fails with {LADDER} pages free"


def test_export_over_a_good_backup_on_a_full_disk(mounts: SimpleNamespace, tmp_path: Path, history: History) -> None:
    # The store is on a disk with space (so the export always gets as far as writing the file); the backup is not.
    store = tmp_path / "store"
    shutil.copytree(history.root, store)
    write(store, "grow", 9_000, [{"id": f"grown{i}", "content": f"{i}" * 4000} for i in range(10)])
    assert run_mnem("-C", str(store), "export", "-o", str(tmp_path / "new.json")).code == 0
    old, new = history.export.read_bytes(), (tmp_path / "new.json").read_bytes()
    assert len(new) > len(old) + 4 * PAGE  # the new export cannot fit where the old one was
    disk = mounts.tmpfs("disk", 1024)
    backup, filler = disk / "backup.json", disk / "filler"
    backup.write_bytes(old)
    outcomes = []
    for pages in range(LADDER):
        fill_leaving(filler, pages)
        result = run_mnem("-C", str(store), "--json", "export", "-o", str(backup))
        listing = entries(disk)
        filler.unlink()
        assert listing == {"backup.json", "filler"}, f"export with {pages} page(s) free left {sorted(listing)}"
        if result.code == 0:
            outcomes.append("ok")
            assert backup.read_bytes() == new
            break
        outcomes.append("failed")
        assert_store_io(result, f"export with {pages} page(s) free")
        assert backup.read_bytes() == old, f"a failed export with {pages} page(s) free damaged the old backup"
    assert outcomes[0] == "failed", "export succeeded on a full disk: the test never made it hit ENOSPC"
    assert outcomes[-1] == "ok", f"export still fails with {LADDER} pages free"


def test_import_on_a_full_disk(mounts: SimpleNamespace, history: History) -> None:
    disk = mounts.tmpfs("disk", 1024)
    filler, root = disk / "filler", disk / "store"
    outcomes = []
    for pages in range(LADDER):
        fill_leaving(filler, pages)
        listing = entries(disk)
        result = run_mnem("--json", "import", str(history.export), str(root))  # always the same place
        left = {name for name in entries(disk) - listing if not (disk / name).is_dir()}
        half = (root / ".mnem").exists()
        filler.unlink()
        if result.code == 0:
            outcomes.append("ok")
            break
        outcomes.append("failed")
        what = f"import with {pages} page(s) free"
        assert_store_io(result, what)
        assert not half, f"{what} failed and left a half-made store/.mnem"
        assert not left, f"{what} failed and left {sorted(left)}"
        if pages == 0:
            again = run_mnem("--json", "import", str(history.export), str(root))
            assert again.code == 0, f"{what} failed; with space again it fails: {again.out}"
            assert run_mnem("-C", str(root), "export").out == history.export_stdout
            shutil.rmtree(root)
    assert outcomes[0] == "failed", "import succeeded on a full disk: the test never made it hit ENOSPC"
    assert outcomes[-1] == "ok", f"import still fails with {LADDER} pages free"
    assert entries(disk) == under("store", history.import_listing), f"the failures left {sorted(entries(disk))}"
    assert run_mnem("-C", str(root), "export").out == history.export_stdout


# ----------------------------------------------------------------------------- C. read-only stores


def reads(history: History) -> list[tuple[str, ...]]:
    return [
        ("status",), ("log",), ("show",), ("show", history.first), ("show", "--node", "plan"), ("diff",),
        ("diff", history.first, "main"), ("blame", "plan"), ("branch",), ("export",), ("verify",), ("stamps",),
        ("resolve", "main"), ("bisect", "--node", "flag", "--present"),
    ]


#: (which store, argv, stdin): each one succeeds on a writable copy of that store.
WRITES = [
    ("staged", ("add", "extra", "added on a read-only store"), None),
    ("staged", ("commit", "-m", "commit on a read-only store", "--time", "9000"), None),
    ("staged", ("write", "-m", "write on a read-only store", "--time", "9000"),
     json.dumps({"put": [{"id": "extra", "content": 1}]})),
    ("staged", ("branch", "x"), None),
    ("clean", ("checkout", "-b", "y"), None),  # on "staged" it would be refused for the pending change
]


def refused_as_read_only(answer: Run, argv: tuple[str, ...], json_mode: bool) -> None:
    no_traceback(answer)
    if json_mode:
        assert_store_io(answer, f"{argv} on a read-only store")
        message = answer.json["error"]["message"]
    else:
        assert answer.code == 1, f"{argv} on a read-only store: exit {answer.code}: {answer.out}{answer.err}"
        message = answer.err
    assert "read-only" in message.lower(), f"{argv} on a read-only store: {message}"


@pytest.mark.parametrize("how", ["file system", "bind mount"])
def test_a_read_only_store_reads_and_refuses_writes(mounts: SimpleNamespace, tmp_path: Path, history: History,
                                                    how: str) -> None:
    """Every read and write in both output modes, through a worker (one request each, as a one-shot ``mnem``
    would answer), and the first read, a few more reads and two writes as one-shot processes too."""
    if how == "file system":
        top = mounts.tmpfs("ro", 4096)
    else:
        (tmp_path / "folder").mkdir()
        top = mounts.bind(tmp_path / "folder", "ro")
    stores = {"staged": top / "staged", "clean": top / "clean"}
    for root in stores.values():
        shutil.copytree(history.root, root)
    staged = run_mnem("-C", str(stores["staged"]), "add", "pending", "staged, not committed", "--source", "s-9")
    assert staged.code == 0, staged.err
    where = str(stores["staged"])
    commands = [mode + argv for argv in reads(history) for mode in ((), ("--json",))]
    expected = {}
    with Checker() as mnem:
        for argv in commands:
            expected[argv] = mnem("-C", where, *argv)
            assert expected[argv].code == 0, f"{argv} on the writable store: {expected[argv].out}"
        for n, (which, argv, payload) in enumerate(WRITES):  # valid writes: only the read-only store refuses them
            twin = tmp_path / f"twin{n}"
            shutil.copytree(stores[which], twin)
            answer = mnem("-C", str(twin), "--json", *argv, input=payload)
            assert answer.code == 0, f"{argv} on a writable copy: {answer.out}"
    # the worker has exited: nothing holds the store open

    mounts.read_only(top, bind=how == "bind mount")

    one_shot = [("--json", "status"), ("export",), ("verify",), ("--json", "show", "--node", "plan")]
    for argv in one_shot:
        answer = run_mnem("-C", where, *argv)
        no_traceback(answer)
        before = expected[argv]
        assert (answer.code, answer.out, answer.err) == (before.code, before.out, before.err), (
            f"{argv} on the read-only store: exit {answer.code}: {answer.out}{answer.err}"
        )
    refused_as_read_only(run_mnem("-C", where, "--json", "add", "extra", "x"), ("add",), True)
    refused_as_read_only(run_mnem("-C", str(stores["clean"]), "checkout", "-b", "y"), ("checkout", "-b"), False)
    with Checker() as mnem:
        for argv in commands:
            answer = mnem("-C", where, *argv)
            no_traceback(answer)
            before = expected[argv]
            assert (answer.code, answer.out, answer.err) == (before.code, before.out, before.err), (
                f"{argv} on the read-only store: exit {answer.code}: {answer.out}{answer.err}"
            )
        for which, argv, payload in WRITES:
            for json_mode in (True, False):
                mode = ("--json",) if json_mode else ()
                refused_as_read_only(mnem("-C", str(stores[which]), *mode, *argv, input=payload), argv, json_mode)
