"""Site kinds of the patch checker: what each site holds dormant and live, and
where a CPU that executes it may go next.

Each kind is one row of :data:`SITE_KINDS`: a name, the text owner its
patches run as, and a ``build(arch, at)`` function that lays out one block
of the checker's loop at the addresses ``at`` gives. A block is::

    [out-of-line code] [nop fill] [prefix] [site] [after]

- ``jump``: a jump-label site, nop <-> ``jmp`` to the next block; ``after``
  is a ``jmp`` to the same place, so the two forms differ only in where
  the CPU goes next.
- ``call``: nop <-> ``call f``; ``f`` jumps back to the site's successor,
  so the checker pops a pushed return address itself.
- ``ftrace``: an mcount site as dynamic ftrace patches it
  (kernel/trace/ftrace.c ``ftrace_make_call``/``ftrace_make_nop``): the
  arch's ``ftrace_nop_replace()`` <-> ``ftrace_call_replace(ip, stub)``,
  after the arch's ``-pg`` prefix (ARM ``push {lr}``, undone by the
  ``pop {lr}`` nop), calling an mcount stub that keeps the ``-pg``
  contract and returns by itself (``MCOUNT_SITE_PREFIX_ASM``,
  ``MCOUNT_STUB_ASM`` of the arch's ``dynamic_ftrace`` capability).
- ``kprobe``: ``arch_arm_kprobe``/``arch_disarm_kprobe`` (kernel/kprobes.c):
  the arch's breakpoint (``Arch.kprobe_breakpoint``) over the first bytes
  of a real instruction (the arch's ``checker_count`` snippet, accepted by
  its ``arch_prepare_kprobe``). A CPU that traps on the armed breakpoint
  is handled as a kprobe hit: it resumes in an instruction slot holding a
  copy of the instruction and a jump back to the successor (the boosted
  form of out-of-line execution; the handlers themselves are not the
  checker's business).
- ``optprobe``: ``arch_optimize_kprobe``/``arch_unoptimize_kprobe``
  (arch/x86/kernel/kprobes/opt.c, arch/arm/probes/kprobes/opt-arm.c): an
  armed, optimization-prepared kprobe (breakpoint + the rest of the
  replaced region) <-> the arch's branch into a detour buffer. The detour
  is a stand-in for the template (register save and ``optimized_callback``:
  one nop), the copied region, and a jump to the instruction after the
  region. A CPU trapping on the breakpoint of a prepared optprobe resumes
  at the copied region, after the template, as ``setup_detour_execution``
  sends it there. Disabling puts the breakpoint back through the protocol
  first, then the rest of the region with a plain store and one sync
  round, as ``arch_unoptimize_kprobe`` does (``disable_head``).

Arch hooks are the typed capabilities of ``Arch.ops`` (``dynamic_ftrace``,
``kprobes``, ``optprobes``), looked up through :func:`arch_hooks` only; an
arch without the capability a kind needs is refused with
:class:`CheckerError`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from arches import Arch
from arches.kprobe import KprobeRefused
from sim.asm import assemble, disassemble

BASE = 0x10000
STRADDLE = (16, 64)          # the boundaries sites cross, in turn, where pieces allow it
DEFAULT_SITES = ("jump", "call")
#: How the loop places its sites; each seed runs one (:class:`patchcheck.checker.PatchChecker`).
#: ``sparse``: blocks apart, sites straddling 16- and 64-byte boundaries where pieces are
#: smaller than a site; ``adjacent``: each site directly after the previous one;
#: ``lines``: each site in an instruction-cache line of its own (the reference core's).
#: On a Thumb-2 kernel (2-byte pieces, 4-byte sites) sparse puts every site at 2 mod 4,
#: where patch_text stores two halfwords, and lines a site without a prefix at 0 mod 4.
LAYOUTS = ("sparse", "adjacent", "lines")


class CheckerError(ValueError):
    """A check that cannot be run as asked (bad protocol, ablation, site kind, scheduler)."""


def arch_hooks(arch: Arch, capability: str) -> object | None:
    """The arch's ops if it opts into ``capability`` (``Arch.capabilities``), else None.

    The checker's one lookup of optional arch capabilities.
    """
    return arch.ops if capability in arch.capabilities else None


def arch_label(arch: Arch) -> str:
    """The arch as messages name it: ``arm``, or ``arm (THUMB2_KERNEL=y)`` for a variant."""
    return f"{arch.name} ({arch.variant}=y)" if arch.variant else arch.name


def _need(arch: Arch, capability: str, hook: str, what: str) -> object:
    hooks = arch_hooks(arch, capability)
    if hooks is None or not hasattr(hooks, hook):
        raise CheckerError(f"{arch_label(arch)}: no {what} (no {capability} capability "
                           f"with {hook})")
    return hooks


@dataclass(frozen=True)
class Form:
    """One state of a site as a CPU executes it."""

    name: str                  # what the CPU did, as counted in ``executed``
    insn: bytes                # the instruction a CPU fetches at the site
    lands: int                 # where the CPU must go next
    ret: int | None = None     # a call: the return address it must leave (with the
    #                            instruction-set bits of the loop's code: Thumb bit 0)
    callee_returns: bool = False   # the callee pops it itself (the checker must not)
    trap: bool = False         # a breakpoint: a hit resumes at ``lands``


@dataclass(frozen=True)
class Site:
    """One patchable site: the bytes written dormant (``off``) and live (``on``)."""

    kind: str
    addr: int
    off: bytes
    on: bytes
    dormant: Form
    live: Form
    owner: str
    # > 0: disabling puts back only this many bytes through the protocol,
    # then the rest with a plain store and one sync round.
    disable_head: int = 0
    #: Code the site leads to that enabling writes through the protocol, ahead of
    #: the site (an optprobe's detour): (address, bytes) each; the loop holds the
    #: breakpoint fill of fresh text there until then.
    outline: tuple[tuple[int, bytes], ...] = ()

    @property
    def length(self) -> int:
        return len(self.on)


@dataclass(frozen=True)
class At:
    """Where one block's pieces go: out-of-line code, entry (prefix), site, next block."""

    ool: int
    entry: int
    site: int
    next: int
    #: The next block follows the site at once: a jump site's ``jmp`` goes round
    #: through an out-of-line ``jmp`` back to its successor (``after`` would split them).
    chained: bool = False


