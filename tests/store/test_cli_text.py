"""Upstream's plain-text output, byte for byte, for the commands we share with it."""

import pg_stores
from conftest import run_mnem

from mnem_store.cli.render import fmt_time


def ok(*args, cwd, input=None):
    result = run_mnem(*args, cwd=cwd, input=input)
    assert result.code == 0, result.err
    assert result.err == ""
    return result.out


def test_quickstart_sequence(tmp_path):
    """Upstream README's quickstart, with commit times pinned so ids and dates are fixed."""
    assert (ok("init", "./agent-memory", cwd=tmp_path)
            == "Initialised an empty Mnemosyne store in ./agent-memory/.mnem\n")
    store = tmp_path / "agent-memory"
    out = ok("add", "customer-4821", "on the Enterprise plan", "--source", "ticket-4821", cwd=store)
    assert out.startswith("Staged customer-4821 as ") and len(out.split()[-1]) == 12
    first = ok("commit", "-m", "open the case", "--author", "agent", "--time", "1757170500000", cwd=store)
    assert first.startswith("[") and first.endswith("] open the case\n")
    ok("add", "customer-4821", "downgraded to Pro last month", "--source", "billing-note-8842", "--step", "step-31",
       cwd=store)
    second = ok("commit", "-m", "reconcile the plan tier", "--author", "agent", "--time", "1757170560000", cwd=store)
    c1, c2 = first[1:13], second[1:13]
    full = run_mnem("--json", "log", cwd=store).json
    assert [c["id"][:12] for c in full] == [c2, c1]
    assert ok("log", cwd=store) == (
        f"commit {full[0]['id']}\nAuthor: agent\nDate:   2025-09-06 14:56:00Z\n\n    reconcile the plan tier\n\n"
        f"commit {full[1]['id']}\nAuthor: agent\nDate:   2025-09-06 14:55:00Z\n\n    open the case\n\n"
    )
    assert ok("log", "--oneline", cwd=store) == f"{c2} reconcile the plan tier\n{c1} open the case\n"
    assert ok("log", "--oneline", "-n", "1", cwd=store) == f"{c2} reconcile the plan tier\n"
    assert ok("status", cwd=store) == f"On branch main\n  {c2}  reconcile the plan tier\nnothing staged\n"
    assert ok("show", cwd=store) == 'customer-4821\n  "downgraded to Pro last month"\n'
    assert ok("show", c1, cwd=store) == 'customer-4821\n  "on the Enterprise plan"\n'
    assert ok("show", c2, "--stat", cwd=store) == "~ customer-4821\n"
    assert ok("show", c1, "--stat", cwd=store) == "+ customer-4821\n"
    assert ok("diff", c1, c2, cwd=store) == (
        '~ customer-4821\n  - "on the Enterprise plan"\n  + "downgraded to Pro last month"\n'
    )
    assert ok("diff", c1, c2, "--stat", cwd=store) == "~ customer-4821\n"
    assert ok("diff", c1, c2, "--name-only", cwd=store) == "customer-4821\n"
    assert ok("diff", cwd=store) == "no changes\n"
    assert ok("branch", cwd=store) == f"* main  {c2}  reconcile the plan tier\n"
    assert ok("branch", "what-if", c1, cwd=store) == f"Created branch what-if at {c1}\n"
    assert ok("branch", cwd=store) == f"* main  {c2}  reconcile the plan tier\n  what-if  {c1}  open the case\n"
    assert ok("checkout", "what-if", cwd=store) == "Switched to branch what-if\n"
    assert ok("checkout", "what-if", cwd=store) == "Already on what-if\n"
    assert ok("checkout", c2, cwd=store) == f"HEAD is now at {c2} (detached)\n"
    assert ok("status", cwd=store) == f"HEAD detached at {c2}\n  {c2}  reconcile the plan tier\nnothing staged\n"
    assert ok("checkout", "main", cwd=store) == "Switched to branch main\n"
    assert ok("branch", "-d", "what-if", cwd=store) == "Deleted branch what-if\n"
    assert ok("checkout", "-b", "h1", cwd=store) == "Switched to branch h1\n"


