"""Unicorn code and memory-access hooks with one Python frame per call.

``unicorn.Uc.hook_add`` (binding 2.1.4, ``unicorn_py3/unicorn.py``) calls a
Python hook through two frames of its own: ``uccallback``'s exception guard
and a per-kind adapter that drops the engine handle. On a hook that runs at
every instruction of a loop that is a third of the hook's cost. :func:`hook_add`
installs one closure doing both: it calls ``callback`` with the arguments the
binding passes, and an exception ends the emulation and is raised by
``emu_start``, as the binding's guard does (the first one is kept).
"""
from __future__ import annotations

import ctypes
from typing import Callable

import unicorn
from unicorn.unicorn_py3.unicorn import HOOK_CODE_CFUNC, HOOK_MEM_ACCESS_CFUNC

from sim.native import hook_add_range

MEMORY_ACCESS = (unicorn.UC_HOOK_MEM_READ, unicorn.UC_HOOK_MEM_WRITE)


def _failed(uc: unicorn.Uc, exc: BaseException) -> None:
    if uc._hook_exception is None:
        uc._hook_exception = exc
    uc.emu_stop()


def hook_add(uc: unicorn.Uc, kind: int, callback: Callable[..., None], user_data: object = None,
             begin: int = 1, end: int = 0) -> int:
    """As ``uc.hook_add(kind, callback, user_data, begin, end)`` for ``UC_HOOK_CODE``,
    ``UC_HOOK_MEM_READ`` and ``UC_HOOK_MEM_WRITE``; the handle ``uc.hook_del`` takes."""
    if kind == unicorn.UC_HOOK_CODE:
        def code(_engine: int, address: int, size: int, _key: int) -> None:
            try:
                callback(uc, address, size, user_data)
            except BaseException as exc:    # noqa: BLE001  (re-raised by emu_start)
                _failed(uc, exc)
        fptr = HOOK_CODE_CFUNC(code)
    elif kind in MEMORY_ACCESS:
        def access(_engine: int, kind_: int, address: int, size: int, value: int,
                   _key: int) -> None:
            try:
                callback(uc, kind_, address, size, value, user_data)
            except BaseException as exc:    # noqa: BLE001  (re-raised by emu_start)
                _failed(uc, exc)
        fptr = HOOK_MEM_ACCESS_CFUNC(access)
    else:
        raise ValueError(f"hook kind {kind}: only code and memory-access hooks")
    handle = hook_add_range(uc, kind, ctypes.cast(fptr, ctypes.c_void_p).value, None, begin, end)
    uc._callbacks[handle] = fptr            # alive as long as the hook; hook_del drops it
    return handle
