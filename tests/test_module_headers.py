"""Modules as kernel developers write them: Linux's headers (v5.10), only
kisim's include path, reported warnings, multi-file modules, and Linux's own
lib/ files built unchanged (tests/linux_lib/)."""
from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest

import patcher.instrument  # noqa: F401  (serves the module API)
import probes.kprobes  # noqa: F401
from arches import NAMES, get_arch
from kbuild import ModuleError, build
from kbuild.modules import ModulePath, load_module
from kisim.cli import main
from sim.guest import Guest

pytestmark = pytest.mark.slow

LINUX_LIB = Path(__file__).parent / "linux_lib"


def _xorshift(n: int) -> list[int]:
    x, out = 2463534242, []
    for _ in range(n):
        x ^= (x << 13) & 0xFFFF_FFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFF_FFFF
        out.append(x)
    return out


def _run(arch: str, modules: list, workload: str, size: int = 0) -> int:
    result = Guest(build(arch, modules=modules), workload=workload, size=size).run()
    assert result.ok, result.console
    return result.checksum


@pytest.mark.parametrize("arch", NAMES)
def test_linux_lib_sort_and_list_sort_build_unchanged(arch: str) -> None:
    mods = [LINUX_LIB / "sort", LINUX_LIB / "list_sort"]
    values = [v % 1000 for v in _xorshift(300)]
    want = sum((i + 1) * v for i, v in enumerate(sorted(values))) & 0xFFFF_FFFF
    assert _run(arch, mods, "sort:test_sort_run", 300) == want
    items = sorted((v % 97, i) for i, v in enumerate(_xorshift(300)))  # stable by serial
    want = sum((i + 1) * (k * 1024 + s) for i, (k, s) in enumerate(items)) & 0xFFFF_FFFF
    assert _run(arch, mods, "list_sort:test_list_sort_run", 300) == want


HEADERS = r"""
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/bug.h>
#include <linux/export.h>
#include <linux/ctype.h>
#include <linux/bitops.h>
#include <linux/printk.h>
#include <linux/gfp.h>
#include <linux/slab.h>
#include <linux/limits.h>
#include <linux/list.h>
#include <linux/rcupdate.h>
#include <linux/sort.h>
#include <linux/list_sort.h>
#include <linux/bsearch.h>
#include <linux/crc32.h>
#include <linux/string.h>
#include <asm/byteorder.h>
#include <asm/word-at-a-time.h>

static int __maybe_unused ____cacheline_aligned aligned_word;
static struct list_head *__rcu published;

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static __pure __visible u32 mix(u32 h, u32 v)
{
	return (h ^ v) * 16777619u;
}

u32 headers_run(u32 size)
{
	static const int keys[] = { 1, 3, 5, 7, 9 };
	const struct word_at_a_time zero = WORD_AT_A_TIME_CONSTANTS;
	unsigned long word, data;
	__le32 le = cpu_to_le32(0x11223344);
	u8 *bytes = (u8 *)&le;
	char buf[8];
	ssize_t copied;
	uint16_t h16 = 0;
	u32 h = 2166136261u, *zeroed;
	int warned = 0, i;
	LIST_HEAD(head);
	struct list_head node;

	h = mix(h, BIT(5) | GENMASK(11, 8));
	h = mix(h, min_t(u32, 7, size) + max_t(int, -1, 2) + clamp(size, 3u, 9u));
	h = mix(h, DIV_ROUND_UP(10, 4) + ALIGN(13, 8) + IS_ENABLED(CONFIG_64BIT) * 100);
	h = mix(h, U32_MAX ^ (u32)INT_MAX ^ (u32)ULONG_MAX ^ NAME_MAX);
	h = mix(h, fls(0x90) + __ffs(0x40) + hweight32(0xff00ff) + ror32(0x1, 1));
	h = mix(h, isdigit('7') + isxdigit('F') * 2 + isspace('\t') * 4 + tolower('Q'));
	h = mix(h, bytes[0] | bytes[3] << 8 | le32_to_cpu(le) << 16 | (be32_to_cpu(cpu_to_be32(5)) << 24));
	switch (size) {
	case 2:
		h16 = 2;
		fallthrough;
	default:
		h16 += 1;
	}
	h = mix(h, h16);
	for (i = 0; i < 3; i++)
		warned += WARN_ON_ONCE(i >= 0);		/* reports once, true each time */
	h = mix(h, warned);
	zeroed = kcalloc(4, sizeof(*zeroed), GFP_KERNEL);
	h = mix(h, zeroed && !zeroed[0] && !zeroed[3] && !kmalloc_array(ULONG_MAX / 2, 4, GFP_KERNEL));
	kfree(zeroed);
	copied = strscpy(buf, "truncated", sizeof(buf));
	h = mix(h, (u32)copied ^ (u32)strscpy(buf, "ok", sizeof(buf)) << 8);
	h = mix(h, (u32)strcmp("a", "b") ^ (u32)strcmp("b", "a") << 4 ^ (u32)strncmp("ab", "ac", 1) << 8);
	word = 0;
	memcpy(&word, "ab\0cdefg", sizeof(word));
	if (has_zero(word, &data, &zero)) {
		data = prep_zero_mask(word, data, &zero);
		data = create_zero_mask(data);
		h = mix(h, find_zero(data));
	}
	list_add_tail(&node, &head);
	rcu_assign_pointer(published, &node);
	rcu_read_lock();
	h = mix(h, rcu_dereference(published) == head.next && list_is_singular(&head));
	rcu_read_unlock();
	h = mix(h, (u32)((const int *)__inline_bsearch(&keys[3], keys, ARRAY_SIZE(keys),
						     sizeof(int), cmp_int) - keys));
	printk_once(KERN_INFO "headers: once\n");
	pr_info_once("headers: once more\n");
	return h;
}
"""




