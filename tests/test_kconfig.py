"""The Kconfig menus, the strict kconfiglib wrapper and the config subcommands.

Every test that is about an arch is parametrized over ``arches.NAMES``.
"""
from __future__ import annotations

import os
import select
import shutil
import sys
import time
from pathlib import Path

import kconfiglib
import pytest

import kconfig
from arches import NAMES
from kconfig import KconfigError
from kisim.cli import main

GENERIC = sorted(p.name for p in (kconfig.SRCTREE / "kconfig").glob("Kconfig.*"))
INSTRUMENTATION = ["Kconfig.marker", "Kconfig.immediate", "Kconfig.tracepoints",
                   "Kconfig.jump_label", "Kconfig.kprobes", "Kconfig.ftrace",
                   "Kconfig.kmemtrace", "Kconfig.patching"]
HAVE = ["HAVE_KPROBES", "HAVE_KRETPROBES", "HAVE_IMMEDIATE", "HAVE_JUMP_LABEL",
        "HAVE_FUNCTION_TRACER", "HAVE_DYNAMIC_FTRACE", "HAVE_FUNCTION_GRAPH_TRACER"]
FEATURES = ["SMP", "MARKERS", "IMMEDIATE", "TRACEPOINTS", "JUMP_LABEL", "KPROBES",
            "KRETPROBES", "OPTPROBES", "FUNCTION_TRACER", "DYNAMIC_FTRACE", "KMEMTRACE"]


def has_optprobes(arch: str) -> bool:
    """Linux: x86 and ARM select HAVE_OPTPROBES, PowerPC only if PPC64."""
    return arch != "ppc32"


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def menu(kconf: kconfiglib.Kconfig, title: str) -> kconfiglib.MenuNode:
    found = [n for n in kconf.node_iter() if n.item is kconfiglib.MENU and n.prompt[0] == title]
    assert len(found) == 1, f"expected one menu {title!r}"
    return found[0]


def parents(node: kconfiglib.MenuNode) -> list[str]:
    titles = []
    while node.parent is not None:
        node = node.parent
        titles.append(node.prompt[0] if node.prompt else "")
    return titles


# --- menus ---------------------------------------------------------------

def test_generic_files_exist() -> None:
    for name in INSTRUMENTATION + ["Kconfig.arch", "Kconfig.smp"]:
        assert name in GENERIC


@pytest.mark.parametrize("arch", NAMES)
def test_arch_menu_sources_every_generic_file(arch: str) -> None:
    kconf = kconfig.load(arch)
    assert kconf.mainmenu_text == f"kisim/{arch} Kernel Configuration"
    assert set(kconf.kconfig_filenames) >= {f"kconfig/{name}" for name in GENERIC}
    text = (kconfig.SRCTREE / "arches" / arch / "Kconfig").read_text()
    for name in GENERIC:
        assert f'source "$(srctree)/kconfig/{name}"' in text


@pytest.mark.parametrize("arch", NAMES)
def test_instrumentation_support_menu(arch: str) -> None:
    kconf = kconfig.load(arch)
    menu(kconf, "Instrumentation Support")
    for node in kconf.node_iter():
        if isinstance(node.item, kconfiglib.Symbol) and node.prompt and \
                Path(node.filename).name in INSTRUMENTATION:
            assert "Instrumentation Support" in parents(node), node.item.name


@pytest.mark.parametrize("arch", NAMES)
def test_have_symbols_are_selected_not_prompted(arch: str) -> None:
    kconf = kconfig.load(arch)
    for name in HAVE:
        assert kconf.syms[name].str_value == "y", name
    assert kconf.syms["HAVE_OPTPROBES"].str_value == ("y" if has_optprobes(arch) else "n")
    for name in HAVE + ["HAVE_OPTPROBES"]:
        assert not any(node.prompt for node in kconf.syms[name].nodes), name


