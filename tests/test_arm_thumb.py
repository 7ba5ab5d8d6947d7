"""ARM Thumb state survives every turn boundary: slice starts, trap returns, context switches.

Unicorn takes the instruction set from bit 0 of the address ``emu_start``
and a PC write are given, while the CPU keeps it in CPSR.T; the machine asks
the arch for the address to go on at (``Arch.resume_address``). An ARM
function ``blx``es a Thumb loop that runs across many turns, traps out of
Thumb (an ``svc`` that pauses the slice or ends the turn, on both turn ends,
and a ``udf`` resumed at an explicit address) and must come back with the
right result. The guest test does the same in a module on the ARM kernel,
with context switches (``schedule()`` called from Thumb) on 1-4 CPUs.
"""
from __future__ import annotations

from collections import Counter
from functools import reduce
from pathlib import Path

import keystone
import pytest

from arches import TrapKind, get_arch
from arches.arm import PSR_T_BIT
from kbuild import build
from sim.guest import Guest
from sim.machine import TURN_ENDS, UNHANDLED, Cpu, Machine, Trap

ARM = get_arch("arm")
BASE = 0x10000
THUMB = BASE + 0x100            # the Thumb routine; called with bit 0 set
ITERATIONS = 12_000
TICK = 64                       # the Thumb loop traps every TICK iterations
HALT, THUMB_TICK = 0, 1         # r0 at the svc

#: ARM: r4 = 0, call the Thumb loop (blx: ARM to Thumb), then ``svc`` with r0 = HALT.
ARM_MAIN = f"mov r4, #0; mov r6, #0; blx #{THUMB:#x}; mov r0, #{HALT}; svc #0; b ."
#: Thumb (16- and 32-bit encodings): r4 counts, r6 folds the count in; every
#: TICK iterations an ``svc`` and a ``udf``; back to ARM with ``bx lr``.
THUMB_LOOP = (f"movw r5, #{ITERATIONS}; "
              f"l: adds r4, r4, #1; eors r6, r4; ands r7, r4, #{TICK - 1}; bne s; "
              f"movs r0, #{THUMB_TICK}; svc #1; udf #7; "
              "s: subs r5, #1; bne l; bx lr")


def _thumb_machine(cpus: int, quantum: int, turn_end: str) -> Machine:
    main, _ = keystone.Ks(keystone.KS_ARCH_ARM, keystone.KS_MODE_ARM).asm(ARM_MAIN, BASE)
    loop, _ = keystone.Ks(keystone.KS_ARCH_ARM, keystone.KS_MODE_THUMB).asm(THUMB_LOOP, THUMB)
    code = bytes(main).ljust(THUMB - BASE, b"\0") + bytes(loop)
    m = Machine(ARM, cpus=cpus, quantum=quantum, turn_end=turn_end)
    m.load_code(code, BASE)
    return m


@pytest.mark.parametrize("turn_end", TURN_ENDS)
@pytest.mark.parametrize("quantum", [10_000, 37])
@pytest.mark.parametrize("cpus", [1, 2, 3, 4])
def test_thumb_runs_across_turns_and_traps(cpus: int, quantum: int, turn_end: str) -> None:
    m = _thumb_machine(cpus, quantum, turn_end)
    ticks: Counter[int] = Counter()
    undefined: Counter[int] = Counter()
    thumb_turn_ends: Counter[int] = Counter()

    def on_trap(cpu: Cpu, trap: Trap) -> int | None | object:
        thumb = bool(cpu.reg("cpsr") & PSR_T_BIT)
        if trap.kind is TrapKind.SYSCALL and cpu.reg("r0") == HALT:
            assert not thumb, "the halting svc is ARM code, after bx lr"
            cpu.halt()
            return None
        assert thumb, f"{trap.kind.value} from the Thumb loop arrived in ARM state"
        if trap.kind is TrapKind.SYSCALL:
            ticks[cpu.index] += 1
            if ticks[cpu.index] % 2:
                cpu.yield_turn()            # the turn ends at the svc
            else:
                cpu.pause_slice()           # a new slice of the same turn
            return None
        if trap.kind is TrapKind.UNDEFINED:
            undefined[cpu.index] += 1
            return trap.address + 2         # an explicit resume, past the 16-bit udf
        return UNHANDLED

    def on_turn(machine: Machine) -> None:
        for cpu in machine.cpus:
            if not cpu.halted and cpu.reg("cpsr") & PSR_T_BIT:
                thumb_turn_ends[cpu.index] += 1

    m.on_trap = on_trap
    m.run(max_instructions=10_000_000, on_turn=on_turn)
    folded = reduce(lambda acc, n: acc ^ n, range(1, ITERATIONS + 1))
    for cpu in m.cpus:
        assert (cpu.reg("r4"), cpu.reg("r6")) == (ITERATIONS, folded)
        assert ticks[cpu.index] == undefined[cpu.index] == ITERATIONS // TICK
        assert thumb_turn_ends[cpu.index] >= ITERATIONS // TICK // 2   # the yields at least
        assert not cpu.reg("cpsr") & PSR_T_BIT                         # back in ARM state


