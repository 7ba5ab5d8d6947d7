"""What patching text charges each CPU, with the host patcher (PATCHING_IN_GUEST=n)
and with the kernel's own code (=y): the IPIs and serializations v5.10's primitive
costs, per arch (arches/<arch>/__init__.py ``TEXT_SYNC``; docs/machine.md, "What
patching costs").

One jump-label flip from CPU 0, in v5.10:
- x86 text_poke_bp(): three text_poke_sync() = on_each_cpu(do_sync_core): each
  other CPU takes an IPI and runs sync_core(); CPU 0 runs sync_core() itself;
- ARM patch_text(): one stop_machine() (an IPI wakes each other CPU's stopper);
  CPU 0's flush_icache_range() ends with one isb;
- PowerPC patch_instruction(): no IPI at all (icbi is broadcast); CPU 0's isync.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import kbuild
from arches import get_arch
from patcher.instrument import attach
from patcher.text import TextPatcher
from probes.kprobes import Kprobe, Kprobes
from sim import Machine
from sim.guest import Guest

#: Per flip from CPU 0 of 3 or 4: (IPIs, serializations) on CPU 0 and on each other CPU.
PER_FLIP = {"x86_64": ((0, 3), (3, 3)), "arm": ((0, 1), (1, 0)), "ppc32": ((0, 1), (0, 0))}
CHARGED = ("ipi", "serialize")
EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "flip_key.c"
BASE = 0x10000


def _expected(arch: str, flips: int, cpus: int, patcher: int | None) -> list[tuple[int, int]]:
    own, other = PER_FLIP[arch]
    return [tuple(flips * n for n in (own if i == patcher else other)) for i in range(cpus)]


def _charged(machine: Machine) -> list[tuple[int, int]]:
    return [tuple(cpu.events[e] for e in CHARGED) for cpu in machine.cpus]


@pytest.mark.parametrize("patcher", [0, None])
@pytest.mark.parametrize("name", sorted(PER_FLIP))
def test_host_patcher_charges_what_v5_10_sends(name, patcher) -> None:
    """The host patcher's protocol from CPU 0 (or from the host, where every CPU is
    another's) charges the table above: no IPI on PowerPC, none to the patching CPU."""
    arch = get_arch(name)
    m = Machine(arch, 3)
    nop = arch.site_nop
    m.load_code(nop + arch.syscall_insn, BASE)
    jmp = arch.encode_jump(BASE, BASE + 0x80)
    TextPatcher(m, cpu=patcher).text_poke(BASE, nop, jmp, "jump_label")
    assert _charged(m) == _expected(name, 1, 3, patcher)


def _count_charges(monkeypatch, totals: list[Counter[str]]) -> None:
    """Sum into ``totals`` (one per CPU) what each protocol run charged."""
    real = TextPatcher.apply

    def apply(self, sites):
        before = [cpu.events.copy() for cpu in self.machine.cpus]
        try:
            return real(self, sites)
        finally:
            for total, cpu, was in zip(totals, self.machine.cpus, before):
                total.update({e: cpu.events[e] - was[e] for e in CHARGED})

    monkeypatch.setattr(TextPatcher, "apply", apply)


def _tuples(totals: list[Counter[str]]) -> list[tuple[int, int]]:
    return [tuple(c[e] for e in CHARGED) for c in totals]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PER_FLIP))
def test_both_builds_charge_each_flip_the_same(name, monkeypatch) -> None:
    """examples/flip_key.c flips a key 20 times from CPU 0 on 4 CPUs, in count mode.
    What the patching operations charged (their events, summed around each one) is the
    table above, with the host patcher and with the kernel's own code alike: the
    kernel's sync_core(), isb or isync on the patching CPU is charged as the host
    patcher's local serialization is."""
    for y in "yn":
        guest, charged = _flips(name, monkeypatch, y, EXAMPLE, "flip_key:run", 10)
        assert (guest.self_patching is not None) == (y == "y")
        assert charged == _expected(name, 20, 4, 0), y


def _flips(name: str, monkeypatch, y: str, module: Path, workload: str,
           expect: int) -> tuple[Guest, list[tuple[int, int]]]:
    """``module``'s ``workload`` (10 flips from CPU 0) on 4 CPUs, with
    PATCHING_IN_GUEST=``y``: the guest, and what its patching charged each CPU."""
    totals = [Counter() for _ in range(4)]
    with monkeypatch.context() as mp:
        _count_charges(mp, totals)
        build = kbuild.build(name, overrides={"PATCHING_IN_GUEST": y}, modules=[module])
        guest = Guest(build, cpus=4, workload=workload, size=10, quantum=1000, expect=expect)
        attach(guest)
        assert guest.run().ok
    return guest, _tuples(totals)


