/* echo: the machine's limit for a line protocol on a Unix socket. One thread, epoll
 * (level-triggered), non-blocking sockets; every complete line read is written back as is,
 * in the same order, one write per read. Usage: echo PATH  (removes PATH first; SIGTERM exits). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define BUF (64 * 1024)

struct conn {
    int fd;
    size_t partial;      /* bytes of an incomplete line kept in `in` */
    size_t out_len, out_head;
    char in[BUF];
    char *out;           /* pending bytes the peer has not taken yet */
    size_t out_cap;
    int want_out;        /* EPOLLOUT is being watched */
};

static void drop(int ep, struct conn *c) {
    epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    free(c->out);
    free(c);
}

/* Appends to the output queue and tries to write it; returns -1 when the peer is gone. */
static int queue_and_flush(int ep, struct conn *c, const char *p, size_t n) {
    if (n) {
        if (c->out_len + n > c->out_cap) {
            size_t cap = c->out_cap ? c->out_cap : 4096;
            while (cap < c->out_len + n) cap *= 2;
            char *o = realloc(c->out, cap);
            if (!o) return -1;
            c->out = o;
            c->out_cap = cap;
        }
        memcpy(c->out + c->out_len, p, n);
        c->out_len += n;
    }
    while (c->out_head < c->out_len) {
        ssize_t w = send(c->fd, c->out + c->out_head, c->out_len - c->out_head, MSG_NOSIGNAL);
        if (w > 0) { c->out_head += (size_t)w; continue; }
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && errno == EAGAIN) {
            if (!c->want_out) {
                struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = c};
                epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
                c->want_out = 1;
            }
            return 0;
        }
        return -1;
    }
    if (c->want_out) {
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
        c->want_out = 0;
    }
    c->out_len = c->out_head = 0;
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: echo PATH\n"); return 2; }
    signal(SIGPIPE, SIG_IGN);
    int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(argv[1]) >= sizeof a.sun_path) { fprintf(stderr, "echo: path too long\n"); return 2; }
    strcpy(a.sun_path, argv[1]);
    unlink(argv[1]);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) || listen(lfd, SOMAXCONN)) {
        perror("echo: listen");
        return 1;
    }
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event lev = {.events = EPOLLIN, .data.ptr = NULL};
    epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &lev);
    struct epoll_event evs[256];
    for (;;) {
        int n = epoll_wait(ep, evs, 256, -1);
        if (n < 0) { if (errno == EINTR) continue; perror("epoll_wait"); return 1; }
        for (int i = 0; i < n; i++) {
            struct conn *c = evs[i].data.ptr;
            if (!c) {
                int fd;
                while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
                    struct conn *nc = calloc(1, sizeof *nc);
                    nc->fd = fd;
                    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = nc};
                    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
                }
                continue;
            }
            if (evs[i].events & EPOLLOUT) {
                if (queue_and_flush(ep, c, NULL, 0) < 0) { drop(ep, c); continue; }
            }
            if (!(evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))) continue;
            ssize_t r = read(c->fd, c->in + c->partial, BUF - c->partial);
            if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
            if (r <= 0) { drop(ep, c); continue; }
            size_t have = c->partial + (size_t)r;
            /* Echo up to the last newline; keep the rest (a line longer than BUF is echoed as is). */
            char *last = memrchr(c->in, '\n', have);
            size_t whole = last ? (size_t)(last - c->in) + 1 : (have == BUF ? have : 0);
            if (queue_and_flush(ep, c, c->in, whole) < 0) { drop(ep, c); continue; }
            memmove(c->in, c->in + whole, have - whole);
            c->partial = have - whole;
        }
    }
}
