"""Dispatch for the ``mnem`` command line: the parser, one invocation, output and exit codes.

Both the package (``mnem_store.cli``, the console script) and the worker
command (``commands/serve.py``) import this module, so no command module
imports its parent package: ``invoke`` is the single code path of a one-shot
process and of every worker request.  Each subcommand lives in
``commands/<verb>.py`` with ``register(parser)`` and ``run(args, ctx) ->
Outcome``.  Every failure maps to upstream's ``Error: ...`` text (or the
``--json`` error document) and an exit status, so no traceback ever reaches
a user.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, BinaryIO, NamedTuple

from .. import CONTRACT_VERSION, __version__, clock
from ..errors import MnemError, StoreIoError, UsageError, printable
from ..location import Address
from ..repo import Repo
from . import jsonout
from .context import Context, Outcome, check_text
from .parser import HelpShown, Parser
from .render import terminal_safe

if TYPE_CHECKING:
    from .parsecache import ParseCache

__all__ = ["COMMANDS", "FEATURES", "PLUMBING", "Streams", "build_parser", "error_document", "invoke", "main",
           "self_description"]

#: Subcommand name -> (module under ``commands``, one-line help).
COMMANDS: dict[str, tuple[str, str]] = {
    "init": ("init", "Create a new memory store in a directory (default: the current one)."),
    "add": ("add", "Stage a memory node for the next commit."),
    "rm": ("rm", "Stage the deletion of a node from the next commit."),
    "unstage": ("unstage", "Drop a staged add or deletion (extension)."),
    "commit": ("commit", "Record the staged memory state as a commit."),
    "write": ("write", "Record a batch of writes and deletions as one commit, bypassing staging (extension)."),
    "stamps": ("stamps", "Print the memory at a commit with when each node was created and last updated (extension)."),
    "ls": ("ls", "List the node ids in the memory at a commit, without reading the nodes (extension)."),
    "touch": ("touch", "Restart the TTL leases of nodes, as a read that refreshes them does (extension)."),
    "expire": ("expire", "Remove the nodes whose TTL lease has run out, as one commit (extension)."),
    "embed": ("embed", "Store embeddings for values already in memory, without a commit (extension)."),
    "similar": ("similar", "Rank nodes by the similarity of their stored embeddings to a query vector (extension)."),
    "search": ("search", "A page of LangGraph items: filtered, ranked and paged in one read (extension)."),
    "namespaces": ("namespaces", "List the namespaces LangGraph's items lie in, as list_namespaces does (extension)."),
    "log": ("log", "Show the commit history from HEAD, newest first."),
    "status": ("status", "The current branch, HEAD, and what is staged."),
    "branch": ("branch", "List, create, or delete branches."),
    "checkout": ("checkout", "Move HEAD to a branch or commit."),
    "resolve": ("resolve", "Print the commit a branch name or id prefix names (extension)."),
    "show": ("show", "Print the full memory at a commit, or working memory with no argument."),
    "blame": ("blame", "Resolve a memory node to the commit and provenance that introduced it."),
    "bisect": ("bisect", "Find the first commit where a memory node reaches a given state."),
    "merge": ("merge", "Merge another branch or commit into the current branch."),
    "diff": ("diff", "Show what changed between two memory states."),
    "revert": ("revert", "Undo, as one commit, every fact a source, step, observation, author or commit set "
               "(extension)."),
    "redact": ("redact", "Remove the bytes of chosen node versions from the whole history, ids unchanged "
               "(extension)."),
    "redactions": ("redactions", "List what was redacted, by whom, when and why (extension)."),
    "completions": ("completions", "Print a shell completion script to stdout."),
    "export": ("export", "Dump the whole store (every commit, ref and HEAD) as one JSON value."),
    "import": ("import_", "Create a new store from an export (the reverse of `export`)."),
    "reindex": ("reindex", "Check every commit's state against its id and repair damaged snapshots (extension)."),
    "verify": ("verify", "Re-hash and cross-check every object, ref and index entry (extension)."),
    "gc": ("gc", "Drop the commits and objects no branch, HEAD or tracking branch reaches, and shrink the store "
           "(extension)."),
    "remote": ("remote", "Add, remove or list the other stores this store knows by name (extension)."),
    "fetch": ("fetch", "Bring a remote's new commits and move its tracking branches (extension)."),
    "push": ("push", "Send a branch to a remote; refuses a non-fast-forward unless --force-with-lease (extension)."),
    "pull": ("pull", "Fetch from a remote and merge its branch into the current branch (extension)."),
    "clone": ("clone", "Create a new store holding another store's history, with remote origin (extension)."),
    "upload-pack": ("upload_pack", "Answer a fetch: advertise the branches, or send a pack (extension, plumbing)."),
    "receive-pack": ("receive_pack", "Answer a push: take a pack and move one branch (extension, plumbing)."),
    "serve": ("serve", "Answer many commands over one process: one JSON request per line (extension)."),
    "ui": ("ui", "Serve a local, read-only web page of the memory, its history and provenance (extension)."),
}

#: Verbs that programs run, not people (a remote's server side, the worker): left out of the list of verbs an
#: unknown one is answered with, as git's short list leaves out its plumbing.
PLUMBING = frozenset({"upload-pack", "receive-pack", "serve"})

FEATURES = ["verify", "serve", "write", "unstage", "resolve", "show-node", "reindex", "commit-time", "add-provenance",
            "merge-time", "merge-resolve-json", "stamps", "stamps-prefix", "ls", "show-page", "serve-framed", "ttl",
            "vectors", "export-seal", "now", "remotes", "remotes-http", "diff-range",
            "ls-objects",
            "gc",
            "log-filter", "write-branch", "write-if-absent", "rev-time", "log-time", "valid-at", "ls-last", "pack-file",
            "write-reserved", "receive-pusher", "search", "namespaces", "pack-redactions",
            "search-valid-at",
            "revert", "redact", "write-erase", "redaction-ranges", "write-orphan", "gc-plain"]


def _global_options(parser: argparse.ArgumentParser, default: Any) -> None:
    parser.add_argument(
        "--json", action="store_true", default=default, help="print one JSON document (see docs/cli-json.md)"
    )
    parser.add_argument(
        "-C", "--store", dest="store", metavar="PATH", default=default,
        help="the store whose root is exactly PATH (or its .mnem folder, or a postgresql:// URL); nothing walks up "
        "from it, unlike git's -C",
    )
    parser.add_argument(  # kept as text and checked by ``invoke``: a worker's parse cache then fills it in
        "--now", metavar="MS", default=default,
        help="the time now, in Unix ms, for commits without --time and TTL leases (default: the system clock)",
    )


def subcommand_of(argv: list[str]) -> str | None:
    """The subcommand an argv names, found without importing any command module.

    One-shot start-up then registers (and imports) only that command; anything
    unusual (help, unknown options) gets the full parser and its messages.
    """
    tokens = iter(argv)
    for token in tokens:
        if token in ("--json", "-V", "--version"):
            continue
        if token in ("-C", "--store", "--now"):
            next(tokens, None)
            continue
        if token.startswith(("--store=", "--now=")) or (token.startswith("-C") and len(token) > 2):
            continue
        return token if token in COMMANDS else None
    return None


def build_parser(
    exclude: frozenset[str] = frozenset(), only: str | None = None
) -> argparse.ArgumentParser:
    """The command-line parser.

    ``only`` registers just that subcommand (fast one-shot start-up);
    ``exclude`` leaves subcommands out (a worker drops ``serve``).
    """
    parser = Parser(prog="mnem", description="Version control for AI agent memory.")
    parser.hidden = PLUMBING
    _global_options(parser, None)
    parser.add_argument("-V", "--version", action="store_true", help="print version")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name, (module, summary) in COMMANDS.items():
        if name in exclude or (only is not None and name != only):
            continue
        command_parser = sub.add_parser(name, help=summary, description=summary)
        _global_options(command_parser, argparse.SUPPRESS)  # `mnem show --json` as well as `mnem --json show`
        _module(module).register(command_parser)
    return parser


_modules: dict[str, Any] = {}


def _module(name: str) -> Any:
    """A command's module, imported on first use (a worker asks for the same few again and again)."""
    found = _modules.get(name)
    if found is None:
        found = _modules[name] = importlib.import_module(f"{__package__}.commands.{name}")
    return found