@dataclass(frozen=True)
class Block:
    """What one site kind lays out (see the module docstring)."""

    body: bytes                # the site's whole instructions in the initial text
    patch: int                 # bytes of ``body`` a patch writes
    dormant: Form
    live: Form
    ool: bytes = b""
    prefix: bytes = b""
    after: bytes = b""
    ends_in_jump: bool = False  # ``after`` jumps to the next block
    disable_head: int = 0
    detour: tuple[int, int] = (0, 0)  # (offset, bytes) in ``ool``: code the protocol writes


@dataclass(frozen=True)
class SiteKind:
    """One row of the table: a site kind and how it lays out its block."""

    name: str
    owner: str
    summary: str
    build: Callable[[Arch, At], Block]


def _branch_len(arch: Arch) -> int:
    return len(arch.encode_jump(BASE, BASE + 64))


def _jump(arch: Arch, at: At) -> Block:
    size = _branch_len(arch)
    nop, succ = arch.nop(size), at.site + size
    if at.chained:
        return Block(body=nop, patch=size, dormant=Form("nop", nop, succ),
                     live=Form("jmp", arch.encode_jump(at.site, at.ool), at.ool),
                     ool=arch.encode_jump(at.ool, succ))
    return Block(body=nop, patch=size, dormant=Form("nop", nop, succ),
                 live=Form("jmp", arch.encode_jump(at.site, at.next), at.next),
                 after=arch.encode_jump(succ, at.next), ends_in_jump=True)


def _call(arch: Arch, at: At) -> Block:
    size = _branch_len(arch)
    nop, succ = arch.nop(size), at.site + size
    return Block(body=nop, patch=size, dormant=Form("nop", nop, succ),
                 live=Form("call", arch.encode_call(at.site, at.ool), at.ool,
                           ret=succ | arch.code_isa),
                 ool=arch.encode_jump(at.ool, succ))


def _asm(arch: Arch, text: str, addr: int) -> bytes:
    return assemble(arch, text, addr) if text.strip() else b""


