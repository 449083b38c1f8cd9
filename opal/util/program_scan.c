/* SPDX-License-Identifier: BSD-3-Clause */
/* Whether a program can reach a wireup (program_scan.h), from its ELF headers, dynamic section
 * and dynamic symbol table. Every offset and size read from the file is checked against the
 * file's size: a truncated or hostile file is "not a leaf", never a crash. */
#include "herd_config.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opal/util/argv.h"
#include "opal/util/program_scan.h"

#if __SIZEOF_POINTER__ == 8
#define SCAN_ELFCLASS ELFCLASS64
#else
#define SCAN_ELFCLASS ELFCLASS32
#endif

/* The C runtime: libraries that cannot be a wireup client and run another program only when
 * the program itself imports one of the functions below. */
static char *const runtime_libraries[] = {
    "libc.so.6",
    "libm.so.6",
    "libpthread.so.0",
    "libdl.so.2",
    "librt.so.1",
    "libgcc_s.so.1",
    "libmvec.so.1",
    "ld-linux-x86-64.so.2",
    "ld-linux.so.2",
    "ld-linux-aarch64.so.1",
    "ld64.so.2",
    "ld-linux-riscv64-lp64d.so.1",
    NULL,
};

/* Functions through which a program runs another program or loads code. */
static char *const starting_functions[] = {
    "execve",
    "execv",
    "execvp",
    "execvpe",
    "execl",
    "execlp",
    "execle",
    "fexecve",
    "execveat",
    "posix_spawn",
    "posix_spawnp",
    "system",
    "popen",
    "wordexp",
    "dlopen",
    "dlmopen",
    "__libc_dlopen_mode",
    "syscall",
    NULL,
};

typedef struct scan {
    const uint8_t *base;
    size_t size;
} scan_t;

static bool in_file(const scan_t *f, uint64_t offset, uint64_t length)
{
    return offset <= f->size && length <= f->size - offset;
}

static void say(char *why, size_t size, const char *fmt, const char *what)
{
    if (NULL != why && size > 0) {
        snprintf(why, size, fmt, what);
    }
}

/* A NUL-terminated string at offset inside the string table [off, off + len), or NULL. */
static const char *table_string(const scan_t *f, uint64_t table_off, uint64_t table_len,
                                uint64_t offset)
{
    if (!in_file(f, table_off, table_len) || offset >= table_len) {
        return NULL;
    }
    const char *s = (const char *) f->base + table_off + offset;
    return NULL != memchr(s, '\0', table_len - offset) ? s : NULL;
}

/* The section header at index i, or NULL. */
static const ElfW(Shdr) * section(const scan_t *f, const ElfW(Ehdr) * eh, size_t i)
{
    if (i >= eh->e_shnum || sizeof(ElfW(Shdr)) != eh->e_shentsize) {
        return NULL;
    }
    uint64_t off = (uint64_t) eh->e_shoff + (uint64_t) i * sizeof(ElfW(Shdr));
    return in_file(f, off, sizeof(ElfW(Shdr))) ? (const ElfW(Shdr) *) (f->base + off) : NULL;
}

