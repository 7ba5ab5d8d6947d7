"""Markers: the probe registry over an image's ``__markers`` table, as in 2.6.27.

Registry semantics follow kernel/marker.c of Linux 2.6.27, the last release
before tracepoints replaced markers in-tree (markers were removed in
2.6.32):

- ``marker_probe_register(name, format, probe, private)`` on a name no site
  has creates a pending entry and returns 0 (``add_marker``); its probes
  connect when a site of that name appears.
- A registration whose format differs from the entry's is ``EPERM``; a
  format of None (NULL) checks nothing, and an entry without one takes
  the site's when it connects (``marker_set_format``). A site whose format
  differs from the registered one is left disabled, with the kernel's
  "Format mismatch for probe" notice (``set_marker``), and the
  registration still returns 0.
- The same probe and private data twice is ``EBUSY``. A refusal for room
  (``ENOMEM``) leaves the entry as it was.
- Unregistering a probe that is not there: ``ENOENT`` only for a name with
  no probe at all. With one probe registered ``marker_entry_remove_probe``
  WARNs and removes that one anyway; with several it rebuilds the same
  array, and nothing changes.

``marker_arm`` / ``marker_disarm`` reference count the enable (the 2.6.24
interface the issue's rows describe; 2.6.27 enables on registration
instead): both are ``ENOENT`` for a name with no probe registered (no
entry), disarming below zero is ``EPERM``, and an arm counts even where no
site of the name exists or its format differs, which then stays disabled.
The last probe's unregistration drops the entry with its arms and
disables the sites. The enable flips only the mechanism the ``.config``
chose: an immediate value, a static key, or the ``state`` byte alone.

A probe is a guest function (an address in the image, a 2.6.27
``marker_probe_func`` taking its private data as a word) or a host
callable, reached through the guest's ``marker_probe_hc`` (one closure
serves every host probe of a site) and given the arguments decoded by the
format. As in 2.6.27 every site calls ``marker_probe_cb``: with one
closure it sits in ``single`` (``ptype`` 0); with several they are a
NULL-terminated ``multi`` array (``ptype`` 1), replaced copy-and-swap in
the :class:`~patcher.tracepoint.ArrayPool` and freed after a quiescent
state.
"""
from __future__ import annotations

from collections import Counter
from typing import Callable, Union

from patcher.enable import set_enabled
from patcher.errors import PatchError
from patcher.imv import ImmediateValues
from patcher.jump_label import StaticKeys
from patcher.tables import Marker, Tables
from patcher.tracepoint import ArrayPool
from sim.dwarf import struct
from sim.event import STRING, Event, EventClass, make_event, s, u
from sim.guest import Guest
from sim.hypercall import HYPERCALL_H, parse_defines
from sim.machine import Cpu

#: The arguments the guest's marker_args() reads at most (kernel/marker.c).
MARKER_MAX_ARGS = parse_defines(HYPERCALL_H.parents[2] / "marker.c", "MARKER_")["MARKER_MAX_ARGS"]


HostProbe = Callable[[Event, object], None]
Probe = Union[int, HostProbe]   # a guest function address, or a host callable


def _conversions(fmt: str, word_bits: int) -> list[tuple[str, str, int]]:
    """(field name, conversion, bits) of each argument ``fmt`` declares, read as the
    guest's marker_args() (kernel/marker.c) reads them: flags, a width, l/h/z
    lengths, then one of ``diuxXocsp``; it stops at the first conversion it does
    not know (``%.2d``, ``%f``) and after MARKER_MAX_ARGS, and so does this.

    A field is named by the word before its conversion (``"ptr %p"``), as
    kmemtrace's and LTTng's marker formats do; otherwise ``arg<i>``.
    """
    out: list[tuple[str, str, int]] = []
    i = 0
    while i < len(fmt) and len(out) < MARKER_MAX_ARGS:
        if fmt[i] != "%":
            i += 1
            continue
        start = i
        i += 1
        if fmt[i:i + 1] == "%":
            i += 1
            continue
        while fmt[i:i + 1] and fmt[i] in "-+ #0":
            i += 1
        while fmt[i:i + 1] and fmt[i] in "0123456789":
            i += 1
        length = ""
        while fmt[i:i + 1] and fmt[i] in "lhz":
            length += fmt[i]
            i += 1
        conv = fmt[i:i + 1]
        if not conv or conv not in "diuxXocsp":
            break
        i += 1
        bits = (word_bits if conv in "sp" or "z" in length else 64 if length.count("l") >= 2
                else word_bits if "l" in length else 8 if "hh" in length
                else 16 if "h" in length else 32)
        before = fmt[:start].split()
        name = before[-1] if before and "%" not in before[-1] else f"arg{len(out)}"
        out.append((name, conv, bits))
    return out


