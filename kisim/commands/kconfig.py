"""``kisim defconfig|menuconfig|olddefconfig|savedefconfig``: the kernel's config targets.

Each mirrors the ``make`` target of the same name (scripts/kconfig/Makefile)
over ``arches/<arch>/Kconfig``; the work is done by :mod:`kconfig`.
"""
from __future__ import annotations

import argparse
import sys

import kconfig
from kconfig import KconfigError
from kisim.commands.common import add_arch, path


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the four configuration subcommands."""
    p = subparsers.add_parser("defconfig", help="write a .config from the arch's defconfig",
                              description="Write the full configuration of arches/ARCH/"
                                          "defconfig (make defconfig), keeping FILE.old.")
    add_arch(p)
    p.add_argument("-o", "--output", default=".config", metavar="FILE", type=path,
                   help="configuration to write (default .config)")
    p.set_defaults(func=cmd_defconfig)

    p = subparsers.add_parser("menuconfig",
                              help="edit a .config in kconfiglib's terminal menuconfig",
                              description="Edit --config in kconfiglib's menuconfig (make "
                                          "menuconfig; a terminal is needed). Saves are written "
                                          "under a temporary name and renamed, keeping FILE.old.")
    add_arch(p)
    _add_config(p)
    p.set_defaults(func=cmd_menuconfig)

    p = subparsers.add_parser("olddefconfig",
                              help="update a .config: new symbols get their defaults",
                              description="Update --config as make olddefconfig does: new "
                                          "symbols get their defaults, and an assignment that "
                                          "cannot take (an unmet dependency, a select, a range) "
                                          "the value its Kconfig allows, with a warning line "
                                          "each. FILE.old keeps the previous file.")
    add_arch(p)
    _add_config(p)
    p.set_defaults(func=cmd_olddefconfig)

    p = subparsers.add_parser("savedefconfig", help="write the minimal defconfig of a .config",
                              description="Write the minimal configuration that gives --config "
                                          "(make savedefconfig): only the values that differ "
                                          "from their defaults.")
    add_arch(p)
    _add_config(p)
    p.add_argument("-o", "--output", default="defconfig", metavar="FILE", type=path,
                   help="minimal configuration to write (default defconfig)")
    p.set_defaults(func=cmd_savedefconfig)


def _add_config(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", default=".config", metavar="FILE",
                        help="configuration file (default .config)")


def cmd_defconfig(args: argparse.Namespace) -> int:
    kconfig.write_config(kconfig.defconfig(args.arch), args.output)
    print(f"# configuration written to {args.output} (from {args.arch} defconfig)")
    return 0


def cmd_olddefconfig(args: argparse.Namespace) -> int:
    for line in kconfig.olddefconfig(args.arch, args.config):
        print(f"kisim: warning: {line}", file=sys.stderr)
    print(f"# configuration written to {args.config}")
    return 0


def cmd_savedefconfig(args: argparse.Namespace) -> int:
    kconfig.savedefconfig(kconfig.load_config(args.arch, args.config), args.output,
                          source=args.config)
    print(f"# minimal configuration written to {args.output}")
    return 0


def cmd_menuconfig(args: argparse.Namespace) -> int:
    """Run kconfiglib's terminal menuconfig on ``--config`` (see :func:`kconfig.menuconfig`)."""
    if not (sys.stdin and sys.stdout and sys.stdin.isatty() and sys.stdout.isatty()):
        raise KconfigError("menuconfig needs a terminal (stdin and stdout are not a TTY); "
                           "edit the file and run 'kisim olddefconfig' instead")
    kconfig.menuconfig(args.arch, args.config)
    return 0
