"""Fuzz round 5 (issue 38): each finding's reproducer, now a one-line answer."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from arches import NAMES
from kisim.cli import main

A = NAMES[0]


def _source(tmp_path: Path, name: str, text: str) -> str:
    """``text`` written to ``tmp_path/name``: its path."""
    (tmp_path / name).write_text(text)
    return str(tmp_path / name)


# -- a --module path that is a symbolic link loop ----------------------------------------

@pytest.fixture
def loops(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "loop.c").symlink_to("loop.c")
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "x.c").symlink_to("x.c")          # the directory's only C file
    (tmp_path / "ok.c").write_text("int ok(void) { return 0; }\n")
    return {"file": str(tmp_path / "loop.c"), "dir": str(tmp_path / "dir"),
            "list": f"{tmp_path / 'ok.c'},{tmp_path / 'loop.c'}"}


LOOP_RUNS = [(cmd, form) for cmd in (("boot", "--arch", A), ("symbols", "--arch", A),
                                     ("patchcheck", "--arch", A, "--seeds", "1", "--guest"))
             for form in ("file", "dir", "list")]


@pytest.mark.parametrize("cmd, form", LOOP_RUNS, ids=[f"{c[0]}-{f}" for c, f in LOOP_RUNS])
def test_a_looping_module_path_is_one_line(cmd, form, loops, capsys) -> None:
    assert main([*cmd, "--module", loops[form]]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    looping = loops["file"] if form != "dir" else loops["dir"] + "/x.c"
    assert err == f"kisim: error: {looping}: a symbolic link loop\n"


# -- a signal while the commands import --------------------------------------------------

def _catches(pid: int, sig: signal.Signals) -> bool:
    """Whether process ``pid`` has a handler for ``sig`` (``SigCgt``, proc(5))."""
    with open(f"/proc/{pid}/status") as status:
        mask = next(int(line.split()[1], 16) for line in status if line.startswith("SigCgt:"))
    return bool(mask >> (sig - 1) & 1)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_while_the_commands_import_is_one_line(sig) -> None:
    """The signal goes as soon as kisim handles SIGTERM, and at the latest after
    1 s: the imports take seconds, so it lands in them (a KeyboardInterrupt
    traceback, or a silent death by SIGTERM, when the handlers came after them)."""
    proc = subprocess.Popen([sys.executable, "-m", "kisim", "arches"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline and not _catches(proc.pid, signal.SIGTERM):
        time.sleep(0.005)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, err
    assert err == ("kisim: interrupted\n" if sig == signal.SIGINT else "kisim: terminated\n")
    assert out == ""                                  # the command never ran


# -- a pre_handler that returns non-zero and leaves the PC on the breakpoint ------------

STUCK = ("#include <linux/kprobes.h>\n"
         "int stuck_pre(struct kprobe *p, struct pt_regs *regs)\n{\n\treturn 1;\n}\n")


#: A SIGTERM whose exception the handler raises inside a weakref callback (as in
#: importlib's module locks), where Python prints it and goes on: before the fix, the
#: command then ran to its end and exited 0.
LOST_SIGNAL = """
import os, signal, sys, weakref
from kisim import cli
real = cli._dispatch
def dispatch(argv):
    o = type("O", (), {})()
    weakref.finalize(o, os.kill, os.getpid(), signal.SIGTERM)
    del o
    return real(argv)
cli._dispatch = dispatch
sys.exit(cli.main(["arches"]))
"""


def test_a_signal_lost_before_the_imports_end_still_ends_the_command() -> None:
    """The exception of a signal that came before sim.signals was imported is kept:
    lost in a callback, it is raised again once the imports are done, so the
    command ends as terminated (143), with its one line and no traceback."""
    proc = subprocess.run([sys.executable, "-c", LOST_SIGNAL], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, proc.stderr
    assert proc.stderr == "kisim: terminated\n" and proc.stdout == ""


@pytest.mark.slow
@pytest.mark.parametrize("name", ["arm", "ppc32"])
def test_a_handler_returning_non_zero_in_place_is_stopped(name, tmp_path) -> None:
    """v5.10 re-enters the breakpoint forever; kisim stops after MAX_REENTRIES, well
    before the run's budget (which here would take a minute to reach)."""
    from kbuild import build
    from kbuild.modules import load_module
    from probes.kprobes import MAX_REENTRIES, Kprobe, Kprobes
    from sim.errors import GuestFault
    from sim.guest import Guest
    (tmp_path / "h.c").write_text(STUCK)
    guest = Guest(build(name, modules=[load_module(tmp_path / "h.c")]), workload="kmalloc",
                  size=3)
    kprobes = Kprobes(guest)
    kp = kprobes.register_kprobe(Kprobe(symbol_name="kmalloc", pre_handler="stuck_pre"))
    with pytest.raises(GuestFault) as fault:
        guest.run(max_instructions=5_000_000)
    assert "the kprobe at kmalloc+0x0: its pre_handler returned non-zero" in str(fault.value)
    assert f"stopped after {MAX_REENTRIES} re-entries in a row" in str(fault.value)
    assert kp.hits == MAX_REENTRIES and fault.value.pc == kp.addr