def _ftrace(arch: Arch, at: At) -> Block:
    ops = _need(arch, "dynamic_ftrace", "ftrace_call_replace", "dynamic ftrace")
    nop = ops.ftrace_nop_replace()
    succ = at.site + len(nop)
    return Block(body=nop, patch=len(nop), dormant=Form("ftrace nop", nop, succ),
                 live=Form("ftrace call", ops.ftrace_call_replace(at.site, at.ool), at.ool,
                           ret=succ | arch.code_isa, callee_returns=True),
                 ool=_asm(arch, ops.MCOUNT_STUB_ASM, at.ool),
                 prefix=_asm(arch, ops.MCOUNT_SITE_PREFIX_ASM, at.entry))


def _breakpoint(arch: Arch, insn: bytes) -> bytes:
    """The kprobe breakpoint over ``insn``, as arch_arm_kprobe writes it."""
    return arch.kprobe_breakpoint(insn[:arch.insn_align])


def _prepare(arch: Arch, ops: object, addr: int, insn: bytes, slot: int) -> None:
    try:
        ops.arch_prepare_kprobe(addr, insn, slot)
    except KprobeRefused as err:
        raise CheckerError(f"{arch_label(arch)}: arch_prepare_kprobe refuses "
                           f"{insn.hex(' ')}: {err}") from None


def _kprobe(arch: Arch, at: At) -> Block:
    ops = _need(arch, "kprobes", "arch_prepare_kprobe", "kprobes")
    insn = assemble(arch, arch.snippet("checker_count"), at.site)
    _prepare(arch, ops, at.site, insn, at.ool)
    bp, succ = _breakpoint(arch, insn), at.site + len(insn)
    slot = insn + arch.encode_jump(at.ool + len(insn), succ)
    return Block(body=insn, patch=len(bp), dormant=Form("insn", insn, succ),
                 live=Form("kprobe hit", bp, at.ool, trap=True), ool=slot)


def _optprobe(arch: Arch, at: At) -> Block:
    ops = _need(arch, "optprobes", "arch_optimize_kprobe", "optprobes")
    _need(arch, "kprobes", "arch_prepare_kprobe", "kprobes")
    head = arch.nop(arch.insn_align)          # stands in for the detour's template
    region = arch.nop(_branch_len(arch))
    slot = region + arch.encode_jump(at.ool + len(region), at.site + len(region))
    # The detour after the kprobe's slot, a whole instruction-cache line away from
    # it and from the site on both sides (the kernel's detours are in their own
    # pages), so only a flush of its own lines makes it visible.
    gap = _fill(arch, arch.icache_line)
    buffer = at.ool + len(slot) + len(gap)
    jump = ops.arch_optimize_kprobe(at.site, buffer, _breakpoint(arch, head))
    if len(jump) != len(region):
        raise CheckerError(f"{arch_label(arch)}: the optprobe jump is {len(jump)} bytes, "
                           f"not the {len(region)} the checker lays out")
    _prepare(arch, ops, at.site, region, at.ool)
    try:
        _, length = ops.arch_prepare_optimized_kprobe(at.site, (at.site, region), buffer,
                                                      buffer, 0)
    except KprobeRefused as err:
        raise CheckerError(f"{arch_label(arch)}: cannot optimize a kprobe on "
                           f"{region.hex(' ')}: {err}") from None
    if length != len(region):
        raise CheckerError(f"{arch_label(arch)}: the optprobe region is {length} bytes, "
                           f"not the {len(region)} the checker lays out")
    bp, succ = _breakpoint(arch, region), at.site + len(region)
    armed = bp + region[len(bp):]
    copy = buffer + len(head)
    detour = head + region + arch.encode_jump(copy + len(region), succ)
    return Block(body=armed, patch=len(jump),
                 dormant=Form("kprobe hit", bp, at.ool, trap=True),
                 live=Form("jmp detour", jump, buffer), ool=slot + gap + detour + gap,
                 detour=(len(slot + gap), len(detour)),
                 disable_head=len(bp) if len(jump) > len(bp) else 0)


