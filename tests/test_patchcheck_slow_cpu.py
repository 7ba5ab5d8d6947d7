"""The patch checker sees what a slow CPU sees (issue 36): long turns, late
interrupts, and a kernel developer's own version of the arch's patching file.

- A CPU's turn may run as long as the longest trap path, derived from the
  guest's code (:func:`patchcheck.guest.trap_path_bound`), after the events
  the seed picks (a text store, an IPI, a trap): x86 ``text_poke_bp_batch()``
  publishing ``bp_desc`` after its ``int3`` stores is caught, which 12-
  instruction turns never showed (the handler needs about 25 to reach its load).
- An IPI is taken after a seeded latency and never while interrupts are
  masked: a ``text_poke_sync()`` that does not wait for its IPI is caught.
- ``--patching-source FILE.c`` builds the guest with the user's file in place
  of ``arches/<arch>/patching.c``; the unsafe versions are each one edit of
  v5.10's code, made here from the arch's own file.
"""
from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import unicorn

import patchcheck.checker as checker_mod
from kbuild.image import REPO
from kisim.cli import main
from patchcheck.checker import PatchChecker
from patchcheck.guest import PATCHER, trap_path_bound
from patchcheck.sites import CheckerError
from patchcheck.sweep import CheckSpec, ablation_names, sweep
from arches.x86_64 import INT3, poke_int3_handler, split_out_of_line, write_out_of_line

X86 = "x86_64"
WITHIN = 500                        # issue 36: each unsafe routine caught within these seeds

PUBLISH = "\t__atomic_store_n(&bp_desc, &desc, __ATOMIC_RELEASE);\t/* smp_store_release() */\n"
INT3S = """\t/* First step: add a int3 trap to the address that will be patched. */
\tfor (i = 0; i < nr_entries; i++) {
\t\ttp[i].old = *(u8 *)text_poke_addr(&tp[i]);
\t\ttext_poke(text_poke_addr(&tp[i]), &int3, INT3_INSN_SIZE);
\t}
"""
WAIT = "\ton_each_cpu(do_sync_core, NULL, 1);"
FINAL = """\tif (do_sync)
\t\ttext_poke_sync();

\t/* Remove and synchronize_rcu(), except we have a very primitive refcount based completion. */
\tWRITE_ONCE(bp_desc, NULL);\t/* RCU_INIT_POINTER */
"""


def x86_source() -> str:
    return (REPO / "arches/x86_64/patching.c").read_text()


def edited(tmp_path: Path, name: str, *edits: tuple[str, str]) -> str:
    """The arch's patching.c with each (old, new) edit made once, as ``name``."""
    text = x86_source()
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def late_desc(tmp_path: Path) -> str:
    """bp_desc published after the int3s."""
    return edited(tmp_path, "late_desc.c", (PUBLISH, ""), (INT3S, INT3S + PUBLISH))


def no_wait(tmp_path: Path) -> str:
    """text_poke_sync() that does not wait for the other CPUs."""
    return edited(tmp_path, "no_wait.c", (WAIT, WAIT.replace("1);", "0);")))


def early_clear(tmp_path: Path) -> str:
    """bp_desc cleared before the final sync."""
    return edited(tmp_path, "early_clear.c", (FINAL, (
        "\tWRITE_ONCE(bp_desc, NULL);\n\tif (do_sync)\n\t\ttext_poke_sync();\n")))


def early_clear_twin(port, sites) -> None:
    """The Python twin of :func:`early_clear`: x86's text_poke_bp_batch() with its int3
    handler removed before the final sync."""
    code, sites = split_out_of_line(sites)
    multi = [(addr, insn) for addr, insn in sites if len(insn) > 1]
    table = dict(multi)
    write_out_of_line(port, code, None)
    with port.breakpoint_handler(lambda frame, addr: poke_int3_handler(port, table, frame,
                                                                       addr)):
        for addr, _ in multi:
            port.write_text(addr, INT3)
        port.sync_all()
        for addr, insn in multi:
            port.write_text(addr + 1, insn[1:])
        port.sync_all()
        for addr, insn in sites:
            port.write_text(addr, insn[:1])
    port.sync_all()


