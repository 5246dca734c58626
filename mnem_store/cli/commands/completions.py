"""``mnem completions SHELL``: a completion script generated from the parser itself."""

from __future__ import annotations

import argparse

from ..context import Context, Outcome
from ..dispatch import COMMANDS, build_parser

SHELLS = ("bash", "zsh", "fish", "powershell", "elvish")


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``completions``' one argument, the shell."""
    parser.add_argument("shell", choices=SHELLS, help="which shell to generate for")


def _words() -> tuple[list[str], dict[str, list[str]]]:
    """Subcommand names and each one's long options, read from the real parser."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    options = {
        name: sorted(
            opt for action in sub.choices[name]._actions for opt in action.option_strings if opt.startswith("--")
        )
        for name in COMMANDS
    }
    return list(COMMANDS), options


def script(shell: str) -> str:
    """The completion script for ``shell`` (one of ``SHELLS``).

    Every script completes subcommand names; the bash and fish ones also
    complete each subcommand's long options.
    """
    names, options = _words()
    if shell == "bash":
        cases = "".join(f"        {n}) opts=\"{' '.join(options[n])}\" ;;\n" for n in names)
        return (
            "_mnem() {\n"
            "    local cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]} opts\n"
            "    if [ \"$COMP_CWORD\" -eq 1 ]; then "
            f"COMPREPLY=($(compgen -W \"{' '.join(names)} --help --version --json -C --store\" -- \"$cur\")); "
            "return; fi\n"
            "    case \"$cmd\" in\n" + cases + "        *) opts=\"\" ;;\n    esac\n"
            "    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n}\ncomplete -F _mnem mnem\n"
        )
    if shell == "zsh":
        return "#compdef mnem\n_arguments '1: :(" + " ".join(names) + ")' '*:: :_files'\n"
    if shell == "fish":
        lines = [f"complete -c mnem -n '__fish_use_subcommand' -a {n}\n" for n in names]
        for n in names:
            lines += [f"complete -c mnem -n '__fish_seen_subcommand_from {n}' -l {o[2:]}\n" for o in options[n]]
        return "".join(lines)
    if shell == "powershell":
        return (
            "Register-ArgumentCompleter -Native -CommandName mnem -ScriptBlock {\n"
            "    param($wordToComplete)\n"
            f"    @({', '.join(repr(n) for n in names)}) | Where-Object {{ $_ -like \"$wordToComplete*\" }}\n}}\n"
        )
    return "set edit:completion:arg-completer[mnem] = {|@words| put " + " ".join(names) + " }\n"


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Print the script; the JSON result carries it too, with the shell's name."""
    text = script(args.shell)
    return Outcome({"shell": args.shell, "script": text}, text)
