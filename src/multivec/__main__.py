"""The project's command line: ``multivec COMMAND ...`` (console script) or ``python -m multivec COMMAND ...``.

Commands are entries of ``COMMANDS`` (name -> (help, add_arguments, run)); a later
command is one more entry, and ``--help`` lists each with its one-line help (``DESCRIPTION``,
plain text). User errors (unreadable or unknown input, missing resources, a failed download)
print one line ``error: ...`` to stderr and exit with status 1, without a traceback.
``main`` returns the exit status; the console script and ``python -m`` pass it to ``sys.exit``.
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
from typing import Callable

from multivec.io import MalformedInputError
from multivec.io.resources import ResourceError

USER_ERRORS: tuple[type[BaseException], ...] = (MalformedInputError, ResourceError, OSError)

DESCRIPTION = ("The command line of multivec, the pipeline that reproduces NUGGET, the sub-sentence encoder and "
               "document-embedding distillation: inspect the artifacts a run wrote, write a data mirror for machines "
               "without network access, and write the rehearsal's fixture mirror.")


def _inspect_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", nargs="?", help="an artifact the pipeline wrote (file or folder)")
    parser.add_argument("--n", type=int, default=3, help="how many samples to show (default 3)")
    parser.add_argument("--tokenizer", default=None,
                        help="also count subwords with this tokenizer (e.g. minilm) for text fields")
    parser.add_argument("--types", action="store_true",
                        help="list the artifact types inspect knows and which DAG outputs each describes")


def _inspect_run(args: argparse.Namespace) -> int:
    from multivec.inspection import InspectError, inspect_path, supported_types

    if args.types:
        from multivec.inspection.kinds import ARTIFACT_KINDS

        print("artifact types, most specific first:\n" + supported_types())
        print("\nDAG outputs and their types:")
        for kind in ARTIFACT_KINDS:
            print(f"  {kind.pattern}: {kind.inspector} ({kind.what})")
        return 0
    if args.path is None:
        raise InspectError("inspect needs a PATH (or --types)")
    inspect_path(args.path, n=args.n, tokenizer=args.tokenizer)
    return 0


def _rehearsal_mirror_arguments(parser: argparse.ArgumentParser) -> None:
    from multivec.rehearsal.fixture_mirror import add_arguments

    add_arguments(parser)


def _rehearsal_mirror_run(args: argparse.Namespace) -> int:
    from multivec.rehearsal.fixture_mirror import run

    return run(args)


def _mirror_arguments(parser: argparse.ArgumentParser) -> None:
    from multivec.data.mirror import add_arguments

    add_arguments(parser)


def _mirror_run(args: argparse.Namespace) -> int:
    from multivec.data.mirror import run

    return run(args)


def _export_model_arguments(parser: argparse.ArgumentParser) -> None:
    from multivec.interop.cli import add_model_arguments

    add_model_arguments(parser)


def _export_model_run(args: argparse.Namespace) -> int:
    from multivec.interop.cli import run_model

    return run_model(args)


def _export_run_arguments(parser: argparse.ArgumentParser) -> None:
    from multivec.interop.cli import add_run_arguments

    add_run_arguments(parser)


def _export_run_run(args: argparse.Namespace) -> int:
    from multivec.interop.cli import run_run

    return run_run(args)


COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]] = {
    "inspect": ("say what an artifact is: type, counts, schema, statistics, samples", _inspect_arguments, _inspect_run),
    "mirror": ("write a data mirror of every source a scale reads (copied, built or downloaded; sha256-checked)",
               _mirror_arguments, _mirror_run),
    "rehearsal-mirror": ("write the rehearsal's fixture data mirror (upstream formats, tiny models, registry "
                         "overlay) for config/rehearsal.yaml", _rehearsal_mirror_arguments, _rehearsal_mirror_run),
    "export-model": ("export a trained model folder as a sentence-transformers folder (SentenceTransformer or "
                     "MultiVectorEncoder) with a model card", _export_model_arguments, _export_model_run),
    "export-run": ("write a ranking evaluation's rankings as a TREC run and qrels (and the task in BEIR's layout)",
                   _export_run_arguments, _export_run_run),
}


def _prog() -> str:
    """``multivec`` when started as the console script, else ``python -m multivec``."""
    return "multivec" if os.path.basename(sys.argv[0] or "") == "multivec" else "python -m multivec"


def _command_list() -> str:
    width = max(map(len, COMMANDS)) + 2
    return "commands:\n" + "\n".join(f"  {name:<{width}}{help_text}" for name, (help_text, _, _) in COMMANDS.items())


def main(argv: list[str] | None = None) -> int:
    prog = _prog()
    parser = argparse.ArgumentParser(prog=prog, description=textwrap.fill(DESCRIPTION, 100),
                                     epilog=f"{_command_list()}\n\nRun '{prog} COMMAND --help' for a command's options.",
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                     help="one of: " + ", ".join(COMMANDS))
    for name, (help_text, add_arguments, _) in COMMANDS.items():
        add_arguments(commands.add_parser(name, description=help_text))
    args = parser.parse_args(argv)
    from multivec.data.download import DownloadError
    from multivec.inspection.common import InspectError, terminal_safe

    try:
        return COMMANDS[args.command][2](args)
    except (InspectError, DownloadError, *USER_ERRORS) as err:
        # A message may quote a data file (a value, a file name): printed terminal-safe, like inspect's output.
        message = [terminal_safe(line) for line in str(err).splitlines()] or [""]
        print(f"error: {message[0]}", file=sys.stderr)
        for line in message[1:]:
            print(line, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