SITE_KINDS: dict[str, SiteKind] = {k.name: k for k in (
    SiteKind("jump", "jump_label", "jump-label site: nop <-> jmp", _jump),
    SiteKind("call", "jump_label", "call site: nop <-> call", _call),
    SiteKind("ftrace", "ftrace", "mcount site: ftrace_nop_replace <-> ftrace_call_replace, "
                                 "after the arch's -pg prefix", _ftrace),
    SiteKind("kprobe", "kprobe", "kprobe: the arch's breakpoint over a real instruction, "
                                 "hits run it out of line", _kprobe),
    SiteKind("optprobe", "kprobe", "optprobe: armed kprobe <-> branch into a detour buffer "
                                   "that returns after the region", _optprobe),
)}


def parse_sites(text: str | Sequence[str]) -> tuple[str, ...]:
    """``"jump,call"`` (or a sequence of names) as a tuple in table order."""
    names = [n.strip() for n in text.split(",")] if isinstance(text, str) else list(text)
    unknown = [n for n in names if n not in SITE_KINDS]
    if unknown or not names:
        raise CheckerError(f"--site {','.join(names)}: site kinds are "
                           f"{', '.join(SITE_KINDS)} (comma-separated)")
    if len(set(names)) != len(names):
        raise CheckerError(f"--site {','.join(names)}: a site kind is named twice")
    return tuple(k for k in SITE_KINDS if k in names)


