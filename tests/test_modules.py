"""Guest modules: built in from any file, run as the workload, kprobes from guest C."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

import patcher.instrument  # noqa: F401  (serves static keys, markers, tracepoints)
import probes.kprobes  # noqa: F401  (serves the kprobe API)
from arches import Arch
from kbuild import ModuleError, build
from kisim.cli import main
from sim.errors import GuestFault
from sim.guest import Guest

# Whole guest builds and boots, or real processes and signals: make test, not make check.
pytestmark = pytest.mark.slow

#: Registers a kprobe on kmalloc from module_init; the workload counts its hits.
PROBER = r"""
#include <linux/module.h>
#include <linux/kprobes.h>
#include <linux/slab.h>

static u32 hits;

static int count_pre(struct kprobe *p, struct pt_regs *regs)
{
	hits++;
	return 0;
}

static struct kprobe kp = { .symbol_name = "kmalloc", .pre_handler = count_pre };

u32 prober_run(u32 size)
{
	u32 i;

	for (i = 0; i < size; i++)
		kfree(kmalloc(24, GFP_KERNEL));
	return hits * 0x100 + (u32)(kp.addr != NULL);
}

static int __init prober_init(void)
{
	int ret = register_kprobe(&kp);

	pr_info("prober: register_kprobe returned %d\n", ret);
	return ret;
}

static void __exit prober_exit(void)
{
	unregister_kprobe(&kp);
	pr_info("prober: unloaded after %u hits\n", hits);
}

module_init(prober_init);
module_exit(prober_exit);
"""


@pytest.fixture
def prober(tmp_path: Path) -> Path:
    path = tmp_path / "prober.c"          # outside the repository
    path.write_text(PROBER)
    return path


def test_module_workload_registers_a_kprobe_and_is_traced(arch: Arch, prober: Path,
                                                          tmp_path: Path,
                                                          capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "trace"
    size = 9
    rc = main(["trace", "--arch", arch.name, "--module", str(prober), "--workload",
               "prober:prober_run", "--size", str(size), "--expect", f"{size * 0x100 + 1:x}",
               "--format", "text", "--out", str(out)])
    assert rc == 0, capsys.readouterr()
    # The module's own calls were traced: kmem_kmalloc events from prober_run.
    kernel = build(arch.name, modules=[prober])
    start, length = next((s, n) for s, n, name in Guest(kernel, workload="fib").image.functions
                         if name == "prober_run")
    sites = [int(m, 16) for m in re.findall(r"kmem_kmalloc: call_site=(0x[0-9a-f]+)",
                                            (out / "trace.txt").read_text())]
    from_module = [s for s in sites if start <= s < start + length]
    assert len(from_module) == size
    # A wrong --expect is a mismatch (exit 1).
    assert main(["trace", "--arch", arch.name, "--module", str(prober), "--workload",
                 "prober:prober_run", "--size", str(size), "--expect", "1",
                 "--format", "text", "--out", str(tmp_path / "t2")]) == 1


@pytest.mark.parametrize("command", [
    ["record", "-e", "kmem", "-o", "{out}.dat"],
    ["ftrace", "--filter", "prober_run"],
    ["trace", "--format", "text", "--out", "{out}"],
])
def test_a_module_workload_without_expect_is_not_called_checked(
        command: list[str], prober: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture) -> None:
    """A MODULE:FUNC workload has no reference checksum: without --expect a run says
    its checksum was not checked (as boot and kprobe do) and --json has
    checksum_checked false; with --expect it is checked."""
    argv = [command[0], "--arch", "arm", "--module", str(prober), "--workload",
            "prober:prober_run", "--size", "3",
            *(a.format(out=tmp_path / "t") for a in command[1:])]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "checksum not checked (a module's workload: --expect HEX checks it)" in out
    assert main([*argv, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["checksum_checked"] is False
    assert main([*argv, "--json", "--expect", "301"]) == 0
    assert json.loads(capsys.readouterr().out)["checksum_checked"] is True


def test_module_init_and_exit_run_and_printk_is_captured(prober: Path) -> None:
    guest = Guest(build("x86_64", modules=[prober]), workload="prober:prober_run", size=3)
    result = guest.run()
    assert result.checksum == 3 * 0x100 + 1 and result.ok and result.expected is None
    console = result.console
    assert "prober: register_kprobe returned 0" in console
    assert console.index("register_kprobe returned") < console.index("workload prober:")
    assert "prober: unloaded after 3 hits" in console     # module_exit, after the workload
    assert Guest(build("x86_64", modules=[prober]), workload="prober:prober_run", size=3,
                 expect=4).run().ok is False


def test_registration_patches_from_the_calling_cpu(prober: Path) -> None:
    """register_kprobe() from guest C is the kernel's work at the call: the
    breakpoint is in the text afterwards and the calling CPU paid the sync."""
    kernel = build("arm", modules=[prober])
    guest = Guest(kernel, workload="prober:prober_run", size=1)
    before = guest.machine.read(guest.image.symbols["kmalloc"], 4)
    guest.run()
    kprobes = guest.services["KPROBE"].__self__
    assert kprobes.text.cpu is None                      # restored after the call
    assert guest.machine.cpus[0].events["icache_flush"] >= 1
    # module_exit unregistered it: the original instruction is back.
    assert guest.machine.read(guest.image.symbols["kmalloc"], 4) == before


REFUSALS = r"""
#include <linux/module.h>
#include <linux/kprobes.h>