@pytest.mark.parametrize("arch", NAMES)
def test_the_v5_10_headers_and_string_semantics(arch: str, tmp_path: Path) -> None:
    path = tmp_path / "headers.c"
    path.write_text(HEADERS)
    b = build(arch, modules=[path])
    assert b.warnings == ()
    spec = get_arch(arch)
    result = Guest(b, workload="headers:headers_run", size=5).run()
    assert result.ok, result.console
    h = 2166136261

    def mix(v: int) -> None:
        nonlocal h
        h = ((h ^ (v & 0xFFFF_FFFF)) * 16777619) & 0xFFFF_FFFF

    ulong_max = (1 << spec.bits) - 1
    mix((1 << 5) | 0xF00)
    mix(5 + 2 + 5)
    mix(3 + 16 + (100 if spec.bits == 64 else 0))
    mix(0xFFFF_FFFF ^ 0x7FFF_FFFF ^ (ulong_max & 0xFFFF_FFFF) ^ 255)
    mix(8 + 6 + 16 + 0x8000_0000)
    mix(1 + 2 + 4 + ord("q"))
    b0, b3 = (0x44, 0x11)
    mix(b0 | b3 << 8 | (0x11223344 << 16) | (5 << 24))
    mix(1)                                             # size 5: default only
    mix(3)
    mix(1)
    mix((-7 & 0xFFFF_FFFF) ^ (2 << 8))                 # -E2BIG, then 2
    mix((-1 & 0xFFFF_FFFF) ^ (1 << 4) ^ 0)
    mix(2)                                             # the zero byte of "ab\0..." is byte 2
    mix(1)
    mix(3)
    assert result.checksum == h
    assert result.console.count("headers: once\n") == 1
    assert result.console.count("headers: once more\n") == 1
    assert result.console.count("WARNING:") == 1       # WARN_ON_ONCE: once of three


@pytest.mark.parametrize("header", ["stdio.h", "string.h", "stdlib.h", "linux/ioctl.h"])
def test_userspace_headers_are_not_found(header: str, tmp_path: Path) -> None:
    path = tmp_path / "user.c"
    path.write_text(f"#include <{header}>\nint user_run(int x) {{ return x; }}\n")
    with pytest.raises(ModuleError, match=f"'{header}' file not found"):
        build("x86_64", modules=[path])


def test_linux_limits_h_is_the_kernels(tmp_path: Path) -> None:
    """<linux/limits.h> is kisim's (the UAPI one has no U32_MAX)."""
    path = tmp_path / "lim.c"
    path.write_text("#include <linux/limits.h>\n"
                    "u32 lim_run(u32 x) { return NAME_MAX + PATH_MAX + (U32_MAX == ~0u); }\n")
    assert _run("x86_64", [path], "lim:lim_run") == 255 + 4096 + 1


def test_the_kernel_build_sees_only_kisims_headers() -> None:
    from kbuild.image import CFLAGS
    assert {"-nostdinc", "-nostdlib"} <= set(CFLAGS)


WARNS = "int warn_run(int x)\n{\n\tint unused;\n\treturn x;\n}\n"


def test_warnings_are_reported_and_can_be_errors(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "warn.c"
    path.write_text(WARNS)
    b = build("x86_64", modules=[path])
    assert len(b.warnings) == 1 and f"{path}:3:6: warning: unused variable 'unused'" \
        in b.warnings[0]
    assert "unused variable" in capsys.readouterr().err
    build("x86_64", modules=[path])                      # cached: reported again
    assert "unused variable" in capsys.readouterr().err
    with pytest.raises(ModuleError, match=r"warn\.c:3:6: error: unused variable"):
        build("x86_64", modules=[ModulePath(str(path), werror=True)])
    assert main(["boot", "--arch", "x86_64", "--module", str(path), "--module-werror",
                 "--workload", "warn:warn_run"]) == 2
    assert "error: unused variable" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["boot"], ["kprobe", "--at", "warn_run"]])
