"""Where Unicorn's saved CPU context keeps the exception in flight.

QEMU remembers a contributory fault while it is being delivered and turns
the next one into a double fault, then a triple fault
(target/i386/excp_helper.c ``check_exception``); only a completed delivery
(``x86_cpu_do_interrupt``) forgets it. Unicorn's interrupt hook replaces
that delivery, so when the machine delivers a fault to a guest handler
itself, it must forget the fault the same way: by writing -1 over that
field of the saved context and restoring it.

The field's offset is not part of Unicorn's API, so it is measured once
per arch on a scratch engine: the one 32-bit word of the context that goes
from -1 to the fault's vector across the arch's ``contributory_fault``
snippet (docs/unicorn.md).
"""
from __future__ import annotations

import ctypes
import functools

import unicorn

from arches import Arch
from sim.asm import assemble
from sim.errors import ConfigError

SCRATCH = 0x1000


def _context_bytes(context: unicorn.UcContext) -> bytes:
    return ctypes.string_at(_context_address(context), context.size)


def _context_address(context: unicorn.UcContext) -> int:
    return ctypes.cast(context.context, ctypes.c_void_p).value


@functools.cache
def inflight_exception_offset(arch: Arch) -> int:
    """The offset of the in-flight exception word in ``arch``'s saved context."""
    source = arch.snippets.get("contributory_fault")
    if source is None:
        raise ConfigError(f"{arch.name}: no contributory_fault snippet: the machine cannot "
                          "deliver faults to guest handlers on this arch")
    code = assemble(arch, source, SCRATCH)
    uc = unicorn.Uc(*arch.uc_mode)
    uc.mem_map(SCRATCH, 0x1000)
    uc.mem_write(SCRATCH, code)
    before = _context_bytes(uc.context_save())
    after: list[tuple[int, bytes]] = []

    def on_intr(u: unicorn.Uc, intno: int, _data: object) -> None:
        after.append((intno, _context_bytes(u.context_save())))
        u.emu_stop()

    uc.hook_add(unicorn.UC_HOOK_INTR, on_intr)
    uc.emu_start(SCRATCH, SCRATCH + len(code), count=len(code))
    if not after:
        raise ConfigError(f"{arch.name}: the contributory_fault snippet raised no exception")
    vector, context = after[0]
    mark = vector.to_bytes(4, arch.endian)
    found = [i for i in range(0, len(before) - 3, 4)
             if before[i:i + 4] == b"\xff" * 4 and context[i:i + 4] == mark]
    if len(found) != 1:
        raise ConfigError(f"{arch.name}: Unicorn context: {len(found)} candidates for the "
                          "in-flight exception word")
    return found[0]


def forget_inflight_exception(uc: unicorn.Uc, arch: Arch) -> None:
    """Mark the exception being delivered on ``uc`` as delivered."""
    context = uc.context_save()
    ctypes.memmove(_context_address(context) + inflight_exception_offset(arch), b"\xff" * 4, 4)
    uc.context_restore(context)
