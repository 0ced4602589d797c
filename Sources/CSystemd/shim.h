// The parts of libsystemd (Debian 252) and of Linux that swiped uses, plus small inline shims for
// what Swift cannot import directly: variadic functions, macros, and _GNU_SOURCE-only symbols.
#ifndef SWIPED_CSYSTEMD_SHIM_H
#define SWIPED_CSYSTEMD_SHIM_H
// No _GNU_SOURCE here: it would make these headers disagree with Swift's Glibc module (fd_set).
// The two GNU-only pieces we need are declared below by hand instead.
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <systemd/sd-journal.h>

extern int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags);

/// accept4 is hidden from Swift's Glibc module: accept non-blocking and close-on-exec at once.
static inline int swiped_accept(int fd) {
    return accept4(fd, 0, 0, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

/// SO_PEERCRED's struct ucred needs _GNU_SOURCE. Returns 0 or -errno.
static inline int swiped_peercred(int fd, int *pid, unsigned *uid, unsigned *gid) {
    struct { pid_t pid; uid_t uid; gid_t gid; } cred;  /* struct ucred, see socket(7) */
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) return -1;
    *pid = (int)cred.pid; *uid = (unsigned)cred.uid; *gid = (unsigned)cred.gid;
    return 0;
}

/// Supplementary groups of the peer (Linux ≥ 4.13). Returns the count, or -1.
static inline int swiped_peergroups(int fd, unsigned *groups, int max) {
    socklen_t len = (socklen_t)(sizeof(unsigned) * (unsigned)max);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0) return -1;
    return (int)(len / sizeof(unsigned));
}

extern int malloc_trim(size_t pad);

/// glibc's malloc_trim(0), from <malloc.h>, which Swift's Glibc module does not import: gives
/// the free pages of every malloc arena back to the system. Returns 1 when some were given back.
static inline int swiped_malloc_trim(void) { return malloc_trim(0); }

static inline int swiped_listen_fds_start(void) { return SD_LISTEN_FDS_START; }
#endif
