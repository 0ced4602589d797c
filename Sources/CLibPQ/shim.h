// libpq from Debian (libpq-dev): the PostgreSQL client library, plus what Swift cannot import.
#ifndef SWIPED_CLIBPQ_SHIM_H
#define SWIPED_CLIBPQ_SHIM_H
#include <libpq-fe.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

/// Glibc's module for Swift does not export <sys/eventfd.h>: a non-blocking, close-on-exec eventfd.
static inline int swiped_pq_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }
#endif
