"""Wire every mechanism onto one guest: the patcher's front door."""
from __future__ import annotations

from dataclasses import dataclass

from patcher.imv import ImmediateValues
from patcher.jump_label import StaticKeys
from patcher.markers import Markers
from patcher.tables import Tables, load_tables
from patcher.text import TextPatcher
from patcher.tracepoint import Tracepoints
from sim.guest import Guest


@dataclass
class Instrumentation:
    guest: Guest
    tables: Tables
    text: TextPatcher
    imv: ImmediateValues | None
    keys: StaticKeys | None
    markers: Markers
    tracepoints: Tracepoints


def attach(guest: Guest, cpu: int | None = None) -> Instrumentation:
    """Read the guest's tables and set up imv, static keys, markers and tracepoints.

    Patches are initiated from the host, or from ``cpu`` (which then pays
    for the flushes).
    """
    tables = load_tables(guest.image, guest.arch)
    text = TextPatcher(guest.machine, cpu)
    imv = ImmediateValues(text, tables.imv) if tables.imv else None
    keys = StaticKeys(text, tables.jump_entries) if tables.jump_entries else None
    return Instrumentation(guest, tables, text, imv, keys,
                           Markers(guest, tables, imv, keys),
                           Tracepoints(guest, tables, imv, keys))
