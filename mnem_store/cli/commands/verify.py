"""``mnem verify`` (extension): re-hash and cross-check the whole store; exit 0 only when whole."""

from __future__ import annotations

import argparse

from ... import porcelain
from ...verify import VerifyError
from ..context import Context, Outcome


def register(parser: argparse.ArgumentParser) -> None:
    """``verify`` takes no arguments of its own."""


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Verify the store; any problem raises ``VerifyError``, which lists them all."""
    report = porcelain.verify(ctx.repo())
    if report.problems:
        raise VerifyError(report)
    counts = report.counts()
    text = (f"verified {report.objects} object(s): {report.commits} commit(s), {report.states} state(s), "
            f"{report.nodes} node reference(s), {report.refs} ref(s)"
            f"{f', {report.redacted} redacted node version(s)' if report.redacted else ''}; the store is whole\n")
    return Outcome({"ok": True, **counts, "problems": []}, text)
