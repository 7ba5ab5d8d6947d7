"""The one enable mechanism shared by markers and tracepoints.

A marker's ``state`` byte and a tracepoint's ``state`` int are tested at each
site by whichever mechanism the ``.config`` chose (DESIGN: immediate values
of the 2.6.2x LTTng patches, jump labels of 2.6.37+, or a plain memory load):

- ``imv``: the state variable and every instruction mirroring it are set
  together (``imv_set``, patcher/imv.py);
- ``jump_label``: the state is stored, then its static key is incremented or
  decremented (``static_key_slow_inc``/``_dec``, kernel/jump_label.c), which
  patches the sites on the 0<->1 transitions;
- ``load``: the state variable alone, read by a load-test-branch.
"""
from __future__ import annotations

from patcher.errors import PatchError
from patcher.imv import ImmediateValues
from patcher.jump_label import StaticKeys
from sim.machine import Machine


def set_enabled(machine: Machine, mechanism: str, state_addr: int, size: int, on: bool,
                imv: ImmediateValues | None, keys: StaticKeys | None) -> None:
    """Turn the ``size``-byte state at ``state_addr`` on or off through ``mechanism``."""
    if mechanism == "imv":
        if imv is None:
            raise PatchError("EINVAL", f"state {state_addr:#x} uses immediate values, "
                                       "which this kernel was built without")
        imv.imv_set(state_addr, int(on), var_size=size)
        return
    if mechanism not in ("jump_label", "load"):
        raise PatchError("EINVAL", f"unknown enable mechanism {mechanism!r}")
    machine.write_word(state_addr, int(on), size)
    if mechanism == "jump_label":
        if keys is None:
            raise PatchError("EINVAL", f"state {state_addr:#x} uses jump labels, "
                                       "which this kernel was built without")
        (keys.static_key_slow_inc if on else keys.static_key_slow_dec)(state_addr)


__all__ = ["set_enabled"]