def self_description() -> dict[str, Any]:
    """What ``mnem --version --json`` prints: how a client tells our contract apart."""
    from ..layout import FORMAT_VERSION

    return {
        "name": "mnem",
        "version": __version__,
        "format_version": FORMAT_VERSION,
        "contract": CONTRACT_VERSION,
        "implementation": "mnem_store",
        "features": FEATURES,
    }


class Streams(NamedTuple):
    """Where one invocation reads and writes: the process's own, or a worker request's buffers."""

    stdin: BinaryIO
    stdout: BinaryIO
    stderr: BinaryIO
    tty: bool = False

    @classmethod
    def process(cls) -> Streams:
        """This process's own streams, as bytes; ``tty`` says whether stdout is a terminal."""
        return cls(sys.stdin.buffer, sys.stdout.buffer, sys.stderr.buffer, sys.stdout.isatty())


def _emit(stream: BinaryIO, text: str) -> None:
    if text:
        stream.write(text.encode("utf-8", "surrogateescape"))
        stream.flush()


def _json_doc(value: Any) -> str:
    try:
        return jsonout.dumps(value) + "\n"
    except TypeError:  # undecodable argv bytes (surrogates) quoted in a message: show them as U+FFFD
        return jsonout.dumps(_printable(value)) + "\n"