@pytest.mark.parametrize("arch", NAMES)
def test_dependencies_as_in_linux(arch: str) -> None:
    kconf = kconfig.load(arch)
    deps = {name: kconfiglib.expr_str(kconf.syms[name].direct_dep)
            for name in ("IMMEDIATE", "JUMP_LABEL", "KPROBES", "KRETPROBES",
                         "OPTPROBES", "FUNCTION_TRACER", "DYNAMIC_FTRACE", "KMEMTRACE",
                         "FUNCTION_GRAPH_TRACER")}
    assert deps == {"IMMEDIATE": "HAVE_IMMEDIATE", "JUMP_LABEL": "HAVE_JUMP_LABEL",
                    "KPROBES": "HAVE_KPROBES", "KRETPROBES": "KPROBES && HAVE_KRETPROBES",
                    "OPTPROBES": "KPROBES && HAVE_OPTPROBES",
                    "FUNCTION_TRACER": "HAVE_FUNCTION_TRACER",
                    "DYNAMIC_FTRACE": "FUNCTION_TRACER && HAVE_DYNAMIC_FTRACE",
                    "KMEMTRACE": "MARKERS",
                    "FUNCTION_GRAPH_TRACER": "HAVE_FUNCTION_GRAPH_TRACER && FUNCTION_TRACER"}


# --- strict .config loading ---------------------------------------------

@pytest.mark.parametrize("arch", NAMES)
def test_optprobes_only_where_the_arch_has_them(arch: str, tmp_path: Path) -> None:
    cfg = write(tmp_path / ".config", "CONFIG_KPROBES=y\nCONFIG_OPTPROBES=y\n")
    if has_optprobes(arch):
        assert kconfig.enabled(kconfig.load_config(arch, cfg))["OPTPROBES"] == "y"
    else:
        with pytest.raises(KconfigError) as err:
            kconfig.load_config(arch, cfg)
        assert f"{cfg}:2: CONFIG_OPTPROBES=y did not take" in str(err.value)
        assert "unmet dependency HAVE_OPTPROBES (=n)" in str(err.value)


@pytest.mark.parametrize("arch", NAMES)
def test_kmemtrace_needs_markers(arch: str, tmp_path: Path) -> None:
    cfg = write(tmp_path / ".config", "# CONFIG_MARKERS is not set\nCONFIG_KMEMTRACE=y\n")
    with pytest.raises(KconfigError) as err:
        kconfig.load_config(arch, cfg)
    message = str(err.value)
    assert message.startswith(f"{cfg}:2: CONFIG_KMEMTRACE=y")
    assert "MARKERS (=n)" in message and "\n" not in message


@pytest.mark.parametrize("option,why", [("MARKERS=maybe", "not a valid bool value (y or n)"),
                                        ("NR_CPUS=abc", "not a valid int value")])
def test_a_value_of_the_wrong_type_is_one_line(option: str, why: str, capsys) -> None:
    """kconfiglib leaves the assignment unset; the reason says so (no traceback)."""
    assert main(["build", "--arch", "arm", "--set", option]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].endswith(why), err


@pytest.mark.parametrize("arch", NAMES)
def test_capability_cannot_be_set_by_hand(arch: str, tmp_path: Path) -> None:
    off = write(tmp_path / "off", "# CONFIG_HAVE_KPROBES is not set\n")
    with pytest.raises(KconfigError, match=r"off:1: CONFIG_HAVE_KPROBES=n did not take "
                                           r".*selected by (X86|ARM|PPC)( && !THUMB2_KERNEL)? "
                                           r"\('kisim olddefconfig'"):
        kconfig.load_config(arch, off)
    on = write(tmp_path / "on", "CONFIG_MARKERS=y\nCONFIG_HAVE_OPTPROBES=y\n")
    if has_optprobes(arch):
        kconfig.load_config(arch, on)
    else:
        with pytest.raises(KconfigError, match=r"on:2: CONFIG_HAVE_OPTPROBES=y .*no prompt"):
            kconfig.load_config(arch, on)


@pytest.mark.parametrize("arch", NAMES)
def test_nr_cpus_range(arch: str, tmp_path: Path) -> None:
    ok = write(tmp_path / "ok", "CONFIG_SMP=y\nCONFIG_NR_CPUS=4\n")
    assert kconfig.enabled(kconfig.load_config(arch, ok))["NR_CPUS"] == "4"
    up = write(tmp_path / "up", "CONFIG_SMP=y\nCONFIG_NR_CPUS=9\n")
    with pytest.raises(KconfigError, match=r"up:2: .*range 2\.\.8"):
        kconfig.load_config(arch, up)
    assert kconfig.enabled(kconfig.load(arch))["NR_CPUS"] == "1"     # !SMP


