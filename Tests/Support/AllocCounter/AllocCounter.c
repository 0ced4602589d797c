// A malloc interposer with per-thread call counters, for alloc-guard.
//
// How it takes over: this file defines malloc, calloc, realloc, reallocarray, posix_memalign,
// aligned_alloc, memalign, valloc, pvalloc and free. SwiftPM links a C target's objects straight
// into the executable that depends on it, so these are the executable's own definitions. The
// dynamic linker resolves every shared object's calls to malloc (libswiftCore's swift_slowAlloc,
// libstdc++'s operator new, glibc's own strdup and friends, which glibc routes through the
// interposable symbol on purpose) by searching the executable first: the executable's
// definitions win over libc.so.6's as long as they are in its dynamic symbol table. No
// --export-dynamic is needed for that: a linker exports an executable's symbol when a shared
// library in the link defines or references it (libc.so.6 defines all of these, libswiftCore.so
// calls malloc and free), which gold (what swiftc's clang uses here), ld.bfd and lld all do
// (`nm -D --defined-only` lists the ten, and none of the alloc_counter_ functions, which need
// not be exported). alloc-guard still checks at run time that allocations arrive here
// (alloc_counter_calls_seen, and a control that must count), so a link that stops exporting
// them fails the guard instead of passing it.
//
// Each function counts the call, then forwards to the next definition, glibc's, found with
// dlsym(RTLD_NEXT, ...). dlsym may itself allocate (glibc's dlerror state uses calloc; Debian
// 12's glibc 2.36 did not, in gdb), which would come back here before the real functions are
// known: calls made while resolving are served from a small static arena, whose blocks are
// never handed to the real free or realloc.
//
// Counting is per thread (_Thread_local; initial-exec, as for any variable of the executable
// itself, so reading it never allocates) and only between alloc_counter_start() and
// alloc_counter_stop(), so other threads and the harness's own reporting do not count.
//
// Under AddressSanitizer or ThreadSanitizer the sanitizer runtime must own malloc: this file
// then defines none of it, counts nothing, and alloc_counter_calls_seen() stays 0 (alloc-guard
// fails loudly if run that way; `make asan` and `make tsan` build it but do not run it).
#define _GNU_SOURCE
#include "AllocCounter.h"

#include <stdatomic.h>
#include <string.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define ALLOC_COUNTER_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ALLOC_COUNTER_SANITIZED 1
#endif

static _Thread_local alloc_counts counts __attribute__((tls_model("initial-exec")));
static _Thread_local int counting __attribute__((tls_model("initial-exec")));
static atomic_uint_least64_t seen;

void alloc_counter_start(void) {
    memset(&counts, 0, sizeof counts);
    counting = 1;
}

alloc_counts alloc_counter_stop(void) {
    counting = 0;
    return counts;
}

alloc_counts alloc_counter_read(void) { return counts; }

uint64_t alloc_counter_allocations(alloc_counts c) {
    return c.malloc + c.calloc + c.realloc + c.reallocarray + c.posix_memalign + c.aligned_alloc +
           c.memalign + c.valloc + c.pvalloc;
}

uint64_t alloc_counter_calls_seen(void) { return atomic_load_explicit(&seen, memory_order_relaxed); }

__attribute__((noinline)) void alloc_counter_hit(void) {
    __asm__ volatile("");  // a place for a breakpoint, kept by the optimiser
}

#ifndef ALLOC_COUNTER_SANITIZED

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

static inline void note(uint64_t *field) {
    atomic_fetch_add_explicit(&seen, 1, memory_order_relaxed);
    if (counting) {
        (*field)++;
        if (field != &counts.free) alloc_counter_hit();
    }
}

// MARK: The real functions