@dataclass
class Layout:
    """The checker's loop: code, its sites, and every valid instruction start."""

    code: bytes                # with every site's out-of-line code written
    sites: tuple[Site, ...]
    sizes: dict[int, frozenset[int]] = field(default_factory=dict)

    def unwritten(self, fill: bytes) -> bytes:
        """``code`` before enabling writes the sites' out-of-line code: ``fill`` (the
        arch's breakpoint, as fresh instruction slots hold it) repeated there."""
        code = bytearray(self.code)
        for site in self.sites:
            for addr, insn in site.outline:
                code[addr - BASE:addr - BASE + len(insn)] = fill * (len(insn) // len(fill))
        return bytes(code)


def _fill(arch: Arch, size: int) -> bytes:
    """``size`` bytes of the arch's nops, largest first."""
    out = b""
    while len(out) < size:
        out += arch.nop(max(n for n in arch.nops if n <= size - len(out)))
    return out


def _place(arch: Arch, pos: int, patch: int, boundary: int) -> int:
    """The first site address from ``pos`` whose patch straddles ``boundary``, if pieces
    are smaller than the patch; else ``pos``."""
    straddle = patch // 2 // arch.insn_align * arch.insn_align
    if not straddle:
        return pos
    return -(-(pos + straddle) // boundary) * boundary - straddle


def lay_out(arch: Arch, kinds: Sequence[str], breakpoint: bytes,
            layout: str = "sparse") -> Layout:
    """The loop in one of :data:`LAYOUTS`; ``breakpoint`` is the temporary breakpoint
    every site may also hold."""
    if layout not in LAYOUTS:
        raise CheckerError(f"unknown layout {layout!r} (known: {', '.join(LAYOUTS)})")
    if layout == "sparse":
        return _sparse(arch, kinds, breakpoint)
    return _packed(arch, kinds, breakpoint,
                   arch.icache_line if layout == "lines" else arch.insn_align)


def _sparse(arch: Arch, kinds: Sequence[str], breakpoint: bytes) -> Layout:
    """One block per kind from BASE, then a jump back to BASE.

    A block with out-of-line code is entered through a jump (the previous
    block's own, or a bridge), so no CPU falls into that code.
    """
    rows = [SITE_KINDS[k] for k in kinds]
    blank = At(BASE, BASE, BASE, BASE)
    shapes = [row.build(arch, blank) for row in rows]
    bridge = len(arch.encode_jump(BASE, BASE))
    spots: list[tuple[int | None, At]] = []
    pos = BASE
    for i, shape in enumerate(shapes):
        bridged = None
        if shape.ool and (i == 0 or not shapes[i - 1].ends_in_jump):
            bridged, pos = pos, pos + bridge
        ool = pos
        pos += len(shape.ool)
        site = _place(arch, pos + len(shape.prefix), shape.patch,
                      STRADDLE[i % len(STRADDLE)])
        spots.append((bridged, At(ool, site - len(shape.prefix), site, 0)))
        pos = site + len(shape.body) + len(shape.after)
    end = pos
    out = _Code(breakpoint)
    chunks: list[bytes] = []
    for i, (row, (bridged, at)) in enumerate(zip(rows, spots)):
        at = At(at.ool, at.entry, at.site, spots[i + 1][1].entry if i + 1 < len(spots) else end)
        block = row.build(arch, at)
        if bridged is not None:
            chunks.append(arch.encode_jump(bridged, at.entry))
        chunks += [block.ool, _fill(arch, at.entry - at.ool - len(block.ool)), block.prefix]
        out.add(arch, *chunks)
        out.site(row, at, block)
        chunks = [block.after]
    out.add(arch, *chunks, arch.encode_jump(end, BASE))
    return out.layout()


def _packed(arch: Arch, kinds: Sequence[str], breakpoint: bytes, align: int) -> Layout:
    """Every block's entry at the next multiple of ``align`` after the previous site
    (``insn_align``: the sites back to back, the first straddling as in the sparse
    loop; a cache line: each site in a line of its own), then the jump back to BASE,
    then all out-of-line code, which nothing falls into."""
    rows = [SITE_KINDS[k] for k in kinds]
    blank = At(BASE, BASE, BASE, BASE, chained=True)
    shapes = [row.build(arch, blank) for row in rows]
    entries, pos = [], BASE
    for i, shape in enumerate(shapes):
        entry = -(-pos // align) * align
        if i == 0 and align == arch.insn_align:
            entry = _place(arch, entry + len(shape.prefix), shape.patch,
                           STRADDLE[0]) - len(shape.prefix)
        entries.append(entry)
        pos = entry + len(shape.prefix) + len(shape.body)
    end = pos
    ools, ool = [], end + len(arch.encode_jump(end, BASE))
    for shape in shapes:
        ools.append(ool)
        ool += len(shape.ool)
    out = _Code(breakpoint)
    blocks = []
    for i, (row, shape) in enumerate(zip(rows, shapes)):
        site = entries[i] + len(shape.prefix)
        nxt = entries[i + 1] if i + 1 < len(entries) else end
        block = row.build(arch, At(ools[i], entries[i], site, nxt, chained=True))
        out.add(arch, _fill(arch, entries[i] - (BASE + len(out.code))), block.prefix)
        out.site(row, At(ools[i], entries[i], site, nxt), block)
        blocks.append(block)
    out.add(arch, arch.encode_jump(end, BASE), *(b.ool for b in blocks))
    return out.layout()


class _Code:
    """The loop's bytes as they are laid down, with every instruction start."""

    def __init__(self, breakpoint: bytes) -> None:
        self.breakpoint = breakpoint
        self.code = b""
        self.sites: list[Site] = []
        self.sizes: dict[int, frozenset[int]] = {}

    def add(self, arch: Arch, *chunks: bytes) -> None:
        for chunk in chunks:
            self.sizes.update(_starts(arch, chunk, BASE + len(self.code)))
            self.code += chunk

    def site(self, row: SiteKind, at: At, block: Block) -> None:
        assert BASE + len(self.code) == at.site and len(block.live.insn) == block.patch
        offset, size = block.detour
        outline = ((at.ool + offset, block.ool[offset:offset + size]),) if size else ()
        self.sites.append(Site(row.name, at.site, block.body[:block.patch], block.live.insn,
                               block.dormant, block.live, row.owner, block.disable_head,
                               outline))
        self.sizes[at.site] = frozenset({len(block.dormant.insn), len(block.live.insn),
                                         len(self.breakpoint)})
        self.code += block.body

    def layout(self) -> Layout:
        return Layout(self.code, tuple(self.sites), self.sizes)




def _starts(arch: Arch, chunk: bytes, addr: int) -> dict[int, frozenset[int]]:
    insns = disassemble(arch, chunk, addr)
    assert sum(len(i.bytes) for i in insns) == len(chunk), f"{arch.name}: {chunk.hex()}"
    return {i.address: frozenset({len(i.bytes)}) for i in insns}
