// Counts this thread's calls to the C allocator, for alloc-guard (Tests/Support/alloc-guard).
//
// Linking this target into an executable replaces malloc and its family for the whole process
// (AllocCounter.c says how and why); the functions below read the counts.
#ifndef ALLOC_COUNTER_H
#define ALLOC_COUNTER_H

#include <stdint.h>

/// Calls made by one thread between alloc_counter_start() and alloc_counter_stop().
typedef struct {
    uint64_t malloc;
    uint64_t calloc;
    uint64_t realloc;
    uint64_t reallocarray;
    uint64_t posix_memalign;
    uint64_t aligned_alloc;
    uint64_t memalign;
    uint64_t valloc;
    uint64_t pvalloc;
    /// Not an allocation: reported, never counted by alloc_counter_allocations().
    uint64_t free;
} alloc_counts;

/// Zeroes this thread's counts and starts counting its calls.
void alloc_counter_start(void);

/// Stops counting on this thread and returns what it counted since alloc_counter_start().
alloc_counts alloc_counter_stop(void);

/// This thread's counts so far, counting or not.
alloc_counts alloc_counter_read(void);

/// The calls in `counts` that allocate (every field but `free`).
uint64_t alloc_counter_allocations(alloc_counts counts);

/// Calls that reached the interposer in the whole process since it started, on any thread and
/// whether counting or not (the dynamic linker's and the Swift runtime's start-up included).
/// Zero means the process's allocator calls do not reach this file at all.
uint64_t alloc_counter_calls_seen(void);

/// Called on every counted allocation, and does nothing: a breakpoint here shows who allocated
/// (gdb -ex 'break alloc_counter_hit' -ex run -ex bt --args .build/release/alloc-guard).
void alloc_counter_hit(void);

#endif
