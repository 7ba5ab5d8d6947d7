"""Dynamic ftrace: the mcount sites of a guest, their filters, and the function pointer.

Follows kernel/trace/ftrace.c of Linux 2.6.28 (see ``docs/ftrace.md``):

- **Records.** One :class:`DynRecord` per entry of ``__mcount_loc`` (the
  table the build makes from the ``-pg`` call relocations, as
  ``scripts/recordmcount`` does).
- **Boot conversion** (ftrace_init / ftrace_update_code) is part of the
  guest's boot (:mod:`sim.ftrace_init`, done by :class:`sim.guest.Guest`
  before any CPU runs): every site's call to the compiler's mcount becomes
  the arch's nop with a compare-then-write. :func:`ftrace_for` takes the
  converted sites over (each reserved for owner ``ftrace``);
  :meth:`Ftrace.ftrace_init` runs the same conversion on a bare machine.
- **Enabling and disabling** (ftrace_replace_code under kstop_machine in
  2.6.28): every site whose state must change goes into one
  :class:`~patcher.text.Batch`, i.e. one run of the arch's cross-CPU
  protocol, as ``ftrace_make_call`` (nop -> ``call ftrace_caller``) or
  ``ftrace_make_nop`` (call -> nop), each compare-then-write.
- **ftrace_bug.** A site that does not hold what the change expects is
  marked failed and left alone, the other sites are changed, and ftrace is
  killed (``ftrace_kill``): the pointer goes back to ``ftrace_stub``, the
  sysctl off, and every later call is ENODEV. So is a boot whose conversion
  met such a site.
- **Filters.** ``set_ftrace_filter`` / ``set_ftrace_notrace`` with the
  2.6.28 glob rules (:func:`ftrace_match`) or full glob(7)
  (``glob="full"``, today's kernels); ``>`` replaces, ``>>`` appends, an
  empty write clears; notrace wins. ``GLOB:mod:MODULE`` (v5.10's ``mod``
  command, kernel/trace/ftrace.c ``ftrace_mod_callback``) selects the
  functions GLOB matches among those module MODULE defines, ``:mod:MODULE``
  all of them.
- **The function pointer.** ``ftrace_trace_function`` in guest memory is
  what every mcount stub calls; registering replaces it, and the
  ``ftrace_enabled`` sysctl swaps in ``ftrace_stub`` while off, so tracing
  needs both, in either order (the mcount RFC).

With ``CONFIG_DYNAMIC_FTRACE=n`` there are no records to patch: the calls
stay live and only the function pointer decides.

**Kprobes on ftrace** (v5.10 ``CONFIG_KPROBES_ON_FTRACE``,
kernel/kprobes.c ``arm_kprobe_ftrace``): a kprobe on a site asks for it
with :meth:`Ftrace.ftrace_set_kprobe`; the site then calls
``ftrace_regs_caller``, which saves a ``struct pt_regs`` and calls the
guest's ``kprobe_ftrace_handler``, or ``ftrace_regs_list_caller`` (the
same, then the function tracer, as ``ftrace_ops_list_func`` calls every
ops of the site) when the tracer wants the function too.

Per-arch encodings come from the arch's ``dynamic_ftrace`` capability
(:class:`arches.base.ArchOps`: ``ftrace_nop_replace``,
``ftrace_call_replace``, and the constants ``MCOUNT_ADDR``,
``FTRACE_ADDR``, ``MCOUNT_INSN_SIZE``, declared in ``arches/<arch>/ftrace.py``).
"""
from __future__ import annotations

import bisect
import fnmatch
import functools
import weakref
from dataclasses import dataclass
from typing import Literal, Sequence

from arches import Arch, ArchOps
from patcher.errors import PatchError
from patcher.tables import Tables
from patcher.text import TextPatcher, text_mutex
from sim.elf import Image
from sim.errors import ConfigError
from sim.ftrace_init import CAPABILITY, InitStats, ftrace_init
from sim.guest import Guest
from sim.machine import Machine