def first_finding(checker: PatchChecker, seeds: range):
    for seed in seeds:
        found = checker.run_seed(seed)
        if found:
            return found[0]
    return None


@pytest.mark.slow
def test_a_patching_source_equal_to_the_arch_file_is_clean(tmp_path) -> None:
    checker = PatchChecker(X86, 2, guest=True, guest_patching=edited(tmp_path, "same.c"))
    assert checker.protocol_name == "same.c"
    assert first_finding(checker, range(10)) is None


@pytest.mark.slow
def test_bp_desc_published_after_the_int3s_is_caught(tmp_path) -> None:
    found = first_finding(PatchChecker(X86, 2, guest=True, guest_patching=late_desc(tmp_path)),
                          range(WITHIN))
    assert found is not None and found.kind == "fault", found
    assert "breakpoint" in found.detail


@pytest.mark.slow
def test_without_long_turns_bp_desc_published_late_passes(tmp_path, monkeypatch) -> None:
    """The negative control of the long turns: with none, the late bp_desc passes the
    seeds that catch it with them."""
    source = late_desc(tmp_path)
    caught = first_finding(PatchChecker(X86, 2, guest=True, guest_patching=source), range(60))
    assert caught is not None
    monkeypatch.setattr(checker_mod, "LONG_CHANCES", (0.0, 0.0))
    monkeypatch.setattr(checker_mod, "DELAY_CHANCE", 0.0)       # nor a delayed patcher
    assert first_finding(PatchChecker(X86, 2, guest=True, guest_patching=source),
                         range(caught.seed + 1)) is None


@pytest.mark.slow
def test_text_poke_sync_that_does_not_wait_is_caught(tmp_path) -> None:
    found = first_finding(PatchChecker(X86, 2, guest=True, guest_patching=no_wait(tmp_path)),
                          range(WITHIN))
    assert found is not None and found.kind in ("torn", "fault"), found


@pytest.mark.slow
def test_descriptor_cleared_early_is_caught_half_as_often_as_its_python_twin(tmp_path) -> None:
    """Issue 36 asks the guest to catch it at least half as often as the twin: over
    seeds 0-999, 593 against 866. It fell short (414) while a CPU in its IPI
    handler when the patching CPU's wait ended ran on only in short turns, and
    was still there when bp_desc was cleared (:meth:`PatchChecker._run_on`)."""
    seeds = range(1000)
    guest = PatchChecker(X86, 2, guest=True, guest_patching=early_clear(tmp_path))
    python = PatchChecker(X86, 2, protocol=early_clear_twin)
    caught_guest = sum(bool(guest.run_seed(s)) for s in seeds)
    caught_python = sum(bool(python.run_seed(s)) for s in seeds)
    assert caught_python > 800, caught_python
    assert 2 * caught_guest >= caught_python, (caught_guest, caught_python)


def test_a_cpu_in_its_handler_runs_on_when_the_wait_ends(tmp_path, monkeypatch) -> None:
    """At the patching CPU's first step after a spin, a CPU in the guest's code runs
    on toward its handler's return; seed 1 of the early clear needs it: CPU 1,
    back from the sync before bp_desc is cleared, fetches an int3 the final sync
    has not removed. The negative control: with the ordinary short draw there, it
    is still in the IPI's return path then, and seed 1 passes."""
    source = early_clear(tmp_path)
    ran_on: list[bool] = []
    run_on = PatchChecker._run_on

    def recorded(self: PatchChecker, index: int) -> int:
        ran_on.append(self.guest.in_guest(index) and self.guest._spinning)
        return run_on(self, index)

    monkeypatch.setattr(PatchChecker, "_run_on", recorded)
    found = PatchChecker(X86, 2, guest=True, guest_patching=source).run_seed(1)
    assert [f.kind for f in found] == ["fault"] and "breakpoint" in found[0].detail
    assert ran_on and all(ran_on)
    monkeypatch.setattr(PatchChecker, "_run_on", lambda self, index: self._draw(index))
    assert PatchChecker(X86, 2, guest=True, guest_patching=source).run_seed(1) == []


