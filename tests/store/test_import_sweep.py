"""Import checks meaning: every damaged export is refused, or it imports as exactly the store it was.

A real store is built through the CLI and exported; then every byte of the
export text is edited, one at a time, and each edited text is imported (in
process, so thousands of imports take seconds).  For every edit, either the
import is refused with a typed ``MnemError`` and leaves no ``.mnem`` behind,
or the imported store means what the original meant: the same HEAD, the same
refs, the same objects (so the same memory and the same log).  The only field
an edit may change without changing meaning is ``default_branch``, which is
informational (a store created by import has its own config).

The default export's store has ONE branch, on purpose.  In upstream's export
format a branch is just a name in ``refs``; nothing checksums it.  HEAD's
branch is checked (HEAD must name a branch the export holds, once it holds
any), so renaming ``main`` is caught; but a second branch ``side`` renamed to
``sidf`` is exactly the export of a store with a branch ``sidf``, which no
importer can tell apart (``test_export_seal.py`` pins that).  The sealed
export (``mnem export --seal``) closes it, so its store has three branches,
one named with a non-ASCII letter, and an uncommitted node: every edit of it
is refused with ``corrupt_store`` except one that renames the ``seal`` key
itself (upstream's importer, and ours, ignore an unknown key, and nothing
the seal covers changed), and every bit of its header, HEAD and refs is
covered, each refusal naming the fix.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import run_mnem, store_sql

from mnem_store import portable
from mnem_store.errors import MnemError

#: Fields of an export that carry no meaning of the store itself.
INFORMATIONAL = ("default_branch",)


# --------------------------------------------------------------------------- adapter
# The engine's import API is being reworked; these two functions are the only places that touch it,
# and they look it up when called, so a rename fails the tests here rather than their collection.
def import_text(path: Path, text: bytes) -> Any:
    """Import an export text into a new store at ``path``; returns the open repo (caller closes) or raises."""
    document = portable.parse_export(text, "export.json")
    if hasattr(portable, "import_document"):  # import_document(path, doc) -> (repo, count)
        result = portable.import_document(path, document)
        return result[0] if isinstance(result, tuple) else result
    from mnem_store import porcelain
    from mnem_store.repo import Repo

    root, _ = porcelain.import_(path, document)  # the reworked engine: import_(path, doc) -> (root, count)
    return Repo.open(root)


def meaning(repo: Any) -> dict[str, Any]:
    """An open repo's export, without the informational fields; closes the repo."""
    try:
        if hasattr(repo, "db"):
            document = dict(portable.export_document(repo))
        else:
            from mnem_store import porcelain

            document = dict(porcelain.export(repo))
    finally:
        repo.close()
    for key in INFORMATIONAL:
        document.pop(key, None)
    return document


# --------------------------------------------------------------------------- the store
def write(root: Path, message: str, time: int, payload: dict[str, Any]) -> None:
    result = run_mnem("write", "-m", message, "--author", "tester", "--time", str(time), cwd=root,
                      input=orjson.dumps(payload))
    assert result.code == 0, result.err


def cli_view(root: Path) -> dict[str, Any]:
    """What the CLI says the store holds: HEAD, refs, memory, log."""
    view = {}
    for name, args in (("status", ("status",)), ("branches", ("branch",)), ("memory", ("show",)),
                       ("log", ("log",))):
        result = run_mnem("--json", *args, cwd=root)
        assert result.code == 0, f"mnem {' '.join(args)} in {root}: {result.out}{result.err}"
        view[name] = result.json
    return view


