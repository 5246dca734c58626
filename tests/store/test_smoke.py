"""The golden scenario end to end through the real binary."""

from conftest import run_mnem


def test_golden_scenario_gives_upstream_commit_ids(store):
    assert run_mnem("add", "greeting", "hello", cwd=store).code == 0
    first = run_mnem("--json", "commit", "-m", "first commit", "--author", "agent", "--time", "1757000000000",
                     cwd=store)
    assert first.json["id"] == "925570c5e44700e4e36d74cffeaa010cbf3caeecb364a383f955ff835d088814"
    assert run_mnem("rm", "greeting", cwd=store).code == 0
    second = run_mnem("commit", "-m", "second", "--author", "agent", "--time", "1757000060000", cwd=store)
    assert second.out == "[fa02c3c4d1d9] second\n"