OWNER = "ftrace"
#: What a site with an ftrace-based kprobe calls (arm_kprobe_ftrace): the kprobe's
#: regs caller alone, or, with the tracer on it too, the one that lists both.
KPROBE_CALLERS = {False: "ftrace_regs_caller", True: "ftrace_regs_list_caller"}
Glob = Literal["2.6.28", "full"]


def arch_ftrace(arch: Arch) -> ArchOps:
    """The arch's ops, checked to have the ``dynamic_ftrace`` capability
    (``ftrace_nop_replace``, ``ftrace_call_replace`` and its constants)."""
    if CAPABILITY not in arch.capabilities:
        raise PatchError("ENODEV", f"{arch.name}: no dynamic ftrace (HAVE_DYNAMIC_FTRACE)")
    return arch.ops


# -- filters -------------------------------------------------------------------

def ftrace_match(pattern: str, name: str, glob: Glob = "2.6.28") -> bool:
    """Whether ``name`` matches a filter word.

    2.6.28 (ftrace_match in kernel/trace/ftrace.c): a leading ``*`` makes
    an end match (``*x``), a further ``*`` turns that into a substring match
    (``*x*``); a ``*`` after the first character makes a prefix match on
    what precedes it and ends the pattern, so ``a*b`` is ``a*``; no ``*``
    is an exact match. ``glob="full"`` is glob(7) as today's kernels accept.
    """
    if glob == "full":
        return fnmatch.fnmatchcase(name, pattern)
    if pattern.startswith("*"):
        rest = pattern[1:]
        star = rest.find("*")
        if star < 0:
            return name.endswith(rest)
        return rest[:star] in name
    star = pattern.find("*")
    if star < 0:
        return name == pattern
    return name.startswith(pattern[:star])


@dataclass
class DynRecord:
    """struct dyn_ftrace: one mcount call site."""

    ip: int
    function: str
    target: int | None = None  # what the site calls now (None: the nop)
    failed: bool = False       # FTRACE_FL_FAILED: ftrace_bug met it, ftrace leaves it be

    @property
    def enabled(self) -> bool:
        return self.target is not None