def event_class(name: str, fmt: str, word_bits: int) -> EventClass:
    """The :class:`EventClass` of a marker, its fields typed from ``fmt``."""
    fields = []
    for field_name, conv, bits in _conversions(fmt, word_bits):
        if conv == "s":
            ftype = STRING
        elif conv in "di":
            ftype = s(bits)
        else:
            ftype = u(bits, {"x": 16, "X": 16, "p": 16, "o": 8}.get(conv, 10))
        fields.append((field_name, ftype))
    return EventClass(name, tuple(fields))


def decode(fmt: str, raw: list[int], word_bits: int, read_string: Callable[[int], str]
           ) -> tuple[int | str, ...]:
    """Decode the u64 values ``marker_probe_hc`` sent, as ``fmt`` declares them."""
    values: list[int | str] = []
    for (_name, conv, bits), value in zip(_conversions(fmt, word_bits), raw):
        value &= (1 << bits) - 1
        if conv in "di" and value >> (bits - 1):
            value -= 1 << bits
        values.append(read_string(value) if conv == "s" else value)
    return tuple(values)


class Markers:
    """The markers of one running guest, and the probes connected to them."""

    def __init__(self, guest: Guest, tables: Tables, imv: ImmediateValues | None,
                 keys: StaticKeys | None) -> None:
        self.guest = guest
        self.machine = guest.machine
        self.arch = guest.arch
        self.imv = imv
        self.keys = keys
        self.sites: dict[str, list[Marker]] = {}
        for marker in tables.markers:
            self.sites.setdefault(marker.name, []).append(marker)
        self.by_address = {m.address: m for m in tables.markers}
        self.probes: dict[str, list[tuple[Probe, object]]] = {}
        self.armed: Counter[str] = Counter()
        self.formats: dict[str, str] = {}       # the registry entry's format, per name
        self.enabled: set[str] = set()          # names whose sites an arm enabled
        self._on: dict[str, list[Marker]] = {}  # those sites, per name
        self.notices: list[str] = []            # the kernel's printk notices
        symbols = tables.image.symbols
        self.empty = symbols.pointer("__mark_empty_function")
        self.host_stub = symbols.pointer("marker_probe_hc")
        # per site: two sites of one name may have two formats
        self.classes = {m.address: event_class(m.name, m.format, self.arch.bits)
                        for m in tables.markers}
        layout = struct(tables.image.path, "marker")
        self.single_offset = layout.offset("single")
        self.multi_offset = layout.offset("multi")
        self.ptype_offset = layout.offset("ptype")
        self.pool = ArrayPool(guest, region=1)
        self.arrays: dict[int, int] = {}        # struct marker -> its live multi array
        guest.hypercalls.register("HC_MARKER", self._hc_marker)

    # -- registry ---------------------------------------------------------
    def _markers(self, name: str) -> list[Marker]:
        try:
            return self.sites[name]
        except KeyError:
            raise PatchError("ENOENT", f"no marker named {name!r}") from None

    def marker_probe_register(self, name: str, format: str | None, probe: Probe,
                              private: object = None) -> int:
        """Connect ``probe`` (kernel/marker.c, 2.6.27); 0, or :class:`PatchError`."""
        entry_format = self.formats.get(name)
        if format is not None and entry_format is not None and format != entry_format:
            raise PatchError("EPERM", f"marker {name}: format {format!r} differs from the "
                                      f"registered {entry_format!r}")
        connected = self.probes.setdefault(name, [])
        if (probe, private) in connected:
            raise PatchError("EBUSY", f"marker {name}: probe already registered")
        if isinstance(probe, int) and not isinstance(private, (int, type(None))):
            raise PatchError("EINVAL", f"marker {name}: a guest probe's private data is a word")
        connected.append((probe, private))
        if format is not None:
            self.formats.setdefault(name, format)

        def undo() -> None:
            connected.remove((probe, private))
            if entry_format is None:
                self.formats.pop(name, None)
        self._update(name, undo)
        return 0

    def pending(self) -> list[str]:
        """Registered names no site has yet (2.6.27 keeps their entries waiting)."""
        return sorted(n for n, probes in self.probes.items() if probes and n not in self.sites)

    def _format_ok(self, marker: Marker) -> bool:
        """set_marker's check, site by site: a site whose format differs from the
        entry's stays disabled, with a notice; an entry registered without a
        format takes its name's first site's."""
        name = marker.name
        entry_format = self.formats.setdefault(name, self.sites[name][0].format)
        if entry_format == marker.format:
            return True
        notice = (f"Format mismatch for probe {name} ({entry_format}), "
                  f"marker ({marker.format})")
        if notice not in self.notices:
            self.notices.append(notice)
        return False

    def marker_probe_unregister(self, name: str, probe: Probe, private: object = None) -> None:
        """Disconnect ``probe`` (kernel/marker.c, 2.6.27): ENOENT for a name with no
        probe; the last probe takes the entry, its arms and its format with it."""
        connected = self.probes.get(name, [])
        if not connected:
            raise PatchError("ENOENT", f"marker {name}: no probe registered")
        if (probe, private) in connected:
            index = connected.index((probe, private))
        elif len(connected) == 1:
            # marker_entry_remove_probe, one closure: WARN_ON(func != probe),
            # WARN_ON(private != probe_private), and the closure goes anyway
            self.notices.append(f"WARNING: marker {name}: unregistering a probe that is "
                                "not the registered one, which goes instead")
            index = 0
        else:
            return                              # the same array again: nothing changes
        self._remove(name, [index])

    def _remove(self, name: str, indices: list[int]) -> None:
        """marker_entry_remove_probe: the closures at ``indices`` go in one update of
        the sites (one new array); the last takes the entry, its arms and format."""
        connected = self.probes[name]
        before = list(connected)
        connected[:] = [c for i, c in enumerate(before) if i not in indices]
        entry = (self.formats.get(name), self.armed[name], name in self.enabled)
        if not connected:
            self.formats.pop(name, None)
            self.armed.pop(name, None)
            if name in self.enabled:
                self._enable_sites(name, False)

        def undo() -> None:
            connected[:] = before
            if entry[0] is not None:
                self.formats[name] = entry[0]
            self.armed[name] = entry[1]
            if entry[2] and name not in self.enabled:
                self._enable_sites(name, True)
        self._update(name, undo)

    def marker_probe_unregister_private_data(self, probe: Probe, private: object) -> None:
        """Disconnect by private data (kernel/marker.c, 2.6.27): the first entry with a
        closure (``probe``, ``private``) loses every closure whose private data is
        ``private``, whatever its function; ENOENT if no entry has that closure.
        2.6.27 takes the first entry of its hash table; kisim, of registration order."""
        name = next((n for n, connected in self.probes.items()
                     if (probe, private) in connected), None)
        if name is None:
            raise PatchError("ENOENT", "marker: no probe registered with that private data")
        self._remove(name, [i for i, (_, priv) in enumerate(self.probes[name])
                            if priv is private or priv == private])

    def marker_get_private_data(self, name: str, probe: Probe, num: int) -> object:
        """The private data of the ``num``-th closure of ``name`` whose function is
        ``probe`` (kernel/marker.c, 2.6.27); ENOENT (the kernel's ERR_PTR) if there
        is none."""
        matches = [private for func, private in self.probes.get(name, []) if func == probe]
        if not 0 <= num < len(matches):
            raise PatchError("ENOENT", f"marker {name}: no closure {num} of that probe")
        return matches[num]

    def _update(self, name: str, undo: Callable[[], None]) -> None:
        """set_marker on every site of ``name``; a refusal (ENOMEM) runs ``undo``
        first, as the kernel returns before it changes the entry."""
        if name not in self.sites:
            return
        try:
            self._connect(name)
        except PatchError:
            undo()
            raise

    def _closures(self, name: str, marker: Marker) -> list[tuple[int, int]]:
        """(func, probe_private) of each guest closure the site must call."""
        connected = self.probes.get(name, [])
        if not connected or not self._format_ok(marker):
            return [(self.empty, 0)]
        out = [(p, priv or 0) for p, priv in connected if isinstance(p, int)]
        if any(not isinstance(p, int) for p, _ in connected):
            out.append((self.host_stub, marker.address))   # one forwarder per site
        return out

    def _connect(self, name: str) -> None:
        """set_marker (2.6.27): ``single`` for one closure, else a new ``multi``
        array published before ``ptype``; an old array waits a grace period."""
        word = self.arch.word
        plans = [(marker, self._closures(name, marker)) for marker in self._markers(name)]
        if any(2 * (len(closures) + 1) > self.pool.slot // word for _, closures in plans):
            raise PatchError("ENOMEM", f"marker {name}: too many probes")
        if sum(len(closures) > 1 for _, closures in plans) > len(self.pool.free):
            raise PatchError("ENOMEM", "probe-array pool exhausted")
        for marker, closures in plans:      # nothing is written before room is certain
            old = self.arrays.pop(marker.address, 0)
            if len(closures) == 1:
                func, private = closures[0]
                single = marker.address + self.single_offset
                self.machine.write_word(single + word, private)
                self.machine.write_word(single, func)
                self.machine.write(marker.address + self.ptype_offset, b"\0")
                # ``multi`` keeps the old array until its grace period: a CPU
                # that read ptype 1 just before may still walk it.
            else:
                new = self.pool.alloc()
                for i, (func, private) in enumerate(closures + [(0, 0)]):
                    self.machine.write_word(new + 2 * i * word, func)
                    self.machine.write_word(new + (2 * i + 1) * word, private)
                self.machine.write_word(marker.address + self.multi_offset, new)
                self.machine.write(marker.address + self.ptype_offset, b"\1")
                self.arrays[marker.address] = new
            if old:
                self.pool.retire(old)

    # -- arming -----------------------------------------------------------
    def marker_arm(self, name: str) -> None:
        """Count one arm; the first enables the sites (kernel/marker.c, 2.6.24), except
        where set_marker refuses them (a format mismatch) or the name has none."""
        if not self.probes.get(name):
            raise PatchError("ENOENT", f"marker {name}: no probe registered to arm")
        self.armed[name] += 1
        if self.armed[name] == 1 and name in self.sites:
            self._enable_sites(name, True)

    def marker_disarm(self, name: str) -> None:
        """Drop one arm; the last disables the sites (kernel/marker.c, 2.6.24)."""
        if not self.probes.get(name):
            raise PatchError("ENOENT", f"marker {name}: no probe registered to disarm")
        if self.armed[name] == 0:
            raise PatchError("EPERM", f"marker {name} is not armed")
        self.armed[name] -= 1
        if self.armed[name] == 0 and name in self.enabled:
            self._enable_sites(name, False)

    def _enable_sites(self, name: str, on: bool) -> None:
        """Enable the sites of ``name`` that set_marker connects (not one whose
        format differs), or disable those that were enabled."""
        sites = ([m for m in self._markers(name) if self._format_ok(m)] if on
                 else self._on.pop(name, []))
        for marker in sites:
            set_enabled(self.machine, marker.enable, marker.state_addr, 1, on, self.imv,
                        self.keys)
        if on and sites:
            self._on[name] = sites
            self.enabled.add(name)
        elif not on:
            self.enabled.discard(name)

    # -- events -----------------------------------------------------------
    def _hc_marker(self, cpu: Cpu, address: int, array: int, count: int) -> None:
        """HC_MARKER from marker_probe_hc: a1 = struct marker *, a2 = u64 args[], a3 = count."""
        raw = self.guest.machine.read_words(array, count, 8)
        marker = self.by_address.get(address)
        if marker is None:
            raise self.machine.fault(cpu, f"HC_MARKER from unknown marker {address:#x}")
        values = decode(marker.format, raw, self.arch.bits, self.guest.read_string)
        task = self.guest.current_task(cpu)
        event = make_event(self.classes[marker.address], cpu=cpu.index, timestamp=cpu.clock_ns,
                           tid=task.pid, comm=task.comm, values=values)
        for probe, private in list(self.probes.get(marker.name, [])):
            if not isinstance(probe, int):
                probe(event, private)
