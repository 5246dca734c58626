"""``mnem redactions`` (extension): list every redaction record, oldest first: which version, who, when, why."""

from __future__ import annotations

import argparse

from ... import porcelain
from ..context import Context, Outcome
from ..render import short


def register(parser: argparse.ArgumentParser) -> None:
    """``redactions`` takes no arguments."""


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Print each record (JSON: ``{"redactions": [{"object", "id", "at", "by", "reason"}]}``)."""
    records = porcelain.redactions(ctx.repo())
    return Outcome({"redactions": [record.to_dict() for record in records]},
                   lambda: "".join(f"{ctx.paint('75', short(r.object))} {r.node_id}: {r.shown()}\n" for r in records))