@pytest.mark.slow
def test_the_longest_turn_comes_from_the_code(tmp_path) -> None:
    """The bound grows with the handler: 40 more instructions in the #BP entry."""
    checker = PatchChecker(X86, 2, guest=True)
    longer = edited(tmp_path, "longer.c", ('"\tcall\texc_int3\\n"',
                                           '"\t.rept 40\\n\tnop\\n\t.endr\\n\tcall\texc_int3\\n"'))
    other = PatchChecker(X86, 2, guest=True, guest_patching=longer)
    assert other.longest == checker.longest + 40
    g = checker.guest
    entry = g.symbols[g.hooks.BREAKPOINT_ENTRY]
    only_entry = [f for f in g.image.functions if f[0] == entry]
    assert trap_path_bound(checker.arch, checker.machine, only_entry, [entry]) < checker.longest


def test_a_pending_ipi_is_never_taken_while_masked() -> None:
    checker = PatchChecker(X86, 2, guest=True)
    checker._reset(0)
    g = checker.guest
    g.ipis.pending[1] = True
    g.due[1] = 0                                        # its latency is over
    cpu = checker.machine.cpus[1]
    cpu.set_reg("rflags", cpu.reg("rflags") & ~0x200)   # IF clear
    pc = cpu.pc
    g.deliver(1)
    assert g.ipis.pending[1] and cpu.pc == pc
    cpu.set_reg("rflags", cpu.reg("rflags") | 0x200)
    g.due[1] = cpu.instructions + 5                     # not yet
    g.deliver(1)
    assert g.ipis.pending[1] and g.latency(1) == 5
    g.due[1] = cpu.instructions
    g.deliver(1)
    assert not g.ipis.pending[1] and cpu.pc == g.symbols[g.hooks.IRQ_ENTRY]


def test_replay_command_carries_the_patching_source(tmp_path) -> None:
    spec = CheckSpec(X86, 2, guest=True, patching_source=str(tmp_path / "my patch.c"))
    assert spec.replay_command(7).endswith(f"--guest --patching-source "
                                           f"'{tmp_path}/my patch.c' --replay 7")


@pytest.mark.slow
def test_cli_patching_source_finding_replays(tmp_path, capsys) -> None:
    source = early_clear(tmp_path)
    assert main(["patchcheck", "--arch", X86, "--patching-source", source, "--seeds", "10",
                 "--jobs", "1"]) == 1
    out = capsys.readouterr().out
    assert f"--guest --patching-source {source} --replay" in out