THREE_SITES = r"""
#include <linux/module.h>
#include <linux/jump_label.h>

static DEFINE_STATIC_KEY_FALSE(three);

static noinline unsigned long a(void) { return static_branch_unlikely(&three) ? 1 : 0; }
static noinline unsigned long b(void) { return static_branch_unlikely(&three) ? 2 : 0; }
static noinline unsigned long c(void) { return static_branch_unlikely(&three) ? 4 : 0; }

unsigned long run(unsigned long size)
{
	unsigned long i, taken = 0;

	for (i = 0; i < size; i++) {
		static_branch_enable(&three);
		taken += a() + b() + c();
		static_branch_disable(&three);
		taken += a() + b() + c();
	}
	return taken;
}
"""


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PER_FLIP))
def test_a_key_of_three_sites_is_one_batch_only_where_the_arch_queues(
        name, monkeypatch, tmp_path) -> None:
    """v5.10 __jump_label_update: x86 (HAVE_JUMP_LABEL_BATCH) queues a key's three
    sites into one text_poke_bp(); ARM and PowerPC call arch_jump_label_transform()
    per site, three stop_machine()s on ARM. The host patcher and the kernel's own
    code charge the same (4 CPUs, 10 enables and 10 disables from CPU 0)."""
    module = tmp_path / "three.c"
    module.write_text(THREE_SITES)
    runs = 1 if get_arch(name).jump_label_batch else 3
    for y in "yn":
        _, charged = _flips(name, monkeypatch, y, module, "three:run", 70)
        assert charged == _expected(name, 20 * runs, 4, 0), y


#: Per kprobe armed or disarmed: IPIs and serializations on each CPU but the patching
#: one. x86 arch_arm_kprobe()/arch_disarm_kprobe(): text_poke() and one
#: text_poke_sync(); ARM and PowerPC as a flip.
PER_KPROBE_OP = {"x86_64": (1, 1), "arm": (1, 0), "ppc32": (0, 0)}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PER_FLIP))
def test_both_builds_charge_a_kprobe_as_v5_10(name, monkeypatch) -> None:
    """From the host, mid-run on 4 CPUs: a kprobe armed, later disarmed. The other CPUs
    are charged one round per operation on x86 (not text_poke_bp()'s three), in both
    builds (with the kernel's code the host's calls run on CPU 0, which is not
    charged; the host patcher charges it as another CPU, so CPUs 1-3 are compared)."""
    for y in "yn":
        build = kbuild.build(name, overrides={"PATCHING_IN_GUEST": y})
        guest = Guest(build, cpus=4, workload="hackbench", seed=1)
        inst = attach(guest)
        kprobes = Kprobes(guest, text=inst.text, tables=inst.tables)
        totals = [Counter() for _ in range(4)]
        probe, turns = [], [0]

        def on_turn(_machine) -> None:
            turns[0] += 1
            if turns[0] == 7:
                probe.append(kprobes.register_kprobe(
                    Kprobe(symbol_name="kfree", pre_handler="kprobe_empty_pre_handler")))
            if turns[0] == 15:
                kprobes.unregister_kprobe(probe[0])

        with monkeypatch.context() as mp:
            _count_charges(mp, totals)
            assert guest.run(on_turn=on_turn).ok
        assert turns[0] > 15 and probe
        assert _tuples(totals)[1:] == [tuple(2 * n for n in PER_KPROBE_OP[name])] * 3, y


@pytest.mark.slow
def test_timing_model_charges_the_kernels_serializations_once(monkeypatch) -> None:
    """Under the timing model (``timing=True``) the kernel's own sync_core() is the
    model's serializing instruction (its ``serialize`` stall), not also an event:
    two x86 flips from CPU 0 serialize it 6 times in the model and charge no
    ``serialize`` event (the count-mode test above charges 6)."""
    build = kbuild.build("x86_64", overrides={"PATCHING_IN_GUEST": "y"}, modules=[EXAMPLE])
    guest = Guest(build, cpus=2, workload="flip_key:run", size=1, quantum=1000, expect=1,
                  timing=True)
    timing, cpu0 = guest.machine.timing, guest.machine.cpus[0]
    seen = []
    real = TextPatcher.apply

    def apply(self, sites):
        before = cpu0.events["serialize"], timing.stats(0).counts["serializations"]
        real(self, sites)
        seen.append((cpu0.events["serialize"] - before[0],
                     timing.stats(0).counts["serializations"] - before[1]))

    monkeypatch.setattr(TextPatcher, "apply", apply)
    attach(guest)
    assert guest.run().ok
    assert seen == [(0, 3), (0, 3)]


def test_a_key_of_more_sites_than_tp_vec_max_is_two_batches_on_x86(tmp_path) -> None:
    """v5.10 x86 text_poke_queue applies a full queue (TP_VEC_MAX, 256 sites) and
    begins another: one enable of a key with 257 sites is two text_poke_bp()
    batches, each three syncs of the other CPU."""
    sites = get_arch("x86_64").jump_label_batch + 1
    body = "".join(f"\tif (static_branch_unlikely(&many)) r += {i};\n" for i in range(sites))
    module = tmp_path / "many.c"
    module.write_text("#include <linux/module.h>\n#include <linux/jump_label.h>\n"
                      "DEFINE_STATIC_KEY_FALSE(many);\n"
                      f"noinline u32 many_sites(void)\n{{\n\tu32 r = 0;\n\n{body}\treturn r;\n}}\n"
                      "u32 many_run(u32 n)\n{\n\tstatic_branch_enable(&many);\n"
                      "\treturn many_sites();\n}\n")
    result = Guest(kbuild.build("x86_64", modules=[module]), cpus=2,
                   workload="many:many_run").run()
    assert result.checksum == sum(range(sites))
    assert result.per_cpu[1]["events"]["ipi"] == 2 * 3