static struct kprobe nosym = { .symbol_name = "no_such_function" };
static struct kprobe blacklisted = { .symbol_name = "kprobe_handler" };
static struct kprobe both = { .symbol_name = "kmalloc", .addr = (kprobe_opcode_t *)0x1000 };
static struct kprobe twice = { .symbol_name = "kmalloc" };
static struct kretprobe rp = { .kp.symbol_name = "kmalloc" };

static int __init refusals_init(void)
{
	int again;

	register_kprobe(&twice);
	again = register_kprobe(&twice);
	printk("refusals: %d %d %d %d %d\n", register_kprobe(&nosym),
	       register_kprobe(&blacklisted), register_kprobe(&both), again,
	       enable_kprobe(&nosym));
	register_kprobe(&blacklisted);
	printk("reason: %s\n", kprobe_last_refusal);
	unregister_kprobe(&twice);
	printk("kretprobe: %d %d %d %d\n", disable_kretprobe(&rp), register_kretprobe(&rp),
	       disable_kretprobe(&rp), enable_kretprobe(&rp));
	unregister_kretprobe(&rp);
	return 0;
}
module_init(refusals_init);
"""


def test_refusals_return_the_kernels_errno(arch: Arch, tmp_path: Path) -> None:
    path = tmp_path / "refusals.c"
    path.write_text(REFUSALS)
    guest = Guest(build(arch.name, modules=[path]), workload="fib", size=2)
    guest.run()
    # -ENOENT unknown symbol, -EINVAL blacklist, both symbol and addr, re-registration,
    # enable_kprobe of an unregistered probe.
    assert "refusals: -2 -22 -22 -22 -22" in "".join(guest.console)
    # include/linux/kprobes.h's disable_kretprobe and enable_kretprobe, through the kprobe
    assert "kretprobe: -22 0 0 0" in "".join(guest.console)
    assert re.search(r"reason: kprobe: kprobe_handler\+0x0 is blacklisted "
                     r"\(NOKPROBE_SYMBOL\(kprobe_handler\)\)", "".join(guest.console))
    reasons = guest.services["KPROBE"].__self__.refusals
    assert any("NOKPROBE_SYMBOL" in r for r in reasons)
    assert any("no_such_function" in r for r in reasons)


FLAGS = r"""
#include <linux/module.h>
#include <linux/kprobes.h>

static struct kprobe again = { .symbol_name = "kmalloc" };
static struct kretprobe off = { .kp.symbol_name = "kfree", .kp.flags = KPROBE_FLAG_DISABLED };

