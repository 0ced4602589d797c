// The process's plumbing from libc that Swift cannot import: eventfd, an epoll pair, thread
// names. Only libc's headers: no library to link, so neither store's client library comes with it.
#ifndef SWIPED_CPLUMBING_SHIM_H
#define SWIPED_CPLUMBING_SHIM_H
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <unistd.h>

/// Glibc's module for Swift does not export <sys/eventfd.h>: a non-blocking, close-on-exec eventfd.
static inline int swiped_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

/// An epoll descriptor readable while `a` or `b` is (level-triggered), close-on-exec; -1 on
/// failure with errno set. One descriptor for an event loop to watch in place of two.
static inline int swiped_epoll_either(int a, int b) {
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) return -1;
    struct epoll_event ev = {.events = EPOLLIN};
    ev.data.fd = a;
    if (epoll_ctl(ep, EPOLL_CTL_ADD, a, &ev) != 0) goto fail;
    ev.data.fd = b;
    if (epoll_ctl(ep, EPOLL_CTL_ADD, b, &ev) != 0) goto fail;
    return ep;
fail:
    close(ep);
    return -1;
}

/// Names the calling thread (at most 15 bytes shown): prctl is variadic, pthread_setname_np is
/// GNU-only, and Foundation does not pass `Thread.name` to the kernel on Linux.
static inline int swiped_name_thread(const char *name) { return prctl(PR_SET_NAME, name, 0, 0, 0); }
#endif
