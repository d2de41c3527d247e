"""The ``cardtable`` command: one entry point, one subcommand per job.

Each subcommand lives in the package that owns its concern and is imported
only when used, so ``cardtable replay`` never loads OpenCV and ``cardtable
recognise`` never loads Flask.  A subcommand is a function ``main(argv) -> int``.
"""

from __future__ import annotations

import importlib
import sys

# name -> (module:function, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "replay": ("cardtable.replay_cli:main", "judge a table event log (JSON Lines) and print verdicts and state"),
    "recognise": ("vision.cli:main", "recognise the cards in images and print them as JSON"),
    "serve": ("web.cli:main", "serve the dashboard and JSON API without a camera"),
    "run": ("cardtable.run:main", "the whole product: camera, recognition, referee, storage, LEDs, dashboard"),
    "demo": ("cardtable.demo:main", "play bundled footage of a game through the real pipeline"),
    "markers": ("vision.markers:main", "write the printable sheet of the four table-corner markers"),
    "calibrate": ("cardtable.calibrate:main", "find the table and lay out the seat zones from the corner markers"),
}


def usage() -> str:
    lines = ["usage: cardtable COMMAND [ARGS...]", "", "commands:"]
    width = max(len(name) for name in COMMANDS)
    for name, (_, text) in COMMANDS.items():
        lines.append(f"  {name.ljust(width)}  {text}")
    lines.append("")
    lines.append("Run 'cardtable COMMAND --help' for a command's options.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(usage())
        return 0
    name, rest = args[0], args[1:]
    if name == "recognize":  # the American spelling works too
        name = "recognise"
    if name not in COMMANDS:
        print(f"cardtable: unknown command '{name}'\n\n{usage()}", file=sys.stderr)
        return 2
    module_name, func_name = COMMANDS[name][0].split(":")
    func = getattr(importlib.import_module(module_name), func_name)
    return int(func(rest) or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