static int __init flags_init(void)
{
	int first = register_kprobe(&again);

	unregister_kprobe(&again);
	printk("left: %d %lu\n", first, again.flags);
	again.addr = NULL;	/* its flags kept */
	printk("again: %d %lu\n", register_kprobe(&again), again.flags & KPROBE_FLAG_DISABLED);
	unregister_kprobe(&again);
	printk("off: %d %lu\n", register_kretprobe(&off), off.kp.flags & KPROBE_FLAG_DISABLED);
	printk("on: %d %lu\n", enable_kretprobe(&off), off.kp.flags & KPROBE_FLAG_DISABLED);
	unregister_kretprobe(&off);
	return 0;
}
module_init(flags_init);
"""


def test_a_modules_flags_are_the_kernels(arch: Arch, tmp_path: Path) -> None:
    """KPROBE_FLAG_DISABLED as v5.10 keeps it: unregister_kprobe leaves a struct
    disabled (__unregister_kprobe_top's __disable_kprobe; KPROBE_FLAG_GONE is
    kill_kprobe's), so a struct registered again with its flags kept comes back
    disabled; and a struct kretprobe with the flag set registers disarmed until
    enable_kretprobe (register_kprobe: p->flags &= KPROBE_FLAG_DISABLED)."""
    path = tmp_path / "flags.c"
    path.write_text(FLAGS)
    guest = Guest(build(arch.name, modules=[path]), workload="fib", size=2)
    assert guest.run().ok
    console = "".join(guest.console)
    disabled = 2                                        # KPROBE_FLAG_DISABLED
    assert f"left: 0 {disabled}\n" in console
    assert f"again: 0 {disabled}\n" in console
    assert f"off: 0 {disabled}\n" in console and "on: 0 0\n" in console


CYCLES = r"""
#include <linux/module.h>
#include <linux/kprobes.h>

static struct kretprobe rp = { .kp.symbol_name = "kmalloc", .data_size = 100000 };

static int __init cycles_init(void)
{
	int i, failed = 0;

	for (i = 0; i < 300; i++) {
		/* lib/test_kprobes.c: addr and flags cleared for reuse */
		rp.kp.addr = NULL;
		rp.kp.flags = 0;
		if (register_kretprobe(&rp))
			failed++;
		unregister_kretprobe(&rp);
	}
	printk("cycles: %d failed\n", failed);
	return 0;
}
module_init(cycles_init);
"""


@pytest.mark.parametrize("cpus", [1, 2])
def test_a_module_registers_and_unregisters_a_kretprobe_again_and_again(
        arch: Arch, tmp_path: Path, cpus: int) -> None:
    """unregister_kretprobe() from guest C waits for its grace period
    (synchronize_rcu) and frees the instances: 300 cycles of 100,000-byte
    instances fit in the 256 KiB area. The caller's own sleep is its CPU's
    quiescent state; the other CPU, in its idle loop or not started yet, is
    quiescent too."""
    path = tmp_path / "cycles.c"
    path.write_text(CYCLES)
    guest = Guest(build(arch.name, modules=[path]), cpus=cpus, workload="fib", size=2)
    assert guest.run().ok
    assert "cycles: 0 failed" in "".join(guest.console)


def test_bad_c_is_one_line_with_file_and_line(tmp_path: Path,
                                              capsys: pytest.CaptureFixture) -> None:
    bad = tmp_path / "bad.c"
    bad.write_text("#include <linux/module.h>\n\nint f(void)\n{\n\treturn undeclared;\n}\n")
    assert main(["boot", "--arch", "ppc32", "--module", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f"{bad}:5:" in err and "undeclared" in err
    with pytest.raises(ModuleError, match=r"bad\.c:5:\d+: error"):
        build("ppc32", modules=[bad])


def test_a_module_in_a_directory_whose_name_is_not_utf8_builds(tmp_path: Path) -> None:
    """A path is bytes: a module's directory named in Latin-1 builds, and its
    diagnostics name it (the cache key and the #line directive encoded it as UTF-8)."""
    where = tmp_path / os.fsdecode(b"caf\xe9")
    where.mkdir()
    good, bad = where / "good.c", where / "bad.c"
    good.write_text("#include <linux/module.h>\n\nint g(void)\n{\n\treturn 1;\n}\n")
    bad.write_text("#include <linux/module.h>\n\nint f(void)\n{\n\treturn undeclared;\n}\n")
    assert build("arm", modules=[good]).elf.exists()
    with pytest.raises(ModuleError, match=r"bad\.c:5:\d+: error"):
        build("arm", modules=[bad])


def test_bad_module_inputs_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    for argv in (["--module", str(tmp_path / "missing.c")],
                 ["--module", "/dev/null"],
                 ["--module", str(tmp_path / "x.txt")],
                 ["--workload", "nomod:f"],
                 ["--workload", "a:b:c"]):
        assert main(["boot", "--arch", "x86_64", *argv]) == 2, argv
        assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_a_link_to_a_file_that_is_not_c_is_refused_before_the_compiler(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """The compiler takes a file by its target's name, so ``link.c`` pointing at
    ``notes`` would be read as a linker script: refused, naming both."""
    (tmp_path / "notes").write_text("root:x:0:0\n")
    (tmp_path / "link.c").symlink_to(tmp_path / "notes")
    assert main(["boot", "--arch", "x86_64", "--module", str(tmp_path / "link.c")]) == 2
    err = capsys.readouterr().err
    assert f"a link to {tmp_path / 'notes'}, which is not a C file" in err
    assert "root:x" not in err and err.count("\n") == 1


def test_a_faulting_module_gives_the_fault_report(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture) -> None:
    crash = tmp_path / "crash.c"
    crash.write_text("#include <linux/module.h>\n"
                     "u32 crash_run(u32 size)\n{\n\treturn *(volatile u32 *)0x10;\n}\n")
    assert main(["boot", "--arch", "x86_64", "--module", str(crash),
                 "--workload", "crash:crash_run"]) == 1
    assert "crash_run" in capsys.readouterr().err
    with pytest.raises(GuestFault):
        Guest(build("x86_64", modules=[crash]), workload="crash:crash_run").run()


def test_the_cache_key_holds_the_module_bytes(tmp_path: Path) -> None:
    path = tmp_path / "m.c"
    path.write_text("#include <linux/module.h>\nu32 m_run(u32 n) { return n + 1; }\n")
    first = build("x86_64", modules=[path])
    assert build("x86_64", modules=[path]).cached
    path.write_text("#include <linux/module.h>\nu32 m_run(u32 n) { return n + 2; }\n")
    second = build("x86_64", modules=[path])
    assert second.key != first.key and not second.cached
    assert Guest(second, workload="m:m_run", size=5).run().checksum == 7
    assert build("x86_64").key not in (first.key, second.key)


def test_a_module_function_as_a_kprobe_handler(prober: Path,
                                               capsys: pytest.CaptureFixture) -> None:
    # prober.c's own probe is on kmalloc too: both share one aggr_kprobe there.
    handler = prober.with_name("handler.c")
    handler.write_text("#include <linux/module.h>\n#include <linux/kprobes.h>\n"
                       "u32 handler_calls;\n"
                       "int my_pre(struct kprobe *p, struct pt_regs *regs)\n"
                       "{\n\thandler_calls++;\n\treturn 0;\n}\n"
                       "u32 handler_run(u32 n)\n{\n\textern u32 prober_run(u32);\n"
                       "\tprober_run(n);\n\treturn handler_calls;\n}\n")
    argv = ["kprobe", "--arch", "ppc32", "--at", "kmalloc", "--module", str(prober),
            "--module", str(handler), "--handler", "my_pre", "--workload",
            "handler:handler_run", "--size", "6", "--json"]
    assert main(argv + ["--expect", "6"]) == 0, capsys.readouterr()
    assert '"pre (my_pre)"' in capsys.readouterr().out
    assert main(argv + ["--expect", "0"]) == 1


def test_the_unwinders_trap_frame_offset_matches_the_host(arch: Arch) -> None:
    """kernel/stacktrace.c finds a kprobe trap's pt_regs where probes/kprobes.py
    puts it: STACK_HEADROOM above the handler's entry sp, plus the pushed
    return address on an arch without a link register."""
    header = Path(__file__).resolve().parent.parent / "arches" / arch.name / "include" \
        / "asm" / "stacktrace.h"
    offset = int(re.search(r"#define\s+KPROBE_TRAP_REGS_OFFSET\s+(\d+)", header.read_text())[1])
    assert offset == arch.ops.STACK_HEADROOM + (arch.word if arch.ra is None else 0)


STATIC_KEYS = r"""
#include <linux/module.h>
#include <linux/jump_label.h>

DEFINE_STATIC_KEY_TRUE(tkey);
DEFINE_STATIC_KEY_FALSE(fkey);
static struct static_key old_true = STATIC_KEY_INIT_TRUE;
static struct static_key old_false = STATIC_KEY_INIT_FALSE;

static noinline u32 branches(void)
{
	return (static_branch_likely(&tkey) ? 1 : 0) | (static_branch_unlikely(&tkey) ? 2 : 0)
	     | (static_branch_likely(&fkey) ? 4 : 0) | (static_branch_unlikely(&fkey) ? 8 : 0)
	     | (static_key_true(&old_true) ? 16 : 0) | (static_key_false(&old_false) ? 32 : 0);
}

u32 keys_run(u32 n)
{
	u32 r = branches();

	static_branch_disable(&tkey);
	static_branch_enable(&fkey);
	static_key_slow_dec(&old_true);
	static_key_slow_inc(&old_false);
	r |= branches() << 8;
	static_key_slow_inc(&fkey.key);
	static_key_disable(&fkey.key);		/* count 2: the kernel warns, the key stays on */
	r |= branches() << 16;
	return r | (u32)static_key_count(&fkey.key) << 24;
}
"""


def test_static_keys_from_a_module(arch: Arch, tmp_path: Path) -> None:
    path = tmp_path / "keys.c"
    path.write_text(STATIC_KEYS)
    guest = Guest(build(arch.name, modules=[path]), workload="keys:keys_run")
    result = guest.run()
    # true key: likely and unlikely true; false key: both false; old API alike;
    # then each flipped; then static_key_disable at count 2 leaves fkey on, count 2.
    assert result.checksum == 0x02_2c_2c_13, hex(result.checksum or 0)
    assert result.console.count("WARNING: kernel/jump_label.c") == 1
    api = guest.services["STATIC"].__self__
    sites = {e.code: e for entries in api.inst.keys.sites.values() for e in entries
             if e.function == "branches"}
    assert len(sites) == 6
    # The text, not a flag load, decides: the sites now hold the kernel's types.
    jumps = {e.code for e in sites.values()
             if guest.machine.read(e.code, len(e.insn)) != e.insn}
    enabled = {"tkey": False, "fkey": True, "old_true": False, "old_false": True}
    names = {guest.image.symbols[n]: n for n in enabled}
    assert jumps == {e.code for e in sites.values()
                     if enabled[names[e.key & ~1]] ^ bool(e.key & 1)}


INIT_KEYS = r"""
#include <linux/module.h>
#include <linux/jump_label.h>

struct static_key_false init_false = STATIC_KEY_FALSE_INIT;
struct static_key_true init_true = STATIC_KEY_TRUE_INIT;
DEFINE_STATIC_KEY_TRUE(defined_true);

static noinline u32 branches(void)
{
	return (static_branch_likely(&init_false) ? 1 : 0)
	     | (static_branch_unlikely(&init_false) ? 2 : 0)
	     | (static_branch_likely(&init_true) ? 4 : 0)
	     | (static_branch_unlikely(&init_true) ? 8 : 0)
	     | (static_branch_unlikely(&defined_true) ? 16 : 0);
}

u32 keys_run(u32 n)
{
	return branches();
}
"""


def test_a_keys_type_decides_how_its_sites_are_built(arch: Arch, tmp_path: Path) -> None:
    """v5.10 builds a site that starts taken as the jump (arch_static_branch_jump),
    by the key's type: keys initialised with STATIC_KEY_*_INIT, which
    jump_label_init() never visits, branch as their types say, and boot
    patches nothing live (no IPI, no serialization on the other CPU)."""
    path = tmp_path / "init_keys.c"
    path.write_text(INIT_KEYS)
    guest = Guest(build(arch.name, modules=[path]), cpus=2, workload="init_keys:keys_run")
    result = guest.run()
    assert result.checksum == 4 | 8 | 16, hex(result.checksum or 0)
    assert not result.per_cpu[1]["events"].get("ipi")
    assert not result.per_cpu[1]["events"].get("serialize")


TRACING = r"""
#include <linux/module.h>
#include <linux/marker.h>
#include <linux/slab.h>
#include <trace/kmem.h>

static u32 tp_hits, mk_hits;

static void on_kmalloc(unsigned long call_site, const void *ptr, size_t bytes_req,
		       size_t bytes_alloc, gfp_t gfp_flags)
{
	tp_hits++;
}

static void on_free(void *probe_private, void *call_private, const char *fmt, va_list *args)
{
	mk_hits++;
}

u32 tracing_run(u32 n)
{
	struct kmem_cache *cache = kmem_cache_create("tracing", 40, 0, 0, NULL);
	int r1 = register_trace_kmalloc(on_kmalloc);
	int r2 = register_trace_kmalloc(on_kmalloc);
	int r3 = marker_probe_register("kmem_cache_free", "type_id %d call_site %lu ptr %lu",
				       on_free, NULL);
	int r4 = marker_arm("kmem_cache_free");
	u32 i;

	for (i = 0; i < n; i++) {
		kfree(kmalloc(16, GFP_KERNEL));
		kmem_cache_free(cache, kmem_cache_alloc(cache, GFP_KERNEL));
	}
	unregister_trace_kmalloc(on_kmalloc);
	kfree(kmalloc(16, GFP_KERNEL));
	printk("tracing: %d %d %d %d\n", r1, r2, r3, r4);
	return tp_hits << 8 | mk_hits;
}
"""


def test_tracepoint_and_marker_probes_from_a_module(arch: Arch, tmp_path: Path) -> None:
    path = tmp_path / "tracing.c"
    path.write_text(TRACING)
    guest = Guest(build(arch.name, modules=[path]), workload="tracing:tracing_run", size=4)
    result = guest.run()
    assert result.checksum == 4 << 8 | 4         # unregistered before the last kmalloc
    assert "tracing: 0 -17 0 0" in result.console   # a second registration: -EEXIST


KEEPS = r"""
#include <linux/module.h>
#include <linux/marker.h>

static void on_free(void *probe_private, void *call_private, const char *fmt, va_list *args)
{
}

static int __init keeps_init(void)
{
	return marker_probe_register("kmem_cache_free", NULL, on_free, NULL);
}
module_init(keeps_init);
"""

ARMS_AND_FAILS = r"""
#include <linux/module.h>
#include <linux/marker.h>
#include <linux/errno.h>

static void on_free(void *probe_private, void *call_private, const char *fmt, va_list *args)
{
}

static int __init arms_init(void)
{
	marker_probe_register("kmem_cache_free", NULL, on_free, (void *)1);
	marker_arm("kmem_cache_free");
	return -EINVAL;
}
module_init(arms_init);
"""


def test_a_failed_init_takes_its_marker_arm_back(arch: Arch, tmp_path: Path) -> None:
    """A module whose init fails has its marker_arm undone with its registration:
    the marker another module's probe keeps registered is not left armed."""
    keeps, arms = tmp_path / "keeps.c", tmp_path / "arms.c"
    keeps.write_text(KEEPS)
    arms.write_text(ARMS_AND_FAILS)
    guest = Guest(build(arch.name, modules=[keeps, arms]), workload="fib", size=2)
    result = guest.run()
    assert [f.name for f in result.failed_modules] == ["arms"]
    markers = guest.services["MARKER"].__self__.inst.markers
    assert len(markers.probes["kmem_cache_free"]) == 1       # keeps' probe, NULL format
    assert markers.armed["kmem_cache_free"] == 0 and "kmem_cache_free" not in markers.enabled


def test_ftrace_and_line_probes_see_module_code(prober: Path,
                                                capsys: pytest.CaptureFixture) -> None:
    assert main(["ftrace", "--arch", "arm", "--module", str(prober), "--workload",
                 "prober:prober_run", "--size", "2", "--expect", "201",
                 "--filter", "prober_*"]) == 0
    out = capsys.readouterr().out
    assert [f for f in ("prober_init", "prober_run", "prober_exit") if f in out] == \
        ["prober_init", "prober_run", "prober_exit"]
    line = PROBER.splitlines().index("\t\tkfree(kmalloc(24, GFP_KERNEL));") + 1
    assert main(["probe", "--arch", "x86_64", f"{prober}:{line}", "--module", str(prober),
                 "--workload", "prober:prober_run", "--size", "3", "--expect", "301",
                 "--json"]) == 0
    assert '"hits": 3' in capsys.readouterr().out


def test_patchcheck_kernel_builds_the_modules_in(prober: Path) -> None:
    from patchcheck.sweep import CheckSpec
    spec = CheckSpec("arm", 2, kernel=True, modules=(str(prober),))
    assert [m.name for m in spec.checker().build.modules] == ["prober"]
    assert f"--kernel --module {prober}" in spec.replay_command(3)
    assert main(["patchcheck", "--arch", "arm", "--kernel", "--module", str(prober),
                 "--seeds", "1"]) == 0


MARKED = """#include <linux/module.h>
#include <linux/marker.h>
noinline unsigned long mk_fill(unsigned long n)
{
\ttrace_mark(mk_event, "n %lu", n);
\treturn n * 3;
}
"""


def test_site_and_kprobe_events_take_a_module(tmp_path: Path,
                                              capsys: pytest.CaptureFixture) -> None:
    """A module's own marker is shown by ``kisim site``, and ``kisim kprobe-events``
    defines a probe on a module's function, as trace and record take them."""
    module = tmp_path / "mk.c"
    module.write_text(MARKED)
    assert main(["site", "--arch", "arm", "--module", str(module), "mk_event"]) == 0
    out = capsys.readouterr().out
    assert "marker mk_event, 1 __markers record(s), 1 enable site(s)" in out
    assert "function=mk_fill" in out
    assert main(["kprobe-events", "--arch", "ppc32", "--module", str(module),
                 "p:myf mk_fill n=%gpr3"]) == 0
    assert capsys.readouterr().out.startswith("p:kprobes/myf mk_fill n=%gpr3\n")
    assert main(["kprobe-events", "--arch", "ppc32", "p:myf mk_fill"]) == 2


def test_a_kprobe_the_workload_never_reaches_says_so(prober: Path,
                                                     capsys: pytest.CaptureFixture) -> None:
    """No hits, no missed hits: the run view says the workload never ran the probed
    instruction, and where a --module is built, how its function would run."""
    assert main(["kprobe", "--arch", "arm", "--at", "sys_getppid", "--cycles", "count"]) == 0
    assert "per hit       none: kmalloc never ran sys_getppid+0x0\n" in capsys.readouterr().out
    assert main(["kprobe", "--arch", "arm", "--at", "prober_run", "--module", str(prober),
                 "--cycles", "count"]) == 0
    assert ("never ran prober_run+0x0; a --module's function runs in a --workload "
            "MODULE:FUNC") in capsys.readouterr().out
