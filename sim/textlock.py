"""text_mutex: the lock held around every store to kernel text.

As in the kernel (kernel/extable.c ``DEFINE_MUTEX(text_mutex)``), there is
one text lock; :meth:`sim.machine.Machine.write_text` asserts it is held,
as text_poke() does with ``lockdep_assert_held(&text_mutex)``
(arch/x86/kernel/alternative.c). The lock is process-wide, so several
machines in one process serialize their text writes on it: coarser than
needed, never unsafe.
"""
from __future__ import annotations

import threading


class LockNotHeld(RuntimeError):
    """Text was about to be written without holding ``text_mutex``."""


class TextMutex:
    """The text lock: a mutex that knows its holder.

    Reentrant for its holder, so a caller may hold it around several
    patcher calls (as jump_label_transform holds text_mutex around the arch
    code) while each call still takes it itself.
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._owner: int | None = None
        self._depth = 0

    def acquire(self) -> None:
        self._lock.acquire()
        self._owner = threading.get_ident()
        self._depth += 1

    def release(self) -> None:
        if not self.held():
            raise LockNotHeld("text_mutex released by a thread that does not hold it")
        self._depth -= 1
        if self._depth == 0:
            self._owner = None
        self._lock.release()

    def held(self) -> bool:
        """Whether the calling thread holds the lock."""
        return self._owner == threading.get_ident()

    def assert_held(self, what: str) -> None:
        """lockdep_assert_held(&text_mutex)."""
        if not self.held():
            raise LockNotHeld(f"{what} without holding text_mutex")

    def __enter__(self) -> TextMutex:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


text_mutex = TextMutex()
"""The one text lock. Every text write in kisim happens while it is held."""