@pytest.mark.parametrize("arch", NAMES)
@pytest.mark.parametrize("text, line, words", [
    ("CONFIG_SMP=y\nthis is not a config line\n", 2, "malformed line"),
    ("CONFIG_SMP=maybe\n", 1, "not a valid value"),
    ("CONFIG_MARKERS=y\nCONFIG_NO_SUCH_THING=y\n", 2, "undefined symbol NO_SUCH_THING"),
    ("CONFIG_MARKERS=y\n# CONFIG_MARKERS is not set\n", 2, "set more than once"),
])
def test_config_syntax_errors_give_file_line(arch: str, tmp_path: Path, text: str,
                                             line: int, words: str) -> None:
    cfg = write(tmp_path / "bad.config", text)
    with pytest.raises(KconfigError) as err:
        kconfig.load_config(arch, cfg)
    assert str(err.value).startswith(f"{cfg}:{line}: ")
    assert words in str(err.value)


def test_missing_or_binary_config(tmp_path: Path) -> None:
    with pytest.raises(KconfigError, match="no such configuration file"):
        kconfig.load_config(NAMES[0], tmp_path / "absent")
    binary = tmp_path / "binary"
    binary.write_bytes(b"\x7fELF\xf0\x80\n")
    with pytest.raises(KconfigError, match="not UTF-8"):
        kconfig.load_config(NAMES[0], binary)


# --- strict Kconfig parsing ---------------------------------------------