def test_status_lists_staged_changes_in_id_order(store):
    ok("add", "b", "1", cwd=store)
    ok("add", "a", "1", cwd=store)
    ok("commit", "-m", "base", cwd=store)
    ok("add", "c", "new", cwd=store)
    ok("add", "a", "changed", cwd=store)
    assert ok("rm", "b", cwd=store) == "Staged deletion of b\n"
    out = ok("status", cwd=store)
    assert out.splitlines()[2:] == ["Staged:", "  ~ a", "  - b", "  + c"]
    assert ok("diff", cwd=store) == '~ a\n  - "1"\n  + "changed"\n- b\n  - "1"\n+ c\n  + "new"\n'


def test_unborn_store_texts(store):
    assert ok("log", cwd=store) == "no commits yet\n"
    assert ok("status", cwd=store) == "On branch main\n  (no commits yet)\nnothing staged\n"
    assert ok("show", cwd=store) == "(empty)\n"
    assert ok("branch", cwd=store) == "no branches yet\n"


def test_content_forms_and_compact_json(store):
    ok("add", "n", "--content-json", '{"b": [1, 2.0, null, true], "a": {"z": "é", "y": 1e10}}', cwd=store)
    ok("add", "s", cwd=store, input="from stdin  \n\n")
    (store / "c.json").write_text("[1.5, -0]")
    ok("add", "f", "--content-file", "c.json", cwd=store)
    assert ok("show", cwd=store) == (
        'f\n  [1.5,0]\n'
        'n\n  {"a":{"y":10000000000.0,"z":"é"},"b":[1,2.0,null,true]}\n'
        's\n  "from stdin"\n'
    )


def test_multiline_messages_in_log(store):
    ok("add", "a", "1", cwd=store)
    ok("commit", "-m", "subject\n\nbody line\r\n", "--time", "0", "--author", "", cwd=store)
    log = ok("log", cwd=store)
    assert log.endswith("Author: \nDate:   1970-01-01 00:00:00Z\n\n    subject\n    \n    body line\n\n")
    assert ok("log", "--oneline", cwd=store).endswith(" subject\n")


def test_no_subcommand_prints_the_banner(tmp_path):
    out = ok(cwd=tmp_path)
    lines = out.splitlines()
    assert lines[0].startswith("mnem ") and lines[1] == "Version control for AI agent memory. Run `mnem --help`."


def test_export_to_a_file_reports_on_stderr(store):
    ok("add", "a", "1", cwd=store)
    ok("commit", "-m", "x", cwd=store)
    result = run_mnem("export", "-o", "out.json", cwd=store)
    assert result.out == "" and result.err == "Exported 3 object(s) to out.json\n"
    assert not (store / "out.json").read_text().endswith("\n")


def test_time_rendering_vectors():
    assert fmt_time(0) == "1970-01-01 00:00:00Z"
    assert fmt_time(1757170500000) == "2025-09-06 14:55:00Z"
    assert fmt_time(1582934400000) == "2020-02-29 00:00:00Z"
    assert fmt_time(-1) == "1969-12-31 23:59:59Z"


def test_colour_only_on_a_terminal_without_no_color(store):
    import os
    import pty
    import subprocess

    from conftest import MNEM

    ok("add", "a", "1", cwd=store)

    def on_tty(env):
        leader, follower = pty.openpty()
        proc = subprocess.run([MNEM, "status"], cwd=store, stdout=follower, stderr=subprocess.PIPE, env=env, timeout=30)
        os.close(follower)
        data = os.read(leader, 65536)
        os.close(leader)
        assert proc.returncode == 0
        return data

    url = pg_stores.url_of(store)
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"} | ({"MNEM_STORE": url} if url else {})
    assert b"\x1b[38;5;140mmain\x1b[0m" in on_tty(env)
    assert b"\x1b[" not in on_tty({**env, "NO_COLOR": ""})