class Ftrace:
    """The ftrace core of one loaded guest image on one machine."""

    def __init__(self, machine: Machine, image: Image, sites: Sequence[tuple[int, str]], *,
                 dynamic: bool, patcher: TextPatcher | None = None) -> None:
        self.machine = machine
        self.arch = machine.arch
        self.image = image
        self.ops = arch_ftrace(self.arch)
        self.dynamic = dynamic
        self.records = [DynRecord(ip, fn) for ip, fn in sorted(sites)] if dynamic else []
        self.sites = [ip for ip, _ in sorted(sites)]
        self.patcher = patcher or TextPatcher(machine, cpu=0 if machine.cpus else None)
        self.mcount_addr = self._symbol(self.ops.MCOUNT_ADDR)
        self.ftrace_addr = self._symbol(self.ops.FTRACE_ADDR) if dynamic else None
        self.stub = self._symbol("ftrace_stub", pointer=True)
        self.func_ptr = self._symbol("ftrace_trace_function")
        self.registered: int | None = None
        self.ftrace_enabled = True          # the sysctl, on at boot as in 2.6.28
        self.filter: list[str] = []
        self.notrace: list[str] = []
        self.glob: Glob = "2.6.28"
        self.kprobed: set[int] = set()      # sites with an ftrace-based kprobe
        self.converted = False
        self.init_stats: InitStats | None = None
        #: ftrace_bug's report once it has killed ftrace (ftrace_disabled)
        self.disabled: str | None = None

    def _symbol(self, name: str, *, pointer: bool = False) -> int:
        """``name``'s address, or (``pointer``) the function pointer the guest calls."""
        try:
            return self.image.symbols.pointer(name) if pointer else self.image.symbols[name]
        except KeyError:
            raise PatchError("ENOENT", f"the guest has no {name}: "
                                       "not built with CONFIG_FUNCTION_TRACER") from None

    # -- boot-time conversion --------------------------------------------------
    def ftrace_nop(self) -> bytes:
        """An idle mcount site's nop: ftrace_nop_replace (arch/*/kernel/[trace/]ftrace.c)."""
        return self.ops.ftrace_nop_replace()

    def _reserve_all(self) -> None:
        with text_mutex:
            for rec in self.records:
                self.patcher.reserve(rec.ip, self.ops.MCOUNT_INSN_SIZE, OWNER)

    def ftrace_init(self) -> InitStats:
        """Convert every recorded site to the arch's nop (ftrace_init), before any CPU runs.

        A booted :class:`~sim.guest.Guest` has done this already (see
        :func:`ftrace_for`); this runs the same conversion
        (:func:`sim.ftrace_init.ftrace_init`) on a bare machine. A site that
        is not the expected call kills ftrace (:attr:`disabled`), as the
        kernel's ftrace_bug does.
        """
        if not self.dynamic:
            raise PatchError("EPERM", "CONFIG_DYNAMIC_FTRACE=n: the mcount calls stay live")
        if self.converted:
            raise PatchError("EBUSY", "ftrace_init already converted the mcount sites")
        try:
            stats = ftrace_init(self.machine, [r.ip for r in self.records], self.mcount_addr)
        except ConfigError as err:
            raise PatchError("EPERM", str(err)) from None
        self.booted(stats)
        return stats

    def booted(self, stats: InitStats) -> None:
        """Take over the sites boot converted (``stats``): each reserved for ftrace, a
        nop; if the conversion met an ftrace_bug, ftrace is dead from the start."""
        self._reserve_all()
        self.converted = True
        self.init_stats = stats
        if stats.bug is not None:
            self._kill(stats.bug)

    def _kill(self, bug: str) -> None:
        """ftrace_kill: ftrace_disabled, the sysctl off, the pointer back to the stub."""
        self.disabled = bug
        self.ftrace_enabled = False
        self.machine.write_word(self.func_ptr, self.stub)

    def _alive(self) -> None:
        """ENODEV once ftrace_bug has killed ftrace (2.6.28 checks ftrace_disabled first)."""
        if self.disabled is not None:
            raise PatchError("ENODEV", f"ftrace is disabled since {self.disabled}")

    # -- filters ---------------------------------------------------------------
    @functools.cached_property
    def _modules(self) -> dict[int, str | None]:
        """Each site's module (None: the kernel's own function), from the image's symbols."""
        symbols = self.image.symbols
        funcs = sorted((s.addr, s.addr + s.size, s) for s in symbols.entries if s.kind == "func")
        out: dict[int, str | None] = {}
        for rec in self.records:
            i = bisect.bisect_right(funcs, (rec.ip, float("inf"))) - 1
            inside = i >= 0 and funcs[i][0] <= rec.ip < funcs[i][1]
            out[rec.ip] = symbols.module_of(funcs[i][2]) if inside else None
        return out

    def _matches(self, word: str, rec: DynRecord) -> bool:
        """A filter word against one site: a glob on its function, or ``GLOB:mod:MODULE``."""
        glob, mod, module = word.partition(":mod:")
        if mod:
            return self._modules[rec.ip] == module and (
                not glob or ftrace_match(glob, rec.function, self.glob))
        return ftrace_match(word, rec.function, self.glob)

    def write_filter(self, text: str, *, append: bool = False, notrace: bool = False) -> None:
        """Write ``text`` to set_ftrace_filter (or set_ftrace_notrace).

        ``append=False`` is ``>`` (clear, then add), ``True`` is ``>>``.
        Words are separated by white space; an empty write with ``>`` clears.
        As in v5.10 the file is emptied when ``>`` opens it (O_TRUNC), each
        word then goes in in turn, and what went in is committed when the
        file closes: a word that matches no function fails the write
        (EINVAL, ``ftrace_process_regex``) and leaves the words before it,
        or with none of them an empty filter, which traces every function.
        """
        if not self.dynamic:
            raise PatchError("EPERM", "set_ftrace_filter needs CONFIG_DYNAMIC_FTRACE=y")
        self._alive()
        if not isinstance(text, str):
            raise PatchError("EINVAL", f"set_ftrace_filter takes text, not "
                                       f"{type(text).__name__}")
        target = self.notrace if notrace else self.filter
        if not append:
            target.clear()
        unmatched = None
        for word in text.split():
            if not any(self._matches(word, rec) for rec in self.records):
                unmatched = word
                break
            target.append(word)
        self.update()                       # ftrace_regex_release: the hash as written
        if unmatched is not None:
            raise PatchError("EINVAL", f"{unmatched!r} matches no traceable function")

    def write_graph_function(self, words: Sequence[str]) -> list[str]:
        """Write set_graph_function (2.6.30): the functions whose calls, and all
        they call, the function-graph tracer records; none: every call. Each word
        is a filter word; one matching no function is refused (EINVAL), more
        functions than ``ftrace_graph_funcs`` holds too (EBUSY). Returns the
        functions chosen."""
        if not self.dynamic:
            raise PatchError("EPERM", "set_graph_function needs CONFIG_DYNAMIC_FTRACE=y")
        self._alive()
        chosen: dict[int, str] = {}
        for word in words:
            found = {rec.ip: rec.function for rec in self.records if self._matches(word, rec)}
            if not found:
                raise PatchError("EINVAL", f"{word!r} matches no traceable function")
            chosen.update(found)
        table = next((s for s in self.image.symbols.entries
                      if s.name == "ftrace_graph_funcs"), None)
        if table is None:
            raise PatchError("ENODEV", "set_graph_function needs "
                                       "CONFIG_FUNCTION_GRAPH_TRACER=y")
        word = self.arch.bits // 8
        if len(chosen) > table.size // word:
            raise PatchError("EBUSY", f"set_graph_function holds {table.size // word} "
                                      f"functions, not {len(chosen)}")
        for i, ip in enumerate(sorted(chosen)):
            self.machine.write_word(table.addr + i * word, ip)
        self.machine.write(self._symbol("ftrace_graph_count"),
                           self.arch.from_int(len(chosen), 4))
        return sorted(set(chosen.values()))

    def wanted(self, rec: DynRecord) -> bool:
        """Whether the filters select ``rec``'s site: in the filter (or no filter), not in
        notrace."""
        if any(self._matches(w, rec) for w in self.notrace):
            return False
        return not self.filter or any(self._matches(w, rec) for w in self.filter)

    def traced_functions(self) -> list[str]:
        """What the filters leave the tracer, one line per record in address order, as
        reading available_filter_functions lists them (v5.10 t_show, ``%ps``): all
        of them with no filter and no notrace word."""
        return [rec.function for rec in self.records if self.wanted(rec)]

    def filtered_functions(self) -> list[str]:
        return sorted(set(self.traced_functions()))

    # -- the function pointer --------------------------------------------------
    def register_ftrace_function(self, func: int | str) -> None:
        """Make ``func`` the one traced function, replacing any other."""
        self._alive()
        self.registered = self._symbol(func, pointer=True) if isinstance(func, str) else func
        self.update()

    def unregister_ftrace_function(self) -> None:
        """clear_ftrace_function: back to ftrace_stub (after an ftrace_bug, the pointer
        alone: ftrace_shutdown patches nothing once ftrace is disabled)."""
        self.registered = None
        self.update()

    def set_ftrace_enabled(self, on: bool) -> None:
        """The ftrace_enabled sysctl (the RFC's mcount_enabled). Off, every site is a
        nop, an ftrace-based kprobe's too (v5.10 ftrace_shutdown_sysctl:
        FTRACE_DISABLE_CALLS); on, each calls what it wants again."""
        self._alive()
        self.ftrace_enabled = on
        self.update()

    def ftrace_set_kprobe(self, ip: int, on: bool) -> None:
        """Give the site at ``ip`` to an ftrace-based kprobe, or take it back
        (kernel/kprobes.c arm_kprobe_ftrace / disarm_kprobe_ftrace: the
        kprobe_ftrace_ops filter gains or loses ``ip``). Once ftrace_bug has
        killed ftrace, arming is ENODEV and disarming changes no text."""
        if not self.dynamic or ip not in self.sites:
            raise PatchError("EINVAL", f"{ip:#x} is not a dynamic ftrace site")
        if on:
            self._alive()
        (self.kprobed.add if on else self.kprobed.discard)(ip)
        self.update()

    def _target(self, rec: DynRecord) -> int | None:
        """What the site must call: ftrace_caller for the tracer,
        ftrace_regs_caller for a kprobe, ftrace_regs_list_caller for both."""
        traced = self.active and self.wanted(rec)
        if rec.ip not in self.kprobed or not self.ftrace_enabled:
            return self.ftrace_addr if traced else None
        return self._symbol(KPROBE_CALLERS[traced])

    @property
    def active(self) -> bool:
        return self.registered is not None and self.ftrace_enabled

    def update(self) -> int:
        """Point ftrace_trace_function and patch the sites to match; sites changed.

        All changes are one batch: one run of the arch's cross-CPU protocol.
        Calls go off before the function pointer does, and on after it.
        Nothing once ftrace_bug has killed ftrace (ftrace_startup and
        ftrace_shutdown return at once).
        """
        if self.disabled is not None:
            return 0
        func = self.registered if self.active else self.stub
        changed = 0
        if self.active:
            self.machine.write_word(self.func_ptr, func)
            changed = self._replace_code()
        else:
            changed = self._replace_code()
            self.machine.write_word(self.func_ptr, func)
        return changed

    def _replace_code(self) -> int:
        if not self.dynamic:
            return 0
        if not self.converted:
            raise PatchError("EPERM", "dynamic ftrace sites are enabled only after ftrace_init")
        nop = self.ftrace_nop()
        changes = [(rec, want) for rec in self.records
                   if not rec.failed and (want := self._target(rec)) != rec.target]
        if not changes:
            return 0

        def insn(rec: DynRecord, target: int | None) -> bytes:
            return nop if target is None else self.ops.ftrace_call_replace(rec.ip, target)

        # ftrace_make_nop, ftrace_make_call, or (regs <-> not) ftrace_modify_call;
        # a site that is not what its record says is ftrace_bug's (2.6.28
        # ftrace_replace_code: flagged failed, left alone, the others still done)
        bugs = []
        with self.patcher.batch() as b:
            for rec, want in changes:
                old = insn(rec, rec.target)
                found = self.machine.read(rec.ip, len(old))
                if found != old:
                    rec.failed = True
                    bugs.append(f"ftrace failed to modify {rec.function} ({rec.ip:#x}): "
                                f"expected {old.hex(':')} actual: {found.hex(':')}")
                    continue
                b.queue(rec.ip, old, insn(rec, want), OWNER)
        for rec, want in changes:
            if not rec.failed:
                rec.target = want
        if bugs:
            self._kill(bugs[0])         # FTRACE_WARN_ON_ONCE: the first one kills
        return len(changes) - len(bugs)

    def enabled_sites(self) -> list[int]:
        return [r.ip for r in self.records if r.enabled]


