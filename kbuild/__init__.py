"""Build the kisim guest kernel: compile, link, the mcount table, the cache.

:mod:`kbuild.image` compiles and links (``build``), :mod:`kbuild.cache`
keeps verified, atomically written builds, :mod:`kbuild.modules` reads
and compiles guest modules (``--module FILE.c``), and :mod:`kbuild.config`
chooses the configuration (``--config``, ``./.config`` or defconfig).
The Kconfig language itself is :mod:`kconfig`'s.
"""
from __future__ import annotations

from kbuild.config import ConfigChoice, ConfigChoiceError, resolve_config
from kbuild.image import (Build, BuildError, Module, ModuleError, build, cache_key, compile_flags,
                          compiler_version, default_cache_dir, mcount_call_sites)

__all__ = ["Build", "BuildError", "Module", "ModuleError", "ConfigChoice", "ConfigChoiceError", "build", "cache_key",
           "compile_flags", "compiler_version", "default_cache_dir", "mcount_call_sites",
           "resolve_config"]