@pytest.fixture(scope="module")
def original(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A small real store (one branch, see the module docstring) and its export."""
    root = tmp_path_factory.mktemp("sweep") / "origin"
    assert run_mnem("init", str(root)).code == 0
    write(root, "open the account", 1_000, {"put": [
        {"id": "plan", "content": {"tier": "pro", "seats": 3}, "source": "ticket-1", "step": "s1"},
        {"id": "temp", "content": "scratch"},
    ]})
    write(root, "upgrade", 2_000, {"put": [
        {"id": "plan", "content": "enterprise", "observation": "the invoice", "tool_call": "crm.get",
         "note": "confirmed"},
        {"id": "owner", "content": ["ann", 7, None, True], "content_kind": "claim", "event_time": 1_500},
    ]})
    write(root, "drop scratch", 3_000, {"delete": ["temp"]})
    exported = run_mnem("--json", "export", cwd=root)
    assert exported.code == 0, exported.err
    text = run_mnem("export", cwd=root).out.encode()
    document = orjson.loads(text)
    assert document == exported.json
    assert document["head"] == "ref: main" and list(document["refs"]) == ["main"]
    return {"root": root, "text": text, "document": document, "view": cli_view(root)}


@pytest.fixture(scope="module")
def sealed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A store with three branches (HEAD on main) and an uncommitted node, and its sealed export."""
    root = tmp_path_factory.mktemp("sweep") / "sealed"
    assert run_mnem("init", str(root)).code == 0
    write(root, "open the account", 1_000, {"put": [{"id": "plan", "content": {"tier": "pro"}, "source": "t-1"}]})
    for name in ("side", "zweig-\u00e4"):
        assert run_mnem("branch", name, cwd=root).code == 0
    assert run_mnem("checkout", "side", cwd=root).code == 0
    write(root, "try enterprise", 2_000, {"put": [{"id": "plan", "content": "enterprise"}]})
    assert run_mnem("checkout", "main", cwd=root).code == 0
    assert run_mnem("add", "draft", "not committed", cwd=root).code == 0
    text = run_mnem("export", "--seal", cwd=root).out.encode()
    document = orjson.loads(text)
    assert document["head"] == "ref: main" and list(document["refs"]) == ["main", "side", "zweig-\u00e4"]
    assert document["seal"] == portable.seal_of(document)
    return {"text": text, "document": document}


def expected_meaning(document: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in document.items() if key not in (*INFORMATIONAL, "seal")}


# --------------------------------------------------------------------------- the sweep
#: 0x01 is the sweep that matters; two more single-bit flips are cheap and reach other damage:
#: 0x10 turns the space after "ref:" into a digit (a new, valid branch name), 0x80 makes the text
#: invalid UTF-8.  (0x20, which upper-cases hex digits, is left out: ids in either case name the same
#: object, so each of those ~500 edits imports a whole store, and the sweep would take 5-15 s more.)
MASKS = (0x01, 0x10, 0x80)


@dataclass
class Swept:
    """What importing each edit of an export did."""

    #: Edits that went wrong: refused without a ``MnemError``, leaving a store behind, or a changed meaning.
    problems: list[str] = field(default_factory=list)
    #: Edits imported with the original's meaning: (offset, the store made).
    accepted: list[tuple[int, Path]] = field(default_factory=list)
    #: Edits refused: (offset, the text as edited, the error).
    refused: list[tuple[int, bytes, MnemError]] = field(default_factory=list)


def sweep(text: bytes, want: dict[str, Any], mask: int, tmp_path: Path, offsets: range | None = None) -> Swept:
    """Import ``text`` with each byte in ``offsets`` (default: all) XORed with ``mask``, one at a time."""
    swept = Swept()
    for offset in offsets if offsets is not None else range(len(text)):
        edited = bytearray(text)
        edited[offset] ^= mask
        target = tmp_path / f"edit-{mask}-{offset}"
        context = bytes(text[max(0, offset - 24):offset + 8])
        where = f"byte {offset} ({context!r}, {text[offset]:#04x}->{edited[offset]:#04x})"
        try:
            repo = import_text(target, bytes(edited))
        except MnemError as exc:
            swept.refused.append((offset, bytes(edited), exc))
            if target.exists():
                swept.problems.append(f"{where}: refused, but left {target} behind")
            continue
        except Exception as exc:
            swept.problems.append(f"{where}: refused with {type(exc).__name__} (not a MnemError): {exc}")
            continue
        got = meaning(repo)
        if got != want:
            changed = sorted(key for key in set(got) | set(want) if got.get(key) != want.get(key))
            shown = {key: "<objects differ>" if key == "objects" else f"{want.get(key)!r} -> {got.get(key)!r}"
                     for key in changed}
            swept.problems.append(f"{where}: imported with a different meaning: {shown}")
        swept.accepted.append((offset, target))
    return swept


def no_problems(swept: Swept, text: bytes) -> None:
    assert not swept.problems, f"{len(swept.problems)} of {len(text)} edits went wrong:\n" + "\n".join(
        swept.problems[:40])


@pytest.mark.parametrize("mask", MASKS, ids=lambda m: f"xor{m:#04x}")
def test_every_edited_byte_is_refused_or_keeps_the_meaning(original, tmp_path: Path, mask: int) -> None:
    text: bytes = original["text"]
    swept = sweep(text, expected_meaning(original["document"]), mask, tmp_path)
    no_problems(swept, text)
    assert swept.refused
    # The CLI agrees on a sample of the accepted stores (first, middle, last), and each verifies.
    accepted = swept.accepted
    sample = sorted({accepted[0], accepted[len(accepted) // 2], accepted[-1]}) if accepted else []
    for offset, target in sample:
        assert cli_view(target) == original["view"], f"byte {offset}: the CLI sees a different store"
        assert run_mnem("--json", "verify", cwd=target).code == 0, f"byte {offset}: the imported store does not verify"
    for _, target in accepted:
        shutil.rmtree(target, ignore_errors=True)


#: What a sealed export's refusal tells the user to do.
FIX = "export the source store again with `mnem export --seal`"


@pytest.mark.parametrize("mask", MASKS, ids=lambda m: f"xor{m:#04x}")
def test_every_edited_byte_of_a_sealed_export_is_refused_but_the_seals_own_key(sealed: dict[str, Any], tmp_path: Path,
                                                                               mask: int) -> None:
    text: bytes = sealed["text"]
    swept = sweep(text, expected_meaning(sealed["document"]), mask, tmp_path)
    no_problems(swept, text)
    key = text.rindex(b'"seal"')
    assert {offset for offset, _ in swept.accepted} <= set(range(key + 1, key + 5)), swept.accepted
    wrong = [(offset, str(exc)) for offset, _, exc in swept.refused if exc.code != "corrupt_store"]
    assert not wrong, wrong[:10]


@pytest.mark.parametrize("mask", [1 << bit for bit in range(8)], ids=lambda m: f"xor{m:#04x}")
def test_every_bit_of_a_sealed_exports_header_head_and_refs_is_covered(
    sealed: dict[str, Any], tmp_path: Path, mask: int,
) -> None:
    """Every bit before the objects (a branch's name among them) is refused, naming the fix when the JSON parses."""
    text: bytes = sealed["text"]
    swept = sweep(text, expected_meaning(sealed["document"]), mask, tmp_path, range(text.index(b'  "objects"')))
    no_problems(swept, text)
    assert not swept.accepted, [offset for offset, _ in swept.accepted]
    for offset, edited, exc in swept.refused:
        assert exc.code == "corrupt_store", (offset, str(exc))
        try:
            orjson.loads(edited)
        except orjson.JSONDecodeError:
            continue  # upstream's "not a valid mnem export": the damage is the JSON itself
        assert FIX in str(exc), (offset, str(exc))


def test_the_unedited_export_imports_with_the_same_meaning(original, tmp_path: Path) -> None:
    target = tmp_path / "copy"
    assert meaning(import_text(target, original["text"])) == expected_meaning(original["document"])
    assert cli_view(target) == original["view"]


# --------------------------------------------------------------------------- HEAD and refs
def refused_by_cli(tmp_path: Path, document: dict[str, Any]) -> dict[str, Any]:
    """Import ``document`` both in process and through ``mnem import``; both must refuse; the JSON error."""
    text = orjson.dumps(document)
    inproc = tmp_path / "inproc"
    with pytest.raises(MnemError) as caught:
        import_text(inproc, text).close()
    assert caught.value.code == "corrupt_store", caught.value
    assert not (inproc / ".mnem").exists()
    path = tmp_path / "export.json"
    path.write_bytes(text)
    target = tmp_path / "viacli"
    result = run_mnem("--json", "import", str(path), str(target))
    assert result.code == 1, result.out
    assert not target.exists()
    error = result.json["error"]
    assert error["code"] == "corrupt_store"
    return error


def test_head_naming_a_branch_missing_from_refs_is_refused(original, tmp_path: Path) -> None:
    document = dict(original["document"], head="ref: elsewhere")
    error = refused_by_cli(tmp_path, document)
    assert "elsewhere" in error["message"]


def test_renaming_heads_branch_in_refs_is_refused(original, tmp_path: Path) -> None:
    (tip,) = original["document"]["refs"].values()
    document = dict(original["document"], refs={"mainline": tip})
    assert document["head"] == "ref: main"
    error = refused_by_cli(tmp_path, document)
    assert "main" in error["message"]


def test_an_export_of_a_fresh_store_still_imports(store: Path, tmp_path: Path) -> None:
    exported = run_mnem("--json", "export", cwd=store)
    assert exported.code == 0, exported.err
    document = exported.json
    assert document["head"] == "ref: main" and document["refs"] == {} and document["objects"] == {}
    assert meaning(import_text(tmp_path / "inproc", orjson.dumps(document))) == expected_meaning(document)
    path = tmp_path / "fresh.json"
    path.write_bytes(orjson.dumps(document))
    result = run_mnem("--json", "import", str(path), str(tmp_path / "viacli"))
    assert result.code == 0, result.out + result.err
    status = run_mnem("--json", "status", cwd=tmp_path / "viacli").json
    assert status["head"] == "ref: main" and status["commit"] is None
    assert run_mnem("--json", "export", cwd=tmp_path / "viacli").json == document


# --------------------------------------------------------------------------- verify
def test_verify_reports_an_attached_head_on_a_missing_branch(store: Path) -> None:
    """HEAD lives in the database (table ``meta``, key ``head``); pointing it at no branch is damage verify names."""
    write(store, "one", 1_000, {"put": [{"id": "plan", "content": "pro"}]})
    assert run_mnem("branch", "side", cwd=store).code == 0
    (row,) = store_sql(store, "SELECT value FROM meta WHERE key = 'head'")
    assert row[0].strip() == "ref: main"
    store_sql(store, "UPDATE meta SET value = ? WHERE key = 'head'", row[0].replace("main", "gone"))
    as_json = run_mnem("--json", "verify", cwd=store)
    as_text = run_mnem("verify", cwd=store)
    assert as_json.code != 0 and as_text.code != 0, as_json.out
    assert "Traceback" not in as_text.err
    error = as_json.json["error"]
    problems = error.get("problems") or []
    assert any(p["what"] == "head" or "gone" in p["message"] for p in problems), error