def test_resume_address_follows_cpsr_t() -> None:
    """ARM: bit 0 from CPSR.T; an arch with one instruction set keeps the PC."""
    regs = {"cpsr": 0x1D3 | PSR_T_BIT}
    assert ARM.resume_address(0x1000, regs.__getitem__) == 0x1001
    regs["cpsr"] = 0x1D3
    assert ARM.resume_address(0x1000, regs.__getitem__) == 0x1000
    assert get_arch("ppc32").resume_address(0x1000, regs.__getitem__) == 0x1000


#: A module: ARM workers ``blx`` a Thumb loop that reads the clock with its own
#: ``svc`` and calls ``schedule()`` (context switches out of Thumb frames).
MODULE = r"""
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <kisim/hypercall.h>

#define WORKERS 6

/* u32 thumb_mix(u32 n, u32 acc, u64 *clock): acc = acc * 33 ^ i for i < n;
 * every 256th iteration reads the clock and calls schedule(). */
asm(".text\n.balign 4\n.thumb\n.thumb_func\n.globl thumb_mix\n.type thumb_mix, %function\n"
    "thumb_mix:\n"
    "	push {r4-r7, lr}\n"
    "	mov r4, r0\n	mov r5, r1\n	movs r6, #0\n	mov r7, r2\n"
    "1:	cmp r6, r4\n	bhs 3f\n"
    "	lsls r3, r5, #5\n	adds r5, r5, r3\n	eors r5, r6\n	adds r6, #1\n"
    "	lsls r3, r6, #24\n	bne 1b\n"
    "	movs r0, #" __stringify(HC_CLOCK) "\n	mov r1, r7\n	svc #0\n"
    "	blx schedule\n	b 1b\n"
    "3:	mov r0, r5\n	pop {r4-r7, pc}\n"
    ".size thumb_mix, . - thumb_mix\n.arm\n");

static u32 results[WORKERS];
static u64 clocks[WORKERS];

static noinline u32 arm_calls_thumb(u32 n, u32 seed, u64 *clock)
{
	register u32 r0 asm("r0") = n;
	register u32 r1 asm("r1") = seed;
	register u64 *r2 asm("r2") = clock;

	asm volatile("blx thumb_mix" : "+r"(r0), "+r"(r1), "+r"(r2)
		     : : "r3", "r12", "lr", "cc", "memory");
	return r0;
}

static u32 iterations;

static int worker(void *arg)
{
	u32 i = (u32)(unsigned long)arg;

	results[i] = arm_calls_thumb(iterations, i + 1, &clocks[i]);
	return 0;
}

u32 thumbwork_run(u32 size)
{
	u32 i, sum = 0;

	iterations = size;
	for (i = 0; i < WORKERS; i++)
		kernel_thread(worker, (void *)(unsigned long)i, "thumbwork");
	wait_for_children();
	for (i = 0; i < WORKERS; i++)
		sum = sum * 31 + results[i] + (clocks[i] != 0);
	return sum;
}
"""
WORKERS, SIZE = 6, 6_000


def _expected(size: int) -> int:
    total = 0
    for seed in range(1, WORKERS + 1):
        acc = seed
        for i in range(size):
            acc = ((acc * 33) ^ i) & 0xFFFFFFFF
        total = (total * 31 + acc + 1) & 0xFFFFFFFF
    return total


@pytest.mark.slow
@pytest.mark.parametrize("quantum", [10_000, 97])
@pytest.mark.parametrize("cpus", [1, 2, 3, 4])
def test_module_thumb_across_turns_and_context_switches(tmp_path: Path, cpus: int,
                                                        quantum: int) -> None:
    """The issue's plain module, on the ARM kernel: an ARM function blx'es Thumb
    code that crosses many turns (it faulted at the first turn boundary inside
    the Thumb code), reads the clock from Thumb and is switched out of and
    back into by the guest scheduler."""
    path = tmp_path / "thumbwork.c"
    path.write_text(MODULE)
    guest = Guest(build("arm", modules=[path]), cpus=cpus, workload="thumbwork:thumbwork_run",
                  size=SIZE, quantum=quantum, expect=_expected(SIZE))
    guest.machine.clock.serve(guest.hypercalls)
    symbols = guest.machine.image.symbols
    assert symbols.pointer("thumb_mix") & 1 and not symbols.pointer("arm_calls_thumb") & 1
    assert not symbols["thumb_mix"] & 1                   # an address: the bit is kept apart
    thumb = Counter()

    def on_turn(machine: Machine) -> None:
        for cpu in machine.cpus:
            thumb[cpu.index] += bool(cpu.reg("cpsr") & PSR_T_BIT)

    result = guest.run(on_turn=on_turn)
    assert result.ok and result.checksum == _expected(SIZE)
    assert result.hypercalls["HC_CLOCK"] == WORKERS * (SIZE // 256)
    assert all(thumb[i] for i in range(cpus)), thumb       # Thumb at turn ends on every CPU
