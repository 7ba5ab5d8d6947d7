"""The guest kernel build: toolchain, configuration, content-addressed cache, errors."""
from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import zipfile

import pytest
from elftools.elf.elffile import ELFFile

import kbuild
import kbuild.cache
import kconfig
from arches import NAMES, get_arch
from kbuild import BuildError, build, image
from kconfig import KconfigError
from kisim.cli import main


@functools.lru_cache(maxsize=None)
def kernel(arch: str, **overrides: str) -> kbuild.Build:
    """Builds shared by the whole session (the on-disk cache shares them across modules)."""
    return build(arch, overrides=overrides or None)


@pytest.mark.parametrize("name", NAMES)
def test_defconfig_builds_a_static_elf_for_the_arch(name):
    b = kernel(name)
    assert b.elf.is_file() and b.arch == name
    with open(b.elf, "rb") as f:
        elf = ELFFile(f)
        assert elf["e_type"] == "ET_EXEC"
        assert {"EM_X86_64": "x86_64", "EM_ARM": "arm", "EM_PPC": "ppc32"}[elf["e_machine"]] == name
        assert elf.get_section_by_name(".interp") is None
        assert not [s for s in elf.iter_segments() if s["p_type"] == "PT_DYNAMIC"]
        symtab = elf.get_section_by_name(".symtab")
        assert elf["e_entry"] == symtab.get_symbol_by_name("_start")[0]["st_value"]
        loads = [s for s in elf.iter_segments() if s["p_type"] == "PT_LOAD"]
        assert min(s["p_vaddr"] for s in loads) == 0x100000
    # defconfig carries every instrumentation feature the arch can have
    for option in ("MARKERS", "IMMEDIATE", "JUMP_LABEL", "TRACEPOINTS", "FUNCTION_TRACER"):
        assert b.is_set(option), option
    assert b.mcount_sites > 0


@pytest.mark.parametrize("name", NAMES)
def test_build_dir_keeps_config_and_autoconf(name):
    b = kernel(name)
    autoconf = (b.elf.parent / "include" / "generated" / "autoconf.h").read_text()
    assert "#define CONFIG_MARKERS 1" in autoconf
    assert "CONFIG_MARKERS=y" in (b.elf.parent / ".config").read_text()
    assert not (b.elf.parent / "obj").exists()


@pytest.mark.slow
def test_second_build_is_a_cache_hit(tmp_path):
    first = build("x86_64", cache_dir=tmp_path)
    second = build("x86_64", cache_dir=tmp_path)
    assert not first.cached and second.cached
    assert second.key == first.key and second.elf == first.elf
    assert second.seconds < 1.0
    assert second.elf.read_bytes() == first.elf.read_bytes()


def test_cache_dir_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("KISIM_CACHE", str(tmp_path / "c"))
    assert kbuild.default_cache_dir() == tmp_path / "c"


@pytest.mark.slow
def test_key_covers_config_and_sources(tmp_path, monkeypatch):
    spec = get_arch("arm")
    kconf = kconfig.defconfig("arm")
    flags = kbuild.compile_flags(spec, kconfig.enabled(kconf))
    key = kbuild.cache_key(spec, kconfig.config_hash_text(kconf), flags)
    assert key == kernel("arm").key
    assert kernel("arm", MARKERS="n").key != key
    assert kbuild.cache_key(spec, kconfig.config_hash_text(kconf), flags + ["-O1"]) != key
    # a changed kernel source changes the key
    tree = tmp_path / "kernel"
    shutil.copytree(image.KERNEL, tree)
    (tree / "lib.c").write_text((tree / "lib.c").read_text() + "\n/* changed */\n")
    monkeypatch.setattr(image, "KERNEL", tree)
    monkeypatch.setattr(image, "LINKER_SCRIPT", tree / "kernel.lds")
    assert kbuild.cache_key(spec, kconfig.config_hash_text(kconf), flags) != key