static bool scan_elf(const scan_t *f, char *why, size_t why_size)
{
    if (!in_file(f, 0, sizeof(ElfW(Ehdr))) || 0 != memcmp(f->base, ELFMAG, SELFMAG)) {
        say(why, why_size, "%s", "not an ELF file");
        return false;
    }
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *) f->base;
    if (SCAN_ELFCLASS != eh->e_ident[EI_CLASS] || (ET_EXEC != eh->e_type && ET_DYN != eh->e_type)) {
        say(why, why_size, "%s", "not an executable of this machine's class");
        return false;
    }
    /* a program interpreter: statically linked programs may make system calls of their own */
    bool interp = false;
    for (size_t i = 0; i < eh->e_phnum && sizeof(ElfW(Phdr)) == eh->e_phentsize; ++i) {
        uint64_t off = (uint64_t) eh->e_phoff + (uint64_t) i * sizeof(ElfW(Phdr));
        if (!in_file(f, off, sizeof(ElfW(Phdr)))) {
            break;
        }
        interp = interp || PT_INTERP == ((const ElfW(Phdr) *) (f->base + off))->p_type;
    }
    if (!interp) {
        say(why, why_size, "%s", "statically linked");
        return false;
    }
    bool seen_dynamic = false, seen_dynsym = false;
    for (size_t i = 0; i < eh->e_shnum; ++i) {
        const ElfW(Shdr) *sh = section(f, eh, i);
        if (NULL == sh) {
            say(why, why_size, "%s", "unreadable section headers");
            return false;
        }
        if (SHT_DYNAMIC != sh->sh_type && SHT_DYNSYM != sh->sh_type) {
            continue;
        }
        const ElfW(Shdr) *strings = section(f, eh, sh->sh_link);
        if (NULL == strings || !in_file(f, sh->sh_offset, sh->sh_size) ||
            !in_file(f, strings->sh_offset, strings->sh_size)) {
            say(why, why_size, "%s", "unreadable dynamic section");
            return false;
        }
        if (SHT_DYNAMIC == sh->sh_type) {
            seen_dynamic = true;
            const ElfW(Dyn) *dyn = (const ElfW(Dyn) *) (f->base + sh->sh_offset);
            for (size_t k = 0; k < sh->sh_size / sizeof(ElfW(Dyn)) && DT_NULL != dyn[k].d_tag;
                 ++k) {
                if (DT_NEEDED != dyn[k].d_tag) {
                    continue;
                }
                const char *lib =
                    table_string(f, strings->sh_offset, strings->sh_size, dyn[k].d_un.d_val);
                if (NULL == lib) {
                    say(why, why_size, "%s", "unreadable library name");
                    return false;
                }
                if (opal_argv_find(runtime_libraries, lib) < 0) {
                    say(why, why_size, "needs %s", lib);
                    return false;
                }
            }
        } else {
            seen_dynsym = true;
            const ElfW(Sym) *sym = (const ElfW(Sym) *) (f->base + sh->sh_offset);
            for (size_t k = 0; k < sh->sh_size / sizeof(ElfW(Sym)); ++k) {
                if (SHN_UNDEF != sym[k].st_shndx || 0 == sym[k].st_name) {
                    continue;
                }
                const char *name =
                    table_string(f, strings->sh_offset, strings->sh_size, sym[k].st_name);
                if (NULL == name) {
                    say(why, why_size, "%s", "unreadable symbol name");
                    return false;
                }
                if (opal_argv_find(starting_functions, name) >= 0) {
                    say(why, why_size, "imports %s", name);
                    return false;
                }
            }
        }
    }
    if (!seen_dynamic || !seen_dynsym) {
        say(why, why_size, "%s", "no dynamic symbol table");
        return false;
    }
    return true;
}

int opal_program_is_leaf(const char *path, bool *leaf, char *why, size_t why_size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return HERD_ERR_IN_ERRNO;
    }
    struct stat st;
    if (0 != fstat(fd, &st)) {
        int saved = errno;
        close(fd);
        errno = saved;
        return HERD_ERR_IN_ERRNO;
    }
    if (!S_ISREG(st.st_mode) || st.st_size < (off_t) sizeof(ElfW(Ehdr))) {
        close(fd);
        say(why, why_size, "%s", "not an ELF file");
        *leaf = false;
        return HERD_SUCCESS;
    }
    void *map = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    int saved = errno;
    close(fd);
    if (MAP_FAILED == map) {
        errno = saved;
        return HERD_ERR_IN_ERRNO;
    }
    scan_t f = {.base = map, .size = (size_t) st.st_size};
    *leaf = scan_elf(&f, why, why_size);
    if (*leaf) {
        say(why, why_size, "%s", "C runtime only, starts no program");
    }
    munmap(map, (size_t) st.st_size);
    return HERD_SUCCESS;
}