@pytest.mark.slow
@pytest.mark.parametrize("old, new, says", [
    ("noinline void cpu_relax(void)", "noinline void my_relax(void)", "cpu_relax"),
    ("asm_exc_int3", "my_int3", "asm_exc_int3"),
])
def test_cli_refuses_a_patching_source_without_the_entry_points(tmp_path, capsys, old, new,
                                                                 says) -> None:
    path = tmp_path / "edited.c"
    path.write_text(x86_source().replace(old, new))
    assert main(["patchcheck", "--arch", X86, "--patching-source", str(path), "--seeds",
                 "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0], err


@pytest.mark.parametrize("name, text, says", [
    ("missing.c", None, "missing.c"),
    ("notc.txt", "int x;", "C file"),
    pytest.param("broken.c", "#include \"guest.h\"\nint f( {\n", "broken.c:2:",
                 marks=pytest.mark.slow),
])
def test_cli_refuses_bad_patching_sources(tmp_path, capsys, name, text, says) -> None:
    path = tmp_path / name
    if text is not None:
        path.write_text(text)
    assert main(["patchcheck", "--arch", X86, "--patching-source", str(path), "--seeds",
                 "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0], err


@pytest.mark.slow
def test_guest_side_refuses_a_missing_entry_as_checker_error(tmp_path) -> None:
    text = x86_source().replace("const u64 gdt_page[3]", "const u64 my_gdt[3]")
    path = tmp_path / "nogdt.c"
    path.write_text(text)
    with pytest.raises(CheckerError, match="gdt_page"):
        PatchChecker(X86, 2, guest=True, guest_patching=str(path))


# -- users' routines call what the arch's patching.h offers --------------------------------

DATA = Path(__file__).parent / "data" / "patchcheck"


def _user(arch: str, path: Path | str, name: str) -> PatchChecker:
    return PatchChecker(arch, 2, guest=True, guest_sources=(str(path),), guest_protocol=name)


@pytest.mark.slow
@pytest.mark.parametrize("arch, file, name", [
    ("arm", "arm_routines.c", "my_patch"),                    # flush_icache_range()
    ("ppc32", "ppc_routines.c", "my_patch"),                  # patch_instruction()
    ("x86_64", "x86_poke_bp.c", "my_poke_bp"),                # bp_desc, text_poke_bp_batch's parts
])
def test_a_users_routine_calls_the_arch_functions_and_is_clean(arch, file, name) -> None:
    assert first_finding(_user(arch, DATA / file, name), range(30)) is None


@pytest.mark.slow
def test_a_users_poke_bp_variant_claims_its_int3s(tmp_path) -> None:
    """Publishing bp_desc late is caught; published first, the same seeds are clean, and
    the other CPU did trap on the variant's int3s (poke_int3_handler claimed them)."""
    late = tmp_path / "late.c"
    late.write_text((DATA / "x86_poke_bp.c").read_text().replace(
        "#ifndef PUBLISH_LATE", "#if 0").replace("#ifdef PUBLISH_LATE", "#if 1"))
    found = first_finding(_user(X86, late, "my_poke_bp"), range(WITHIN))
    assert found is not None and found.kind == "fault", found
    checker = _user(X86, DATA / "x86_poke_bp.c", "my_poke_bp")
    entered = []
    entry = checker.guest.symbols[checker.guest.hooks.BREAKPOINT_ENTRY]
    checker.machine.cpus[1].uc.hook_add(unicorn.UC_HOOK_CODE,
                                        lambda *_: entered.append(1), None, entry, entry)
    assert first_finding(checker, range(max(found.seed + 1, 30))) is None
    assert entered, "the other CPU never trapped on the variant's int3s"


@pytest.mark.slow
def test_cli_refuses_a_guest_protocol_that_is_no_function(capsys) -> None:
    assert main(["patchcheck", "--arch", "arm", "--module", str(DATA / "arm_routines.c"),
                 "--guest-protocol", "not_a_function", "--seeds", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not_a_function: not a function" in err[0], err


# -- bounded waits ---------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("on_hang, seeds", [("stop", 1), ("continue", 2)])
def test_a_routine_that_never_returns_is_one_hang_and_the_sweep_stops_or_goes_on(
        on_hang, seeds) -> None:
    spec = CheckSpec(X86, 2, guest=True, modules=(str(DATA / "x86_hang.c"),),
                     guest_protocol="my_hang", on_hang=on_hang)
    result = sweep(spec, range(5 if on_hang == "stop" else seeds), jobs=1)
    assert result.interleavings == seeds
    assert result.counts == {"hang": seeds}
    assert "spun 10,000 times" in result.findings[0].detail


def test_on_hang_is_checked() -> None:
    with pytest.raises(CheckerError, match="on_hang"):
        CheckSpec(X86, 2, on_hang="retry")


@pytest.mark.slow
def test_sigterm_ends_a_billion_seed_sweep_within_2_s() -> None:
    """The seed range is checked by its ends: min()/max() walked all 10^9 seeds before
    the sweep began, and a signal waited for them."""
    proc = subprocess.Popen([sys.executable, "-m", "kisim.cli", "patchcheck", "--arch", X86,
                             "--seeds", "1000000000", "--jobs", "1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(4)
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert time.monotonic() - sent < 2, err
    assert proc.returncode == 143, err


# -- use after release, direct text stores ---------------------------------------------------

def test_a_read_of_a_released_descriptor_is_a_finding() -> None:
    """text_poke_bp_batch() releases its descriptor (pc_release) when its stack frame
    dies; the checker poisons it, and another CPU's read of it is a fault finding."""
    checker = PatchChecker(X86, 2, guest=True)
    assert not checker.run_seed(0)
    g = checker.guest
    assert g.released, "the reference released no descriptor"
    begin, end = g.released[-1]
    assert checker.machine.read(begin, end - begin) == b"\x6b" * (end - begin)
    m = checker.machine
    m.map(0x200000, 0x1000, "rwx")
    m.write(0x200000, bytes.fromhex("488b18"))            # mov rbx, [rax]
    cpu = m.cpus[1]
    cpu.pc, cpu_rax = 0x200000, begin
    cpu.set_reg("rax", cpu_rax)
    checker.findings, checker._dead = [], [False, False]
    m.step(1, 1)
    assert [f.kind for f in checker.findings] == ["fault"]
    assert "released" in checker.findings[0].detail


@pytest.mark.slow
def test_a_store_straight_to_text_is_a_fault_finding_with_a_replay(capsys) -> None:
    assert main(["patchcheck", "--arch", X86, "--module", str(DATA / "x86_direct.c"),
                 "--guest-protocol", "my_direct", "--seeds", "2", "--jobs", "1"]) == 1
    out = capsys.readouterr().out
    assert "fault: stored 1 bytes to read-only kernel text" in out
    assert "--guest-protocol my_direct --replay 0" in out


KPROBE_LOOP = "jump,call,ftrace,kprobe"      # the armed kprobe's int3 stays after every sync
RELEASED = "descriptor the protocol had released"


def late_handler(finding) -> bool:
    """A handler still using the descriptor after the protocol released it: its read,
    or the patching CPU's fault on a frame the handler's decrement overwrote."""
    return RELEASED in finding.detail or (finding.cpu == PATCHER and finding.kind == "fault")


@pytest.mark.slow
def test_the_patching_cpu_is_delayed_only_where_its_interrupts_are_enabled(monkeypatch) -> None:
    """A delay stands for an interrupt or preemption of the patching CPU: it falls
    only at steps where that CPU has interrupts enabled (never inside text_poke()'s
    local_irq_save()), on the seeds that allow it, and lets the others run long."""
    seen: list[tuple[bool, int]] = []
    delay = PatchChecker._delay

    def recorded(self: PatchChecker) -> int:
        count = delay(self)
        seen.append((self.guest.ipis.enabled(PATCHER), count))
        return count

    monkeypatch.setattr(PatchChecker, "_delay", recorded)
    checker = PatchChecker(X86, 2, guest=True)
    for seed in range(3):
        checker.run_seed(seed)
    assert seen and all(enabled for enabled, _ in seen), seen
    assert max(count for _, count in seen) > checker_mod.MAX_RUN
    seen.clear()
    monkeypatch.setattr(checker_mod, "DELAY_CHANCE", 0.0)
    for seed in range(3):
        checker.run_seed(seed)
    assert seen == []


@pytest.mark.slow
def test_the_refs_wait_removed_is_caught_where_an_int3_stays() -> None:
    """Without the wait for bp_desc.refs, text_poke_bp_batch() releases its descriptor
    while a poke_int3_handler() that took a reference after the last sync (on the
    armed kprobe's int3, which no sync removes) still uses it: caught within 500
    seeds, first at a seed where v5.10 itself is clean, and over 1,000 seeds more
    than twice as often as v5.10's own try_get_desc() race (a read before the
    reference is taken; 26 and 10 seeds). Each finding is a read of the released
    descriptor, or the patching CPU's fault when the handler's put_desc() decrement
    lands in the frame of the protocol's next call (its return address)."""
    seeds = range(2 * WITHIN)
    ablated = sweep(CheckSpec(X86, 2, guest=True, sites=KPROBE_LOOP, without="refs wait"), seeds)
    reference = sweep(CheckSpec(X86, 2, guest=True, sites=KPROBE_LOOP), seeds)
    assert ablated.total and all(map(late_handler, ablated.findings))
    assert any(RELEASED in f.detail for f in ablated.findings)
    assert ablated.findings[0].seed < WITHIN
    assert ablated.findings[0].seed not in {f.seed for f in reference.findings}
    assert ablated.total > 2 * max(1, reference.total), (ablated.total, reference.total)


@pytest.mark.slow
def test_without_patcher_delays_the_refs_wait_removed_passes_those_seeds(monkeypatch) -> None:
    """The negative control of the delays: the seed that catches the refs-wait removal
    passes without them (the handler then never enters after the last sync and is
    still inside when the descriptor is released)."""
    spec = CheckSpec(X86, 2, guest=True, sites=KPROBE_LOOP, without="refs wait")
    caught = first_finding(spec.checker(), range(WITHIN))
    assert caught is not None and late_handler(caught)
    monkeypatch.setattr(checker_mod, "DELAY_CHANCE", 0.0)
    assert first_finding(spec.checker(), range(caught.seed + 1)) is None


@pytest.mark.slow
def test_on_jump_and_call_sites_the_refs_wait_is_redundant() -> None:
    """The int3 handler runs with interrupts masked, so the last text_poke_sync()
    completes only once every handler that entered before it has returned, and on
    jump and call sites no int3 is left after it: removing the wait changes nothing
    there, and --ablate does not offer it."""
    assert "refs wait" not in ablation_names(CheckSpec(X86, 2, guest=True))
    assert "refs wait" in ablation_names(CheckSpec(X86, 2, guest=True, sites=KPROBE_LOOP))
    result = sweep(CheckSpec(X86, 2, guest=True, without="refs wait"), range(300))
    assert result.total == 0, [f.line() for f in result.findings[:3]]


def test_v5_10_try_get_desc_race_with_a_kprobe_is_found() -> None:
    """v5.10's own text_poke_bp_batch() with an armed kprobe: the other CPU enters
    poke_int3_handler() on the kprobe's int3 (no sync excludes it), reads bp_desc,
    and the protocol clears it and returns, releasing its on-stack descriptor,
    before the handler's atomic_inc_not_zero(&desc->refs). The race upstream
    commit efd608fa7403 ("x86/alternative: Fix race in try_get_desc()", 2022)
    fixed; seed 284 replays it."""
    found = PatchChecker(X86, 2, guest=True, sites=KPROBE_LOOP).run_seed(284)
    assert [f.kind for f in found] == ["fault"]
    assert "descriptor the protocol had released" in found[0].detail
    assert found[0].cpu == 1


def test_a_trap_whose_handler_a_phase_change_overtakes_is_judged_by_both(monkeypatch) -> None:
    """Seed 3862: CPU 1 traps on the armed kprobe's int3 before the optimizing batch
    publishes bp_desc, and its poke_int3_handler(), still running, reads it once
    published and emulates the jump into the detour. The new instruction, decided
    during the patch: clean. Judged only by the phase it trapped in, it was
    "stale" (the negative control)."""
    checker = PatchChecker(X86, 2, guest=True, sites="optprobe")
    assert checker.run_seed(3862) == []
    use = checker._use

    def without_traps(index: int) -> None:
        use(index)
        checker._traps = dict.fromkeys(checker._traps, frozenset())

    monkeypatch.setattr(checker, "_use", without_traps)
    found = checker.run_seed(3862)
    assert [f.kind for f in found] == ["stale"] and "jmp" in found[0].insn, found


def test_an_optprobe_detour_costs_no_sync_round() -> None:
    """v5.10 arch_prepare_optimized_kprobe() only text_poke()s the detour: optimizing
    an armed kprobe takes text_poke_bp_batch()'s three sync rounds (each waits until
    CPU 1 has taken its IPI) and no fourth."""
    checker = PatchChecker(X86, 2, guest=True, sites="optprobe")
    checker._reset(0)
    checker._operation("enable")
    assert checker.findings == [] and checker.guest.ipis.taken == {1: 3}