@pytest.mark.slow
def test_function_tracer_adds_pg_and_mcount_table():
    on, off = kernel("ppc32"), kernel("ppc32", FUNCTION_TRACER="n")
    assert "-pg" in on.info["cflags"] and "-pg" not in off.info["cflags"]
    assert on.mcount_sites > 0 and off.mcount_sites == 0
    # __mcount_loc is exactly the relocations against _mcount the linker kept
    with open(on.elf, "rb") as f:
        section = ELFFile(f).get_section_by_name("__mcount_loc")
        table = section.data()
    sites = [int.from_bytes(table[i:i + 4], "big") for i in range(0, len(table), 4)]
    assert sites == kbuild.mcount_call_sites(on.elf, get_arch("ppc32"))


@pytest.mark.slow
def test_compile_error_shows_the_diagnostics(tmp_path, monkeypatch):
    tree = tmp_path / "kernel"
    shutil.copytree(image.KERNEL, tree)
    broken = tree / "workloads" / "fib.c"
    broken.write_text(broken.read_text().replace("return n < 2", "return n < undeclared_thing"))
    monkeypatch.setattr(image, "KERNEL", tree)
    monkeypatch.setattr(image, "LINKER_SCRIPT", tree / "kernel.lds")
    with pytest.raises(BuildError) as err:
        build("x86_64", cache_dir=tmp_path / "cache")
    message = str(err.value)
    first = message.splitlines()[0]
    assert first.startswith("x86_64: compiling ") and "fib.c" in first and "failed" in first
    assert "error:" in message and "undeclared_thing" in message
    assert not [p for p in (tmp_path / "cache").iterdir() if p.name.startswith("tmp-")]


def test_bad_override_is_a_kconfig_error():
    with pytest.raises(KconfigError, match="CONFIG_NO_SUCH_OPTION"):
        build("arm", overrides={"NO_SUCH_OPTION": "y"})
    with pytest.raises(KconfigError, match="did not take"):
        build("ppc32", overrides={"OPTPROBES": "y"})      # ppc32 has no HAVE_OPTPROBES


@pytest.mark.slow
def test_config_file_is_used(tmp_path):
    kconf = kconfig.defconfig("x86_64")
    kconf.syms["JUMP_LABEL"].set_value("n")
    path = tmp_path / ".config"
    kconfig.write_config(kconf, path)
    b = build("x86_64", path)
    assert b.config["JUMP_LABEL"] == "n"
    assert b.key == kernel("x86_64", JUMP_LABEL="n").key


def test_build_command(capsys):
    kernel("arm")
    assert main(["build", "--arch", "arm"]) == 0
    out = capsys.readouterr().out
    assert "cache hit" in out and "vmlinux" in out
    assert "markers 10" in out and "mcount" in out


@pytest.mark.slow
def test_build_command_json(capsys):
    kernel("x86_64", MARKERS="n")
    assert main(["build", "--arch", "x86_64", "--set", "MARKERS=n", "--json"]) == 0
    import json
    out = json.loads(capsys.readouterr().out)
    assert out["cached"] is True and out["config"]["MARKERS"] == "n"
    assert out["sites"]["markers"] == 0 and out["sites"]["mcount"] > 0
    assert out["sizes"]["text"] > 0