@pytest.mark.slow
def test_many_hits_in_a_row_of_an_ordinary_probe_are_no_loop() -> None:
    """The negative control: more than MAX_REENTRIES hits of one probe, each
    resuming past it, run to the end."""
    from kbuild import build
    from probes.kprobes import MAX_REENTRIES, Kprobe, Kprobes
    from sim.guest import Guest
    guest = Guest(build("arm"), workload="kmalloc", size=MAX_REENTRIES + 10)
    kp = Kprobes(guest).register_kprobe(Kprobe(symbol_name="kmalloc",
                                               pre_handler="kprobe_empty_pre_handler"))
    assert guest.run().ok and kp.hits > MAX_REENTRIES


# -- --every-instruction: --opt without optprobes, and a module kprobes may not probe ----

NO_OPTPROBES = [("ppc32",), ("arm", "--set", "THUMB2_KERNEL=y")]


@pytest.mark.slow
@pytest.mark.parametrize("kernel", NO_OPTPROBES, ids=["ppc32", "thumb2"])
@pytest.mark.parametrize("where", [("--at", "kmalloc"), ("--every-instruction", "kmalloc")],
                         ids=["at", "every-instruction"])
def test_opt_without_optprobes_is_refused_alike(kernel, where, capsys) -> None:
    assert main(["kprobe", "--arch", *kernel, *where, "--opt", "--size", "3"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("kisim: error: EINVAL: kprobe: no optprobes on ")
    assert captured.err.count("\n") == 1


NOKPROBE = ("#include <linux/kprobes.h>\n"
            "unsigned long nok_run(unsigned long x) { return x + 1; }\n"
            "NOKPROBE_SYMBOL(nok_run);\n")


@pytest.mark.slow
def test_every_instruction_over_nokprobe_code_says_why(tmp_path, capsys) -> None:
    argv = ["kprobe", "--arch", "arm", "--module", _source(tmp_path, "nok.c", NOKPROBE),
            "--every-instruction", "nok", "--workload", "nok:nok_run", "--size", "3"]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "blacklisted (NOKPROBE_SYMBOL(nok_run))" in out
    assert out.splitlines()[-1].split() == ["not", "ok", "nothing", "probed:", "the", "kernel",
                                            "refused", "all", "7", "instruction(s)"]
    assert main([*argv, "--json"]) == 1
    found = json.loads(capsys.readouterr().out)
    assert found["probed"] == 0 and found["failure"].startswith("nothing probed")


# -- the workload's name, whole, in the console ------------------------------------------

LONG = "a_function_whose_name_is_longer_than_sixteen_bytes"


@pytest.mark.slow
def test_the_console_names_a_long_workload_whole(tmp_path, capsys) -> None:
    (tmp_path / "longname.c").write_text(f"unsigned long {LONG}(unsigned long x) "
                                         "{ return x + 1; }\n")
    assert main(["boot", "--arch", A, "--module", str(tmp_path / "longname.c"), "--workload",
                 f"longname:{LONG}", "--size", "3"]) == 0
    out = capsys.readouterr().out
    assert f"workload longname:{LONG} size 3\n" in out
    assert f"kisim: longname:{LONG} done, checksum 00000004\n" in out


def test_a_workload_name_longer_than_boot_params_holds_is_one_line(capsys) -> None:
    from sim.workloads import WORKLOAD_NAME_LEN
    name = "m:" + "f" * (WORKLOAD_NAME_LEN - 3)           # with its NUL: the array, full
    assert main(["boot", "--arch", A, "--workload", name + "f"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"at most {WORKLOAD_NAME_LEN - 1} bytes" in err


# -- a module's .bss far over the image limit, where the link would fail first -----------

@pytest.mark.slow
def test_a_64_gib_bss_gets_the_limit_message(tmp_path, capsys) -> None:
    mod = tmp_path / "huge.c"
    mod.write_text("char huge[64UL << 30];\n"
                   "unsigned long run(unsigned long x) { huge[x] = 1; return huge[x / 2]; }\n")
    assert main(["boot", "--arch", "x86_64", "--module", str(mod), "--workload", "huge:run",
                 "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert captured.err.startswith(f"kisim: error: {mod}: their objects take 0x10000000")
    assert captured.err.endswith("bytes of memory (code, data and .bss); the limit is 256 MiB\n")


# -- a module that calls kisim's exit hypercall -----------------------------------------

QUIT = ("#include <linux/module.h>\n#include <kisim/hypercall.h>\n"
        "static int __init quit_init(void)\n{\n\thypercall1(HC_EXIT, 0);\n\treturn 0;\n}\n"
        "module_init(quit_init);\n")


@pytest.mark.slow
def test_an_exit_hypercall_from_a_module_is_reported_as_such(tmp_path, capsys) -> None:
    argv = ["boot", "--arch", A, "--module", _source(tmp_path, "quit.c", QUIT), "--size", "3"]
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "MISMATCH" not in captured.err
    assert captured.err.startswith("kisim: guest fault: HC_EXIT (kisim's exit hypercall) at "
                                   "quit_init+0x")
    assert "while the kernel was not halting" in captured.err.splitlines()[0]
    assert main([*argv, "--json"]) == 1
    assert "HC_EXIT" in json.loads(capsys.readouterr().out)["fault"]["reason"]


# -- patchcheck --guest-protocol: a user's routine is compiled as a module is ----------

WARNS = ('#include "guest.h"\n'
         "void my_poke(const struct pc_site *s, int nr)\n"
         "{\n\tint unused;\n\n\tarch_patch_batch(s, nr);\n}\n")


@pytest.mark.slow
def test_a_guest_protocols_warnings_are_errors_only_with_module_werror(tmp_path,
                                                                       capsys) -> None:
    argv = ["patchcheck", "--arch", A, "--seeds", "3", "--jobs", "1", "--module",
            _source(tmp_path, "warns.c", WARNS), "--guest-protocol", "my_poke"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "my_poke" in captured.out
    assert f"{tmp_path / 'warns.c'}:4:6: warning: unused variable 'unused'" in captured.err
    assert main([*argv, "--module-werror"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "warns.c:4:6: error: unused variable 'unused'" in err


# -- ARM: Thumb code in an A32 kernel ----------------------------------------------------

THUMB_IN_A32 = """#include <linux/ftrace.h>
__attribute__((target("thumb"))) notrace unsigned long thn_run(unsigned long x)
{
	switch (x & 7) {	/* a tbb: an ARM breakpoint would land inside it */
	case 0: return x + 3; case 1: return x + 5; case 2: return x + 7;
	case 3: return x + 11; case 4: return x + 13; default: return x + 1;
	}
}
unsigned long arm_run(unsigned long x) { return x + 2; }
"""


@pytest.mark.slow
def test_thumb_functions_in_an_a32_kernel_are_refused_with_the_reason(tmp_path,
                                                                      capsys) -> None:
    from kbuild import build
    from lab.symbols import list_functions
    path = _source(tmp_path, "thn.c", THUMB_IN_A32)
    rows = {r.name: r for r in list_functions(build("arm", modules=[path]))}
    assert rows["arm_run"].probeable                          # the negative control
    assert not rows["thn_run"].probeable
    assert rows["thn_run"].reason == ("EINVAL: kprobe: thn_run+0x0 is Thumb code: this "
                                      "kernel's kprobes decode ARM (A32) instructions only "
                                      "(arch_prepare_kprobe)")
    assert main(["kprobe", "--arch", "arm", "--module", path, "--every-instruction",
                 "thn:thn_run", "--workload", "thn:thn_run", "--size", "3", "--json"]) == 1
    found = json.loads(capsys.readouterr().out)
    assert found["probed"] == 0 and found["checksum_ok"]      # the guest ran unharmed
    assert {r["reason"].split(" is ", 1)[1] for r in found["refused"]} == {
        "Thumb code: this kernel's kprobes decode ARM (A32) instructions only "
        "(arch_prepare_kprobe)"}


@pytest.mark.slow
def test_a_thumb_call_to_the_a32_mcount_is_v5_10s_interworking_refusal(tmp_path,
                                                                        capsys) -> None:
    path = _source(tmp_path, "th.c", "__attribute__((target(\"thumb\"))) "
                                     "unsigned long th_run(unsigned long x) { return x + 1; }\n")
    assert main(["boot", "--arch", "arm", "--module", path, "--workload", "th:th_run"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"kisim: error: {path}: th: section ")
    assert err.endswith(" sym '__gnu_mcount_nc': unsupported interworking call (Thumb -> ARM)\n")


@pytest.mark.slow
def test_a_guest_fault_in_thumb_state_is_disassembled_as_thumb() -> None:
    """A32 code blx'es Thumb code whose first load faults: the report decodes the
    faulting bytes as Thumb (CPSR.T is 1), not as ARM."""
    import keystone

    from sim.errors import GuestFault
    from sim.machine import Machine
    arm = keystone.Ks(keystone.KS_ARCH_ARM, keystone.KS_MODE_ARM)
    thumb = keystone.Ks(keystone.KS_ARCH_ARM, keystone.KS_MODE_THUMB)
    base, target = 0x10000, 0x10100
    machine = Machine("arm")
    machine.load_code(bytes(arm.asm(f"mov r1, #0x5000000; blx #{target:#x}", base)[0]), base)
    machine.write(target, bytes(thumb.asm("ldr r0, [r1]; ldr r0, [r1]", target)[0]))
    with pytest.raises(GuestFault) as fault:
        machine.step(0, 100)
    assert fault.value.pc == target
    assert fault.value.insn == "ldr r0, [r1]  (08 68)"


def _function_lines(overrides: dict[str, str]) -> Counter:
    """``func <-parent`` of each function-tracer line of a hackbench run on ARM."""
    from kbuild import build
    from patcher.tables import load_tables
    from probes.function_tracer import FunctionTracer
    from sim.guest import Guest
    from tracing.session import EventList, TraceOptions, TraceSession
    from tracing.text import kernel_line
    kernel = build("arm", overrides=overrides)
    guest = Guest(kernel, workload="hackbench", size=3)
    tracer = FunctionTracer(guest, load_tables(kernel.elf, kernel.spec))
    session = TraceSession(guest, TraceOptions(tracer.event_names))
    tracer.start()
    sink = EventList()
    assert session.run(sink).ok
    return Counter(kernel_line(e, tracer.symbols).split(": ", 1)[1] for e in sink.events
                   if e.name == "function")


@pytest.mark.slow
def test_the_function_tracer_names_parents_alike_on_a32_and_thumb2() -> None:
    """The parent is looked up at the return address itself (v5.10 seq_print_sym):
    a Thumb-2 return address's bit 0 no longer moves it into the next function
    where the A32 one, looked up one byte back, stayed in the caller."""
    a32, thumb2 = _function_lines({}), _function_lines({"THUMB2_KERNEL": "y"})
    assert sum(a32.values()) > 500 and a32 == thumb2


@pytest.mark.slow
@pytest.mark.parametrize("config, odd", [({"THUMB2_KERNEL": "y"}, "probed at offset - 1"),
                                         ({}, "EINVAL")], ids=["thumb2", "a32"])
def test_symbol_name_with_an_odd_offset(config, odd) -> None:
    """Thumb-2: bit 0 cleared, the probe at offset - 1 (v5.10 arch_prepare_kprobe
    "addr &= ~1"); A32 (the negative control): misaligned, -EINVAL."""
    from kbuild import build
    from patcher.errors import PatchError
    from probes.kprobes import Kprobe, Kprobes
    from sim.guest import Guest
    guest = Guest(build("arm", overrides=config), workload="kmalloc", size=3)
    kprobes = Kprobes(guest)
    kmalloc = guest.image.symbols["kmalloc"]
    if odd == "EINVAL":
        with pytest.raises(PatchError, match="misaligned") as err:
            kprobes.register_kprobe(Kprobe(symbol_name="kmalloc", offset=1))
        assert err.value.errno == "EINVAL"
        return
    kp = kprobes.register_kprobe(Kprobe(symbol_name="kmalloc", offset=1,
                                        pre_handler="kprobe_empty_pre_handler"))
    assert kp.addr == kmalloc
    assert guest.run().ok and kp.hits > 0