static struct {
    void *(*malloc)(size_t);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    void *(*memalign)(size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
    void (*free)(void *);
} real;

enum { UNRESOLVED, RESOLVING, READY };
static atomic_int state = UNRESOLVED;
/// Set on the thread running dlsym: its allocator calls go to the arena.
static _Thread_local int resolver __attribute__((tls_model("initial-exec")));

static void die(const char *message) {
    ssize_t ignored = write(STDERR_FILENO, message, strlen(message));
    (void)ignored;
    abort();
}

/// dlsym's void * as a function pointer, without the cast C leaves undefined.
static void lookup(void *slot, const char *name) {
    void *found = dlsym(RTLD_NEXT, name);
    if (found == NULL) {
        die("alloc-counter: dlsym(RTLD_NEXT) found no C allocator function\n");
    }
    memcpy(slot, &found, sizeof found);
}

/// Whether the real functions can be called: resolves them on the first call, and says no to
/// the calls dlsym makes meanwhile.
static int ready(void) {
    if (atomic_load_explicit(&state, memory_order_acquire) == READY) return 1;
    if (resolver) return 0;
    int expected = UNRESOLVED;
    if (atomic_compare_exchange_strong(&state, &expected, RESOLVING)) {
        resolver = 1;
        lookup(&real.malloc, "malloc");
        lookup(&real.calloc, "calloc");
        lookup(&real.realloc, "realloc");
        lookup(&real.posix_memalign, "posix_memalign");
        lookup(&real.aligned_alloc, "aligned_alloc");
        lookup(&real.memalign, "memalign");
        lookup(&real.valloc, "valloc");
        lookup(&real.pvalloc, "pvalloc");
        lookup(&real.free, "free");
        resolver = 0;
        atomic_store_explicit(&state, READY, memory_order_release);
        return 1;
    }
    // Another thread is resolving (only possible if the first calls race at start-up).
    while (atomic_load_explicit(&state, memory_order_acquire) != READY) sched_yield();
    return 1;
}

// MARK: The bootstrap arena

enum { ARENA_BYTES = 64 * 1024, HEADER = 16 };
static _Alignas(4096) unsigned char arena[ARENA_BYTES];
static atomic_size_t arenaUsed;

static int inArena(const void *p) {
    return (const unsigned char *)p >= arena && (const unsigned char *)p < arena + ARENA_BYTES;
}

/// A block of `size` bytes aligned to `align` (a power of two), zeroed (the arena is static
/// and never reused), with its size in the HEADER bytes before it.
static void *arenaAlloc(size_t size, size_t align) {
    if (align < HEADER) align = HEADER;
    size_t used = atomic_load_explicit(&arenaUsed, memory_order_relaxed);
    for (;;) {
        size_t start = (used + HEADER + align - 1) & ~(align - 1);
        if (start > ARENA_BYTES || size > ARENA_BYTES - start) {
            errno = ENOMEM;
            return NULL;
        }
        if (atomic_compare_exchange_weak(&arenaUsed, &used, start + size)) {
            memcpy(arena + start - sizeof(size_t), &size, sizeof(size_t));
            return arena + start;
        }
    }
}

static size_t arenaSize(const void *p) {
    size_t size;
    memcpy(&size, (const unsigned char *)p - sizeof(size_t), sizeof(size_t));
    return size;
}

static int badAlignment(size_t align) { return align == 0 || (align & (align - 1)) != 0; }

// MARK: The interposed functions

void *malloc(size_t size) {
    note(&counts.malloc);
    if (!ready()) return arenaAlloc(size, HEADER);
    return real.malloc(size);
}

void *calloc(size_t count, size_t size) {
    note(&counts.calloc);
    if (!ready()) {
        size_t total;
        if (__builtin_mul_overflow(count, size, &total)) {
            errno = ENOMEM;
            return NULL;
        }
        return arenaAlloc(total, HEADER);
    }
    return real.calloc(count, size);
}

/// realloc's work, counted by the caller. An arena block moves to the real heap (or to a new
/// arena block while resolving), and the old block stays where it is.
static void *reallocate(void *p, size_t size) {
    if (p != NULL && inArena(p)) {
        void *moved = ready() ? real.malloc(size) : arenaAlloc(size, HEADER);
        if (moved != NULL) {
            size_t old = arenaSize(p);
            memcpy(moved, p, old < size ? old : size);
        }
        return moved;
    }
    if (!ready()) return arenaAlloc(size, HEADER);  // p is NULL: nothing else exists yet
    return real.realloc(p, size);
}

void *realloc(void *p, size_t size) {
    note(&counts.realloc);
    return reallocate(p, size);
}

// glibc's reallocarray calls its internal realloc, not the interposable one: it is counted
// here and done with our realloc, so that every call lands in one place.
void *reallocarray(void *p, size_t count, size_t size) {
    note(&counts.reallocarray);
    size_t total;
    if (__builtin_mul_overflow(count, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return reallocate(p, total);
}

int posix_memalign(void **out, size_t align, size_t size) {
    note(&counts.posix_memalign);
    if (!ready()) {
        if (badAlignment(align) || align % sizeof(void *) != 0) return EINVAL;
        void *p = arenaAlloc(size, align);
        if (p == NULL) return ENOMEM;
        *out = p;
        return 0;
    }
    return real.posix_memalign(out, align, size);
}

void *aligned_alloc(size_t align, size_t size) {
    note(&counts.aligned_alloc);
    if (!ready()) {
        if (badAlignment(align)) {
            errno = EINVAL;
            return NULL;
        }
        return arenaAlloc(size, align);
    }
    return real.aligned_alloc(align, size);
}

void *memalign(size_t align, size_t size) {
    note(&counts.memalign);
    if (!ready()) {
        if (badAlignment(align)) {
            errno = EINVAL;
            return NULL;
        }
        return arenaAlloc(size, align);
    }
    return real.memalign(align, size);
}

void *valloc(size_t size) {
    note(&counts.valloc);
    if (!ready()) return arenaAlloc(size, 4096);
    return real.valloc(size);
}

void *pvalloc(size_t size) {
    note(&counts.pvalloc);
    if (!ready()) return arenaAlloc((size + 4095) & ~(size_t)4095, 4096);
    return real.pvalloc(size);
}

void free(void *p) {
    note(&counts.free);
    if (p == NULL || inArena(p)) return;
    // A pointer that is not the arena's came from the real allocator, so it is resolved (or
    // being resolved on another thread, which ready() waits for).
    if (!ready()) return;
    real.free(p);
}

#endif