def test_build_command_errors_are_one_line(capsys):
    assert main(["build", "--arch", "arm", "--set", "MARKERS"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kisim: error: --set 'MARKERS'") and err.count("\n") == 1


# -- the cache is verified before use ------------------------------------------

def cached_entry(tmp_path, arch: str = "x86_64"):
    """A cache in ``tmp_path`` holding a copy of the defconfig build of ``arch``."""
    entry = kernel(arch).elf.parent
    shutil.copytree(entry, tmp_path / "cache" / entry.name)
    first = build(arch, cache_dir=tmp_path / "cache")
    assert first.cached
    return first


def flip(path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at:at + 4] = bytes(b ^ 0xFF for b in data[at:at + 4])
    path.write_bytes(bytes(data))


DAMAGE = {
    "flipped-image": (lambda e: flip(e / "vmlinux", len((e / "vmlinux").read_bytes()) // 2),
                      "vmlinux does not match its recorded SHA-256"),
    "truncated-image": (lambda e: (e / "vmlinux").write_bytes((e / "vmlinux").read_bytes()[:1000]),
                        "vmlinux does not match its recorded SHA-256"),
    "no-build.json": (lambda e: (e / "build.json").unlink(), "no build.json"),
    "corrupt-build.json": (lambda e: (e / "build.json").write_text('{"key": '),
                           "build.json unreadable (JSONDecodeError)"),
    "foreign-build.json": (lambda e: (e / "build.json").write_text("[]"),
                           "build.json does not describe this entry"),
    "half-written": (lambda e: (e / "vmlinux").unlink(), "vmlinux missing"),
    "changed-config": (lambda e: flip(e / ".config", 10),
                       ".config does not match its recorded SHA-256"),
}


@pytest.mark.parametrize("case", DAMAGE)
def test_verify_names_each_kind_of_damage(tmp_path, case):
    entry = cached_entry(tmp_path).elf.parent
    key = entry.name
    assert kbuild.cache.verify(entry, key)[1] == ""
    damage, why = DAMAGE[case]
    damage(entry)
    assert kbuild.cache.verify(entry, key) == (None, why)


@pytest.mark.slow
@pytest.mark.parametrize("case", ["flipped-image"])   # the others: verify, above
def test_a_damaged_cache_entry_is_rebuilt_with_one_line(tmp_path, capsys, case):
    good = cached_entry(tmp_path)
    pristine = good.elf.read_bytes()
    capsys.readouterr()
    damage, why = DAMAGE[case]
    damage(good.elf.parent)
    again = build("x86_64", cache_dir=tmp_path / "cache")
    err = capsys.readouterr().err
    assert not again.cached and again.elf == good.elf
    assert err == f"kisim: cache entry {good.elf.parent} was corrupt ({why}); rebuilt\n"
    assert again.elf.read_bytes() == pristine                 # deterministic rebuild
    third = build("x86_64", cache_dir=tmp_path / "cache")     # and now a clean hit
    assert third.cached and capsys.readouterr().err == ""
    assert [p.name for p in (tmp_path / "cache").iterdir() if p.name.startswith("tmp-")] == []


def test_entries_record_the_hash_of_their_files(tmp_path):
    b = cached_entry(tmp_path, "ppc32")
    files = b.info["files"]
    assert set(files) == set(kbuild.cache.ENTRY_FILES)
    assert files["vmlinux"] == hashlib.sha256(b.elf.read_bytes()).hexdigest()


def test_a_failed_build_leaves_no_entry_behind(tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise BuildError("x86_64: linking vmlinux failed (exit 1):\nsimulated")
    monkeypatch.setattr(image, "_build_into", broken)
    with pytest.raises(BuildError):
        build("x86_64", cache_dir=tmp_path / "cache")
    assert list((tmp_path / "cache").iterdir()) in ([], [tmp_path / "cache" / "zig"])


@pytest.mark.slow
def test_relative_kisim_cache_is_resolved(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KISIM_CACHE", "rel-cache")
    assert kbuild.default_cache_dir() == tmp_path / "rel-cache"
    b = build("arm")
    assert b.elf.is_file() and b.elf.is_relative_to(tmp_path / "rel-cache")


# -- which .config a build uses ---------------------------------------------------

def test_dot_config_is_used_when_no_config_is_given(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert kbuild.resolve_config("x86_64", None).source == "defconfig"
    kconf = kconfig.defconfig("x86_64")
    kconf.syms["JUMP_LABEL"].set_value("n")          # as test_config_file_is_used: cached
    kconfig.write_config(kconf, tmp_path / ".config")
    choice = kbuild.resolve_config("x86_64", None)
    assert choice.path == tmp_path / ".config" and choice.source == "./.config"
    assert kbuild.resolve_config("x86_64", "other").source == "--config"
    assert main(["build", "--arch", "x86_64", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["config"]["JUMP_LABEL"] == "n"
    assert out["config_used"] == {"path": str(tmp_path / ".config"), "source": "./.config"}
    assert main(["build", "--arch", "x86_64"]) == 0
    assert f"kisim: using {tmp_path / '.config'} (./.config)" in capsys.readouterr().err


def test_dot_config_of_another_arch_is_a_usage_error(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    kconfig.write_config(kconfig.defconfig("ppc32"), tmp_path / ".config")
    with pytest.raises(kbuild.ConfigChoiceError, match="./.config is for ppc32, not arm"):
        kbuild.resolve_config("arm", None)
    assert main(["build", "--arch", "arm"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "./.config is for ppc32, not arm" in err


# -- packaging ----------------------------------------------------------------

@pytest.mark.slow
def test_wheel_ships_the_guest_kernel_sources(tmp_path):
    """``pip install .`` must carry everything a build reads (kbuild.image.input_files,
    the Kconfig tree), since the installed package has no repository beside it."""
    repo = image.REPO
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(repo)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    (wheel,) = tmp_path.glob("kisim-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    needed = {p.relative_to(repo).as_posix() for name in NAMES
              for p in image.input_files(get_arch(name))}
    needed |= {p.relative_to(repo).as_posix() for p in (repo / "kconfig").glob("Kconfig.*")}
    needed |= {f"arches/{name}/{f}" for name in NAMES for f in ("Kconfig", "defconfig")}
    assert needed - names == set()
    assert "kbuild/cache.py" in names and not any(n.startswith("tests/") for n in names)


@pytest.mark.slow
def test_the_host_hook_is_built_into_the_cache_and_rebuilt_when_damaged(tmp_path) -> None:
    from kbuild.host import host_library
    from sim.native import SOURCE
    lib = host_library(SOURCE, cache_dir=tmp_path)
    assert lib.parent.parent == tmp_path and lib.parent.name.startswith("host-hooks-")
    sound = lib.read_bytes()
    assert host_library(SOURCE, cache_dir=tmp_path) == lib          # cached: not rebuilt
    damaged = bytearray(sound)
    damaged[len(damaged) // 2] ^= 0xFF
    lib.write_bytes(bytes(damaged))
    assert host_library(SOURCE, cache_dir=tmp_path) == lib and lib.read_bytes() == sound
    assert not list(tmp_path.glob("tmp-*"))


def test_host_code_that_does_not_compile_is_a_build_error(tmp_path) -> None:
    from kbuild.host import host_library
    bad = tmp_path / "bad.c"
    bad.write_text("int f(void) { return undeclared; }\n")
    with pytest.raises(BuildError, match="compiling bad.c for the host failed"):
        host_library(bad, cache_dir=tmp_path / "cache")


@pytest.mark.slow
def test_host_march_builds_for_the_cpu_it_names_and_refuses_what_is_not_one(
        tmp_path, monkeypatch) -> None:
    """KISIM_HOST_MARCH adds -march (a library valgrind runs), keyed apart from the
    native build; a value that is not a CPU name, or names no CPU zig knows, is a
    one-line BuildError."""
    from kbuild.host import HOST_CFLAGS, MARCH_ENV, host_cflags, host_library
    monkeypatch.delenv(MARCH_ENV, raising=False)
    assert host_cflags() == HOST_CFLAGS
    monkeypatch.setenv(MARCH_ENV, "x86_64_v3")
    assert host_cflags() == (*HOST_CFLAGS, "-march=x86_64_v3")
    for bad in ("x86-64;rm", "-O0", "a b"):
        monkeypatch.setenv(MARCH_ENV, bad)
        with pytest.raises(BuildError, match="not a CPU name"):
            host_cflags()
    src = tmp_path / "one.c"
    src.write_text("int one(void) { return 1; }\n")
    monkeypatch.delenv(MARCH_ENV)
    native = host_library(src, cache_dir=tmp_path / "cache")
    if platform.machine() == "x86_64":
        monkeypatch.setenv(MARCH_ENV, "x86_64_v3")
        other = host_library(src, cache_dir=tmp_path / "cache")
        assert other != native and json.loads((other.parent / "build.json").read_text()
                                               )["cflags"][-1] == "-march=x86_64_v3"
    monkeypatch.setenv(MARCH_ENV, "no_such_cpu")
    with pytest.raises(BuildError) as refused:                # not zig's list of every CPU
        host_library(src, cache_dir=tmp_path / "cache")
    assert str(refused.value).startswith("KISIM_HOST_MARCH='no_such_cpu': zig knows no such CPU")
    assert "\n" not in str(refused.value)


@pytest.mark.slow
def test_the_host_library_is_keyed_by_the_cpu_it_was_built_for(tmp_path, monkeypatch,
                                                                request) -> None:
    """zig builds for the CPU it runs on: two CPUs of one architecture (a cache on a
    shared disk) get a library each, never the other's; one CPU's builds share."""
    import kbuild.host as host
    request.addfinalizer(host.host_cpu.cache_clear)     # no fake CPU outlives the test
    src = tmp_path / "one.c"
    src.write_text("int one(void) { return 1; }\n")
    monkeypatch.delenv(host.MARCH_ENV, raising=False)
    built = {}
    for name, flags in (("old", "fpu sse2"), ("new", "fpu sse2 avx512f"), ("again", "fpu sse2")):
        info = tmp_path / f"cpuinfo-{name}"
        info.write_text(f"processor\t: 0\nmodel name\t: Some CPU\nflags\t\t: {flags}\n\n"
                        "processor\t: 1\nflags\t\t: whatever\n")
        monkeypatch.setattr(host, "CPUINFO", info)
        host.host_cpu.cache_clear()
        built[name] = host.host_library(src, cache_dir=tmp_path / "cache")
    assert built["old"] != built["new"] and built["again"] == built["old"]
    monkeypatch.setattr(host, "CPUINFO", tmp_path / "absent")
    host.host_cpu.cache_clear()
    assert host.host_cpu() == (platform.processor() or "unknown")


@pytest.mark.parametrize("argv", [
    ["trace", "--probes", "markers", "--out", "t"],
    ["record", "-e", "markers", "-o", "t.dat"],
    ["ftrace", "--json"],
    ["boot", "--json"],
])
def test_every_command_that_builds_uses_dot_config(argv, tmp_path, monkeypatch, capsys):
    """trace, record and ftrace, as build, boot and site, take ./.config when no
    --config is given (their --help says so): a kernel without markers has none to
    trace, where the defconfig's has them."""
    monkeypatch.chdir(tmp_path)
    kconf = kconfig.defconfig("arm")
    kconf.syms["MARKERS"].set_value("n")
    kconfig.write_config(kconf, tmp_path / ".config")
    status = main([argv[0], "--arch", "arm", "--size", "2", *argv[1:]])
    err = capsys.readouterr().err
    assert f"kisim: using {tmp_path / '.config'} (./.config)" in err
    if "markers" in argv:
        assert status == 2 and "no markers in this kernel" in err
    else:
        assert status == 0


@pytest.mark.slow
@pytest.mark.parametrize("arch", NAMES)
def test_an_image_names_no_directory_of_this_machine(arch, tmp_path) -> None:
    """The debug information and __FILE__ name sources relative to the checkout and
    the build directory (-ffile-prefix-map), so an image is the same bytes wherever
    either lies, as its cache key (which holds neither) says: neither the checkout's
    path nor the cache's appears in it, nor in one with a module built in."""
    module = tmp_path / "m.c"
    module.write_text('#include <linux/bug.h>\nunsigned long m_run(unsigned long n)\n'
                      '{\n\tWARN_ON(n > 1000);\n\treturn n;\n}\n')
    for b in (build(arch), build(arch, modules=[module])):
        data = b.elf.read_bytes()
        for where in (image.REPO, kbuild.default_cache_dir()):
            assert os.fspath(where).encode() not in data, (b.elf, where)
        assert b"kernel/slab.c" in data                 # named, relative


@pytest.mark.parametrize("arch", NAMES)
def test_the_patch_checkers_guest_names_no_directory_of_this_machine(arch) -> None:
    """The same for the patch checker's guest (patchcheck/guest_image.py)."""
    from patchcheck.guest_image import build_guest
    spec = get_arch(arch)
    data = build_guest(spec, (image.REPO / spec.ops.PATCHING_C,)).read_bytes()
    for where in (image.REPO, kbuild.default_cache_dir()):
        assert os.fspath(where).encode() not in data, where