def _printable(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    if isinstance(value, dict):
        return {_printable(k): _printable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_printable(v) for v in value]
    return value


#: Arguments that name files: any bytes the OS allows.  Every other argument
#: becomes stored or printed text and must be valid UTF-8.
PATH_ARGUMENTS = frozenset({"store", "path", "file", "output", "content_file"})


def _is_text(argv: list[str]) -> bool:
    """Whether every argument is text UTF-8 can carry (no surrogate-escaped bytes): one check, not one per value."""
    try:
        "".join(argv).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check_text_arguments(args: argparse.Namespace) -> None:
    for name, value in vars(args).items():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and name not in PATH_ARGUMENTS:
                check_text(item, f"the {name.rstrip('_').replace('_', '-')} argument")


def main(argv: list[str] | None = None) -> int:
    """The console script: run one invocation on the process's own streams."""
    return invoke(sys.argv[1:] if argv is None else argv, Streams.process())


def invoke(
    argv: list[str],
    streams: Streams,
    *,
    parser: argparse.ArgumentParser | ParseCache | None = None,
    opener: Callable[[Address, bool], Repo] | None = None,
) -> int:
    """Run one ``mnem`` command line against ``streams``; returns the exit status.

    This is the single code path of both a one-shot process and each request
    of a worker (``mnem serve``), so the two can never disagree.  A worker
    passes a prebuilt ``parser`` (a ``ParseCache``) and an ``opener`` that keeps stores open.
    ``--now`` fixes the clock for this invocation only: a worker's next
    request reads the clock the worker itself was started with.
    """
    want_json = "--json" in argv
    ctx: Context | None = None
    outer_now = clock.fixed()
    try:
        args = (parser or build_parser(only=subcommand_of(argv))).parse_args(argv)
        want_json = bool(args.json)
        if not _is_text(argv):  # undecodable bytes from the OS (a worker's JSON request cannot hold any)
            _check_text_arguments(args)
        if args.now is not None:
            clock.fix(clock.parse_now(args.now))
        if args.version:
            _emit(streams.stdout, _json_doc(self_description()) if want_json else f"mnem {__version__}\n")
            return 0
        if args.command is None:
            _emit(streams.stdout, f"mnem {__version__}\nVersion control for AI agent memory. Run `mnem --help`.\n")
            return 0
        ctx = Context(
            json=want_json,
            store_option=args.store,
            stdin=streams.stdin,
            colour=streams.tty and "NO_COLOR" not in os.environ,
            opener=opener,
            stderr=streams.stderr,
        )
        outcome: Outcome = _module(COMMANDS[args.command][0]).run(args, ctx)
        if want_json:
            _emit(streams.stdout, _json_doc(outcome.data))
            return 0
        _emit(streams.stdout, terminal_safe(outcome.rendered(), ctx.colour))
        _emit(streams.stderr, terminal_safe(outcome.stderr, False))
        return outcome.exit_code
    except HelpShown as shown:
        _emit(streams.stdout, shown.text)
        return 0
    except MnemError as exc:
        return _fail(exc, want_json, streams)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 1
    except Exception as exc:  # a bug: still a typed error, never a traceback
        if os.environ.get("MNEM_DEBUG"):
            raise
        # escaped: an exception's text may quote another party (http.client's BadStatusLine holds a remote's line)
        return _fail(StoreIoError(f"internal error: {type(exc).__name__}: {printable(str(exc))}"), want_json, streams)
    finally:
        clock.fix(outer_now)
        if ctx is not None:
            ctx.close()


def error_document(exc: MnemError) -> str:
    """The ``--json`` error document for ``exc``, one line (docs/cli-json.md, "Results and errors").

    ``message`` is upstream's text; ``detail`` is the same without the
    Display prefix, for callers that print the code beside it.
    """
    message = f"{exc}: {exc.cause}" if exc.cause else str(exc)
    error = {"code": exc.code, "message": message, "detail": message.removeprefix(exc.prefix), **exc.details()}
    return _json_doc({"error": error})


def _fail(exc: MnemError, want_json: bool, streams: Streams) -> int:
    if want_json:
        _emit(streams.stdout, error_document(exc))
    elif isinstance(exc, UsageError):
        _emit(streams.stderr, terminal_safe(f"error: {exc}\n", False))
    else:
        problems = exc.details().get("problems", [])  # verify: every problem, one per line
        listed = "".join(f"{p['what']} {p['id']}: {p['message']}\n" for p in problems)
        caused = f"\nCaused by:\n    {exc.cause}\n" if exc.cause else ""
        _emit(streams.stdout, terminal_safe(listed, False))
        _emit(streams.stderr, terminal_safe(f"Error: {exc}\n{caused}", False))
    return exc.exit_code