#: The one Ftrace of each booted guest (the function tracer and kprobes share it).
_FTRACE: "weakref.WeakKeyDictionary[Guest, Ftrace]" = weakref.WeakKeyDictionary()


def ftrace_for(guest: Guest, tables: Tables) -> Ftrace:
    """The :class:`Ftrace` of a booted guest, its records from ``__mcount_loc``;
    one per guest, so that the function tracer and ftrace-based kprobes
    share the records.

    With CONFIG_DYNAMIC_FTRACE the guest's boot converted every site to a
    nop (:attr:`sim.guest.Guest.ftrace_boot`); the records start there.
    """
    if guest in _FTRACE:
        return _FTRACE[guest]
    stats = guest.ftrace_boot
    ft = Ftrace(guest.machine, guest.image, [(s.address, s.function) for s in tables.mcount],
                dynamic=stats is not None)
    if stats is not None:
        if guest.mcount_sites != ft.sites:
            raise PatchError("EINVAL", "the booted __mcount_loc and the image's tables differ")
        ft.booted(stats)
    _FTRACE[guest] = ft
    return ft


__all__ = ["DynRecord", "Ftrace", "ftrace_for", "InitStats", "KPROBE_CALLERS", "OWNER",
           "arch_ftrace", "ftrace_match"]