def test_json_carries_the_warnings(tmp_path: Path, capsys: pytest.CaptureFixture,
                                   command: list[str]) -> None:
    path = tmp_path / "warn.c"
    path.write_text(WARNS)
    assert main([*command, "--arch", "x86_64", "--module", str(path), "--workload",
                 "warn:warn_run", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert any("unused variable 'unused'" in w for w in doc["warnings"])


def _crc32_table() -> list[int]:
    """lib/gen_crc32table.c's little-endian table (crc32init_le, one row)."""
    table = []
    for i in range(256):
        crc = i
        for _ in range(8):
            crc = (crc >> 1) ^ (0xEDB88320 if crc & 1 else 0)
        table.append(crc)
    return table


def _crc_module(where: Path) -> Path:
    where.mkdir()
    rows = ",\n".join("\t" + ", ".join(f"0x{v:08x}U" for v in _crc32_table()[i:i + 4])
                      for i in range(0, 256, 4))
    (where / "crc32table.h").write_text(f"static const u32 crc32table_le[256] = {{\n{rows}\n}};\n")
    (where / "crc.c").write_text('#include <linux/crc32.h>\n#include "crc32table.h"\n'
                                 "u32 __pure crc32_le(u32 crc, unsigned char const *p, size_t len)\n"
                                 "{\n\twhile (len--)\n\t\tcrc = (crc >> 8) ^ "
                                 "crc32table_le[(crc ^ *p++) & 255];\n\treturn crc;\n}\n")
    (where / "crc_test.c").write_text("#include <linux/module.h>\n#include <linux/crc32.h>\n"
                                      "u32 crc_test_run(u32 size)\n{\n"
                                      "\tstatic const char msg[] = \"The quick brown fox\";\n"
                                      "\treturn ~crc32_le(~0u, (const u8 *)msg, size);\n}\n")
    return where


@pytest.mark.parametrize("arch", NAMES)
def test_a_directory_module_with_a_local_header(arch: str, tmp_path: Path) -> None:
    mod = _crc_module(tmp_path / "crc")
    assert _run(arch, [mod], "crc:crc_test_run", 19) == zlib.crc32(b"The quick brown fox")


def test_the_cache_key_covers_every_file_of_a_module(tmp_path: Path) -> None:
    mod = _crc_module(tmp_path / "crc")
    first = build("x86_64", modules=[mod])
    assert build("x86_64", modules=[mod]).key == first.key
    table = mod / "crc32table.h"
    table.write_text(table.read_text().replace("0x00000000U", "0x00000001U", 1))
    assert build("x86_64", modules=[mod]).key != first.key
    loaded = load_module(mod)
    assert [f.rel for f in loaded.sources] == ["crc.c", "crc_test.c"]
    assert [f.rel for f in loaded.headers] == ["crc32table.h"]


def test_a_list_of_files_is_one_module(tmp_path: Path) -> None:
    mod = _crc_module(tmp_path / "crc")
    listed = f"{mod / 'crc_test.c'},{mod / 'crc.c'}"
    assert load_module(listed).name == "crc_test"
    assert _run("x86_64", [listed], "crc_test:crc_test_run", 3) == zlib.crc32(b"The")


def test_a_module_header_error_names_the_users_file(tmp_path: Path) -> None:
    mod = tmp_path / "bad"
    mod.mkdir()
    (mod / "bad.h").write_text("int broken = ;\n")
    (mod / "bad.c").write_text('#include "bad.h"\nint bad_run(int x) { return x; }\n')
    with pytest.raises(ModuleError, match=rf"^{mod}/bad\.h:1:14: error: "):
        build("x86_64", modules=[mod])


def test_a_module_may_replace_the_kernels_string_functions(tmp_path: Path) -> None:
    """The kernel's string functions are weak (as lib/string.c's __HAVE_ARCH_*
    choice): a module's strlen is the one the whole image uses."""
    path = tmp_path / "mystr.c"
    path.write_text("#include <linux/string.h>\n"
                    "size_t strlen(const char *s) { size_t n = 0; while (s[n]) n++; "
                    "return n + 1000; }\n"
                    "u32 mystr_run(u32 x) { return strlen(\"abc\"); }\n")
    assert _run("x86_64", [path], "mystr:mystr_run") == 1003


def test_min_and_max_evaluate_once_and_check_types(tmp_path: Path) -> None:
    """<linux/minmax.h> (v5.10): each argument once (i++ counted once per use),
    and two different types are a warning, as __typecheck makes them."""
    mod = tmp_path / "mm.c"
    mod.write_text("#include <linux/module.h>\n"
                   "u32 mm_run(u32 size)\n{\n\tu32 i = size, a = min(i++, 100u), b = max(i++, 0u);\n\n"
                   "\treturn a * 1000 + b * 10 + i;\n}\n"
                   "long mm_mixed(int a, long b)\n{\n\treturn min(a, b);\n}\n")
    image = build("x86_64", modules=[mod])
    assert any("distinct pointer types" in w for w in image.warnings), image.warnings
    assert _run("x86_64", [mod], "mm:mm_run", 7) == 7 * 1000 + 8 * 10 + 9