def copy_tree(arch: str, root: Path) -> Path:
    """A private srctree holding the generic files and one arch's Kconfig."""
    shutil.copytree(kconfig.SRCTREE / "kconfig", root / "kconfig",
                    ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    (root / "arches" / arch).mkdir(parents=True)
    shutil.copy(kconfig.SRCTREE / "arches" / arch / "Kconfig", root / "arches" / arch)
    return root / "arches" / arch / "Kconfig"


@pytest.mark.parametrize("arch", NAMES)
def test_kconfig_syntax_error_in_sourced_file(arch: str, tmp_path: Path) -> None:
    copy_tree(arch, tmp_path)
    generic = tmp_path / "kconfig" / "Kconfig.kprobes"
    lines = generic.read_text().count("\n")
    generic.write_text(generic.read_text() + "config\n")
    with pytest.raises(KconfigError) as err:
        kconfig.parse(f"arches/{arch}/Kconfig", srctree=tmp_path)
    assert str(err.value).startswith(f"kconfig/Kconfig.kprobes:{lines + 1}: error:")


@pytest.mark.parametrize("arch", NAMES)
def test_kconfig_syntax_error_in_arch_file(arch: str, tmp_path: Path) -> None:
    top = copy_tree(arch, tmp_path)
    top.write_text(top.read_text().replace("menu \"Instrumentation Support\"",
                                           "menu \"Instrumentation Support\"\nbogus here", 1))
    line = top.read_text().splitlines().index("bogus here") + 1
    with pytest.raises(KconfigError, match=rf"^arches/{arch}/Kconfig:{line}: error: .*bogus here"):
        kconfig.parse(f"arches/{arch}/Kconfig", srctree=tmp_path)


def test_kconfig_warning_is_an_error(tmp_path: Path) -> None:
    write(tmp_path / "Kconfig", 'config A\n\tbool "a"\n\tselect NOPE\n')
    with pytest.raises(KconfigError, match="^Kconfig:1: undefined symbol NOPE$"):
        kconfig.parse("Kconfig", srctree=tmp_path)


def test_kconfig_missing_source(tmp_path: Path) -> None:
    write(tmp_path / "Kconfig", 'config A\n\tbool "a"\n\nsource "$(srctree)/nothere"\n')
    with pytest.raises(KconfigError, match="^Kconfig:4: .*nothere.* not found"):
        kconfig.parse("Kconfig", srctree=tmp_path)


# --- defconfigs and outputs ---------------------------------------------

@pytest.mark.parametrize("arch", NAMES)
def test_defconfig_enables_every_feature_the_arch_has(arch: str) -> None:
    values = kconfig.enabled(kconfig.defconfig(arch))
    for name in FEATURES:
        want = "n" if name == "OPTPROBES" and not has_optprobes(arch) else "y"
        assert values[name] == want, name
    assert values["NR_CPUS"] == "8"


@pytest.mark.parametrize("arch", NAMES)
def test_defconfig_savedefconfig_round_trip(arch: str, tmp_path: Path) -> None:
    kconf = kconfig.defconfig(arch)
    kconfig.write_config(kconf, tmp_path / ".config")
    again = kconfig.load_config(arch, tmp_path / ".config")
    assert kconfig.config_hash_text(again) == kconfig.config_hash_text(kconf)
    kconfig.savedefconfig(again, tmp_path / "defconfig")
    assert (tmp_path / "defconfig").read_text() == kconfig.defconfig_path(arch).read_text()


@pytest.mark.parametrize("arch", NAMES)
def test_autoconf(arch: str, tmp_path: Path) -> None:
    out = tmp_path / "include" / "generated" / "autoconf.h"
    kconfig.write_autoconf(kconfig.defconfig(arch), out)
    text = out.read_text()
    for name in ["MARKERS", "IMMEDIATE", "TRACEPOINTS", "JUMP_LABEL", "KPROBES",
                 "FUNCTION_TRACER", "DYNAMIC_FTRACE", "KMEMTRACE", "SMP"]:
        assert f"#define CONFIG_{name} 1\n" in text
    assert "#define CONFIG_NR_CPUS 8\n" in text
    assert ("#define CONFIG_OPTPROBES 1\n" in text) == has_optprobes(arch)


@pytest.mark.parametrize("arch", NAMES)
def test_olddefconfig_fills_defaults(arch: str, tmp_path: Path) -> None:
    cfg = write(tmp_path / ".config", "CONFIG_MARKERS=y\n")
    kconfig.olddefconfig(arch, cfg)
    text = cfg.read_text()
    assert "CONFIG_MARKERS=y\n" in text
    assert "CONFIG_TRACEPOINTS=y\n" in text          # default y
    assert "# CONFIG_KPROBES is not set\n" in text
    assert "DO NOT EDIT" in text


@pytest.mark.parametrize("arch", NAMES)
def test_olddefconfig_resolves_what_a_strict_load_refuses(arch: str, tmp_path: Path) -> None:
    """An assignment with an unmet dependency (KMEMTRACE=y, MARKERS=n) is refused by
    every build, with the way out named; olddefconfig takes the Kconfig's value
    (n), as conf --olddefconfig does, reports the line, and the result loads."""
    cfg = write(tmp_path / ".config", "# CONFIG_MARKERS is not set\nCONFIG_KMEMTRACE=y\n")
    with pytest.raises(KconfigError, match=r"KMEMTRACE=y did not take .*olddefconfig"):
        kconfig.load_config(arch, cfg)
    changed = kconfig.olddefconfig(arch, cfg)
    assert changed == [f"{cfg}:2: CONFIG_KMEMTRACE=y did not take (value is n): "
                       "unmet dependency MARKERS (=n)"]
    assert kconfig.load_config(arch, cfg).syms["KMEMTRACE"].str_value == "n"
    assert kconfig.olddefconfig(arch, cfg) == []


@pytest.mark.parametrize("arch", NAMES)
def test_config_hash_text_is_canonical(arch: str, tmp_path: Path) -> None:
    one = write(tmp_path / "one", "CONFIG_MARKERS=y\nCONFIG_KPROBES=y\n")
    two = write(tmp_path / "two", "# a comment\nCONFIG_KPROBES=y\n\nCONFIG_MARKERS=y\n")
    text = kconfig.config_hash_text(kconfig.load_config(arch, one))
    assert text == kconfig.config_hash_text(kconfig.load_config(arch, two))
    assert text != kconfig.config_hash_text(kconfig.load(arch))
    assert "CONFIG_MARKERS=y\n" in text and "CONFIG_KMEMTRACE=n\n" in text


def test_config_hash_text_differs_per_arch() -> None:
    texts = {kconfig.config_hash_text(kconfig.defconfig(arch)) for arch in NAMES}
    assert len(texts) == len(NAMES)


def test_unknown_arch() -> None:
    with pytest.raises(ValueError, match="unknown arch"):
        kconfig.load("mips")


# --- CLI -----------------------------------------------------------------

@pytest.mark.parametrize("arch", NAMES)
def test_cli_defconfig_olddefconfig_savedefconfig(arch: str, tmp_path: Path, capsys) -> None:
    cfg, minimal = tmp_path / ".config", tmp_path / "defconfig"
    assert main(["defconfig", "--arch", arch, "-o", str(cfg)]) == 0
    assert "CONFIG_MARKERS=y" in cfg.read_text()
    assert main(["olddefconfig", "--arch", arch, "--config", str(cfg)]) == 0
    assert main(["savedefconfig", "--arch", arch, "--config", str(cfg), "-o", str(minimal)]) == 0
    assert minimal.read_text() == kconfig.defconfig_path(arch).read_text()
    assert capsys.readouterr().err == ""


def cli_error(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("kisim: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize("arch", NAMES)
def test_cli_errors(arch: str, tmp_path: Path, capsys) -> None:
    bad = write(tmp_path / ".config", "CONFIG_KMEMTRACE=y\n")
    assert "MARKERS" in cli_error(capsys, ["savedefconfig", "--arch", arch, "--config", str(bad)])
    cli_error(capsys, ["savedefconfig", "--arch", arch, "--config", str(tmp_path / "none")])
    assert "TTY" in cli_error(capsys, ["menuconfig", "--arch", arch, "--config", str(bad)])
    assert bad.read_text() == "CONFIG_KMEMTRACE=y\n"      # not rewritten
    # olddefconfig resolves it (conf --olddefconfig): a warning, and the Kconfig's value
    assert main(["olddefconfig", "--arch", arch, "--config", str(bad)]) == 0
    err = capsys.readouterr().err
    assert err.startswith("kisim: warning: ") and "unmet dependency MARKERS" in err, err
    assert "CONFIG_KMEMTRACE" not in bad.read_text()


def test_cli_unknown_arch(capsys) -> None:
    assert "unknown arch" in cli_error(capsys, ["defconfig", "--arch", "mips"])


def drive_menuconfig(argv: list[str], keys: list[bytes], timeout: float = 30.0) -> tuple[int, bytes]:
    """Run ``kisim`` on a pseudo-terminal and type ``keys``, each once the screen is quiet."""
    pty = pytest.importorskip("pty")
    pid, fd = pty.fork()
    if pid == 0:                                   # child: the real CLI on a TTY
        os.environ["TERM"] = "xterm"
        os.execv(sys.executable, [sys.executable, "-m", "kisim", *argv])
    out, pending, last = b"", list(keys), time.monotonic()
    deadline = last + timeout
    while time.monotonic() < deadline:
        if select.select([fd], [], [], 0.2)[0]:
            try:
                data = os.read(fd, 65536)
            except OSError:                        # EIO: the child closed the terminal
                break
            if not data:
                break
            out, last = out + data, time.monotonic()
        elif pending and time.monotonic() - last > 0.3:
            os.write(fd, pending.pop(0))
            last = time.monotonic()
    else:
        os.kill(pid, 9)
    os.close(fd)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), out


@pytest.mark.slow
@pytest.mark.parametrize("arch", NAMES)
def test_cli_menuconfig_on_a_terminal(arch: str, tmp_path: Path) -> None:
    """Jump to KMEMTRACE, set it to n, quit and save: the result loads strictly."""
    cfg = tmp_path / ".config"
    rc, out = drive_menuconfig(["menuconfig", "--arch", arch, "--config", str(cfg)],
                               [b"/", b"KMEMTRACE", b"\r", b"n", b"Q", b"y"])
    assert rc == 0, out[-500:]
    assert b"Configuration saved to" in out
    values = kconfig.enabled(kconfig.load_config(arch, cfg))
    assert values["KMEMTRACE"] == "n" and values["MARKERS"] == "y"
    # saved as every output is: the defconfig it started from kept as .config.old
    old = kconfig.enabled(kconfig.load_config(arch, tmp_path / ".config.old"))
    assert old["KMEMTRACE"] == "y"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".config", ".config.old"]


@pytest.mark.parametrize("arch", NAMES)
def test_debug_list_in_kernel_hacking_off_unless_data_corruption_bugs(arch: str) -> None:
    """lib/Kconfig.debug (v5.10): DEBUG_LIST defaults to n; BUG_ON_DATA_CORRUPTION selects it."""
    kconf = kconfig.load(arch)
    assert kconf.syms["DEBUG_LIST"].nodes[0].parent is menu(kconf, "Kernel hacking")
    assert kconfig.enabled(kconfig.defconfig(arch))["DEBUG_LIST"] == "n"
    kconf.syms["BUG_ON_DATA_CORRUPTION"].set_value("y")
    assert kconf.syms["DEBUG_LIST"].str_value == "y"
