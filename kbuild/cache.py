"""The content-addressed build cache, verified before use.

An entry is ``<cache>/<key>/`` holding the image and what it was built
from; its ``build.json`` records the SHA-256 of each of those files. An
entry is used only if ``build.json`` parses, names the same key and every
file hashes as recorded; anything else (a flipped byte, a truncated image,
a missing or corrupt ``build.json``, a half-copied directory) is rebuilt.
Entries are assembled in a temporary directory inside the cache and
renamed into place, so a reader never sees a partial one.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

#: The files of an entry whose content build.json records.
ENTRY_FILES = ("vmlinux", ".config", "include/generated/autoconf.h")
META = "build.json"


def default_cache_dir(repo: Path) -> Path:
    """``$KISIM_CACHE`` (made absolute), else ``<repo>/.cache/kisim`` in a source
    checkout, else ``$XDG_CACHE_HOME/kisim`` (``~/.cache/kisim``) when installed."""
    env = os.environ.get("KISIM_CACHE")
    if env:
        return Path(env).expanduser().resolve()
    if (repo / "pyproject.toml").is_file():
        return repo / ".cache" / "kisim"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "kisim"


def file_hashes(entry: Path) -> dict[str, str]:
    """SHA-256 of each of :data:`ENTRY_FILES` in ``entry``."""
    return {name: hashlib.sha256((entry / name).read_bytes()).hexdigest()
            for name in ENTRY_FILES}


def verify(entry: Path, key: str) -> tuple[dict | None, str]:
    """``(build.json, "")`` for a sound entry, else ``(None, why it is not)``."""
    try:
        info = json.loads((entry / META).read_text())
    except FileNotFoundError:
        return None, f"no {META}"
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        return None, f"{META} unreadable ({type(err).__name__})"
    if not isinstance(info, dict) or info.get("key") != key \
            or not isinstance(info.get("files"), dict):
        return None, f"{META} does not describe this entry"
    for name in ENTRY_FILES:
        path = entry / name
        if not path.is_file():
            return None, f"{name} missing"
        if hashlib.sha256(path.read_bytes()).hexdigest() != info["files"].get(name):
            return None, f"{name} does not match its recorded SHA-256"
    return info, ""


def new_work_dir(cache_dir: Path, label: str) -> Path:
    """A fresh temporary directory inside the cache (same file system as entries)."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f"tmp-{label}-", dir=cache_dir))


def write_meta(work: Path, info: dict) -> None:
    """Record ``info`` plus the hashes of the entry's files as ``build.json``."""
    info = dict(info, files=file_hashes(work))
    tmp = work / (META + ".tmp")
    tmp.write_text(json.dumps(info, indent=2) + "\n")
    tmp.replace(work / META)


def install(work: Path, final: Path, key: str) -> dict:
    """Rename the finished ``work`` to ``final`` and return its build.json.

    A bad entry already at ``final`` is first renamed aside (then removed).
    If another process installed a sound entry meanwhile, that one is kept.
    """
    if final.exists():
        trash = Path(tempfile.mkdtemp(prefix="tmp-bad-", dir=final.parent))
        try:
            final.rename(trash / final.name)
        except FileNotFoundError:
            pass
        shutil.rmtree(trash, ignore_errors=True)
    try:
        work.rename(final)
    except OSError:
        info, _ = verify(final, key)
        if info is None:
            raise
        shutil.rmtree(work, ignore_errors=True)
        return info
    info, why = verify(final, key)
    if info is None:
        raise OSError(f"cache entry {final} unsound right after install: {why}")
    return info
