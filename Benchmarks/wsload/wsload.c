// wsload: a WebSocket load generator for swiped's web listener (issue 44), as Benchmarks/loadgen
// is for the Unix socket. One thread, epoll, non-blocking sockets; the RFC 6455 handshake and
// masked text frames written by hand (a client needs only those); connections spread over
// several loopback source addresses (127.0.0.1, .2, …) so that the ports of one do not run out
// (about 28,000 each). Every loop is bounded by a deadline: nothing waits for ever.
//
//   wsload --port P --clients N [--first-source I] [--sources K] [--subscribe] MODE
//     --hold S [--events K]
//                       open N, greet (hello) and subscribe each; print when all are; for each
//                       of the first K movie events (default 1), print when the first and the
//                       last connection had it (CLOCK_MONOTONIC ns, comparable across
//                       processes) once every connection had it; keep them open until S
//                       seconds have passed since all were ready, then exit
//     --storm           open N at once; print how long until every one had its hello, and how
//                       many failed (refused, reset, 503)
//     --drag S --window W [--warmup S]
//                       N connections each keeping W drags in flight (the line loadgen's
//                       `--op drag` sends, masked); after a warm-up (default 1 s, as loadgen's)
//                       count S seconds of replies; print the replies per second and the round
//                       trips' percentiles
//   wsload --ws-unix PATH … (instead of --port): the WebSockets over an AF_UNIX socket
//   wsload --unix PATH --toggle MOVIE
//                       one toggle over the Unix socket; print the time it was sent (ns)
//
// Output: one line of key=value pairs per result, for Benchmarks/websockets.sh.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *what) {
    perror(what);
    exit(2);
}

enum state { CONNECTING, HANDSHAKE, HELLO, SUBSCRIBING, READY, DEAD };

struct conn {
    int fd;
    enum state state;
    char in[8192];
    size_t have;
    unsigned events;       // movie events it had
    uint64_t sent_ns[64];  // drag: when each request in flight was sent, oldest at `oldest`
    unsigned oldest;
    unsigned char out[8192];  // frames to write, written once per wake-up (`flush`)
    size_t outlen;
    unsigned inflight;
};

static struct conn *conns;
static int nconns, epfd;
static const char *host = "127.0.0.1";
static int port;
static int subscribe_after_hello;
static long greeted, ready, failed, replies;
#define MAX_EVENTS 16
static int want_events = 1;
static long events[MAX_EVENTS];  // connections that had event k
static uint64_t first_event_ns[MAX_EVENTS], last_event_ns[MAX_EVENTS];
static uint64_t *latencies;
static size_t nlat, caplat;

static void send_all(struct conn *c, const void *buf, size_t len);

// Frames wait in `out` and go in one write per wake-up, as a browser's do when a page sends
// several messages in one task: one system call for many requests, on both sides.
static void queue(struct conn *c, const void *buf, size_t len) {
    if (c->outlen + len > sizeof c->out) {
        send_all(c, c->out, c->outlen);
        c->outlen = 0;
    }
    memcpy(c->out + c->outlen, buf, len);
    c->outlen += len;
}

static void flush(struct conn *c) {
    if (c->outlen && c->state != DEAD) send_all(c, c->out, c->outlen);
    c->outlen = 0;
}

static void send_all(struct conn *c, const void *buf, size_t len) {
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(c->fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {  // the send buffer of a fresh connection always takes a request: a dead peer
            c->state = DEAD;
            failed++;
            return;
        }
        p += n;
        len -= (size_t)n;
    }
}

// A masked text frame as a browser sends it (RFC 6455, 5.2, 5.3).
static void send_text(struct conn *c, const char *text) {
    size_t len = strlen(text);
    unsigned char frame[16 + 512];
    if (len > 512) {
        fprintf(stderr, "wsload: a request longer than 512 bytes\n");
        exit(2);
    }
    size_t at = 0;
    frame[at++] = 0x81;
    if (len < 126) {
        frame[at++] = 0x80 | (unsigned char)len;
    } else {
        frame[at++] = 0x80 | 126;
        frame[at++] = (unsigned char)(len >> 8);
        frame[at++] = (unsigned char)len;
    }
    const unsigned char mask[4] = {0x37, 0xfa, 0x21, 0x3d};
    memcpy(frame + at, mask, 4);
    at += 4;
    for (size_t i = 0; i < len; i++) frame[at + i] = (unsigned char)text[i] ^ mask[i % 4];
    queue(c, frame, at + len);
}

// The drag request, the line loadgen sends over the Unix socket (so that both lanes do the same
// work, and only the transport differs), as a browser's masked frame: made once (`drag_frame`),
// then copied into each connection's output per request.
static const char drag_line[] = "{\"op\":\"drag\",\"movie\":\"matrix\",\"dx\":-60}";
static unsigned char drag_frame[16 + sizeof drag_line];
static size_t drag_frame_len;

static void make_drag_frame(void) {
    size_t len = strlen(drag_line);
    const unsigned char mask[4] = {0x37, 0xfa, 0x21, 0x3d};
    drag_frame[0] = 0x81;
    drag_frame[1] = 0x80 | (unsigned char)len;
    memcpy(drag_frame + 2, mask, 4);
    for (size_t i = 0; i < len; i++) drag_frame[6 + i] = (unsigned char)drag_line[i] ^ mask[i % 4];
    drag_frame_len = 6 + len;
}

// Replies come in request order on each connection: the oldest send time is the reply's.
static void send_drag(struct conn *c, uint64_t now) {
    c->sent_ns[(c->oldest + c->inflight) % 64] = now;
    c->inflight++;
    queue(c, drag_frame, drag_frame_len);
}

static void record_latency(uint64_t ns) {
    if (nlat == caplat) {
        caplat = caplat ? caplat * 2 : 1 << 20;
        latencies = realloc(latencies, caplat * sizeof *latencies);
        if (!latencies) die("realloc");
    }
    latencies[nlat++] = ns;
}

static int drag_window;
// Drag mode: replies are counted from `measure_from` (after the warm-up) to `drag_until`, the
// time of the wake-up that read them (one clock reading per wake-up, as loadgen's).
static uint64_t measure_from, drag_until, wake_ns;
static int measuring(uint64_t t) { return t >= measure_from && t < drag_until; }

// One whole text message from the server (unmasked, RFC 6455: a server never masks).
static void message(struct conn *c, const char *text, size_t len) {
    if (c->state == HELLO) {
        if (len < 16 || memcmp(text, "{\"event\":\"hello\"", 16) != 0) {
            c->state = DEAD;  // a bye (too many clients) instead of hello
            failed++;
            return;
        }
        greeted++;
        if (subscribe_after_hello) {
            c->state = SUBSCRIBING;
            send_text(c, "{\"op\":\"subscribe\"}");
        } else {
            c->state = READY;
            ready++;
            uint64_t t = now_ns();
            for (int i = 0; i < drag_window; i++) send_drag(c, t);
        }
        return;
    }
    if (c->state == SUBSCRIBING) {
        if (len > 6 && memcmp(text, "{\"ok\":", 6) == 0) {
            c->state = READY;
            ready++;
        }
        return;
    }
    if (len >= 8 && memcmp(text, "{\"event\"", 8) == 0 && !(len > 17 && memcmp(text, "{\"event\":\"movie\"", 16) == 0)) {
        return;  // another event (not a reply), as loadgen counts them
    }
    if (len > 17 && memcmp(text, "{\"event\":\"movie\"", 16) == 0) {
        unsigned k = c->events++;
        if (k < MAX_EVENTS) {
            uint64_t t = now_ns();
            events[k]++;
            if (!first_event_ns[k] || t < first_event_ns[k]) first_event_ns[k] = t;
            if (t > last_event_ns[k]) last_event_ns[k] = t;
        }
        return;
    }
    if (c->inflight > 0) {
        // Any other message is a reply (a drag's: {"ok":true,…} or an error).
        uint64_t t = wake_ns;
        if (measuring(t)) {
            record_latency(t - c->sent_ns[c->oldest]);
            replies++;
        }
        c->oldest = (c->oldest + 1) % 64;
        c->inflight--;
        if (drag_window && t < drag_until) send_drag(c, t);
    }
}

static void readable(struct conn *c) {
    for (;;) {
        ssize_t n = read(c->fd, c->in + c->have, sizeof c->in - c->have);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) break;
        if (n <= 0) {
            if (c->state != READY || (int)c->events < want_events) failed++;
            c->state = DEAD;
            close(c->fd);
            return;
        }
        size_t room = sizeof c->in - c->have;
        c->have += (size_t)n;
        if (c->state == HANDSHAKE) {
            char *end = memmem(c->in, c->have, "\r\n\r\n", 4);
            if (!end) continue;
            if (c->have < 12 || memcmp(c->in, "HTTP/1.1 101", 12) != 0) {
                c->state = DEAD;  // 503 past --max-clients, 403 for an origin
                failed++;
                close(c->fd);
                return;
            }
            size_t head = (size_t)(end + 4 - c->in);
            memmove(c->in, c->in + head, c->have - head);
            c->have -= head;
            c->state = HELLO;
        }
        // Whole frames; a long reply (a list) may come in several: only their ends matter here.
        size_t at = 0;
        while (c->have - at >= 2) {
            unsigned char *p = (unsigned char *)c->in + at;
            size_t len = p[1] & 0x7f, hdr = 2;
            if (len == 126) {
                if (c->have - at < 4) break;
                len = (size_t)p[2] << 8 | p[3];
                hdr = 4;
            } else if (len == 127) {
                if (c->have - at < 10) break;
                len = 0;
                for (int i = 2; i < 10; i++) len = len << 8 | p[i];
                hdr = 10;
            }
            if (hdr + len > sizeof c->in) {  // longer than the buffer: skip it as it streams
                fprintf(stderr, "wsload: a frame of %zu bytes\n", len);
                exit(2);
            }
            if (c->have - at < hdr + len) break;
            unsigned op = p[0] & 0x0f;
            if (op == 0x9) {  // ping: answer it, as a browser does
                unsigned char pong[2 + 4 + 125];
                pong[0] = 0x8a;
                pong[1] = 0x80 | (unsigned char)len;
                memset(pong + 2, 0, 4);
                memcpy(pong + 6, p + hdr, len);
                queue(c, pong, 6 + len);
            } else if (op == 0x1 || op == 0x0) {
                message(c, (const char *)p + hdr, len);
            }
            at += hdr + len;
        }
        memmove(c->in, c->in + at, c->have - at);
        c->have -= at;
        // A read that did not fill the room drained the socket: no second read to see EAGAIN
        // (the next bytes bring the next edge), one system call a wake-up, as loadgen's.
        if ((size_t)n < room || c->state == DEAD) break;
    }
}

static void handshake(struct conn *c) {
    char req[256];
    int n = snprintf(req, sizeof req,
                     "GET /ws HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
                     host, port);
    c->state = HANDSHAKE;
    send_all(c, req, (size_t)n);
}

static void pump(int timeout_ms);

// --ws-unix PATH: the WebSockets over an AF_UNIX stream socket (a web listener systemd passed on
// a path, as a proxy on the same machine may reach it), to tell the transport's cost from the
// framing's.
static const char *ws_unix_path;

static int connect_unix(void) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) die("socket (AF_UNIX)");
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", ws_unix_path);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0 && errno != EINPROGRESS && errno != EAGAIN) die("connect (--ws-unix)");
    return fd;
}

static void open_all(int first_source, int sources) {
    int per = (nconns + sources - 1) / sources;
    for (int i = 0; i < nconns; i++) {
        struct conn *c = &conns[i];
        if (ws_unix_path) {
            c->fd = connect_unix();
            c->state = CONNECTING;
            struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLET, .data.u32 = (uint32_t)i};
            if (epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev) < 0) die("epoll_ctl");
            if (i % 64 == 63) pump(0);
            continue;
        }
        c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (c->fd < 0) die("socket (raise the file limit, or spread over processes)");
        int one = 1;
        setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        // The port is chosen at connect, per destination: one source address then serves
        // 28,000 connections to each daemon, not 28,000 in all.
        setsockopt(c->fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
        struct sockaddr_in src = {.sin_family = AF_INET};
        char name[32];
        snprintf(name, sizeof name, "127.0.0.%d", first_source + i / per);
        inet_pton(AF_INET, name, &src.sin_addr);
        if (bind(c->fd, (struct sockaddr *)&src, sizeof src) < 0) die("bind (a source address)");
        struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        inet_pton(AF_INET, host, &dst.sin_addr);
        if (connect(c->fd, (struct sockaddr *)&dst, sizeof dst) < 0 && errno != EINPROGRESS) {
            c->state = DEAD;
            failed++;
            close(c->fd);
            continue;
        }
        c->state = CONNECTING;
        struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLET, .data.u32 = (uint32_t)i};
        if (epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev) < 0) die("epoll_ctl");
        // As browsers do, each sends its head as soon as it is connected: between batches of
        // connects, the ones already connected are served (else their heads wait until every
        // socket is made, seconds for 19,000, and the daemon rightly evicts them as slow).
        if (i % 64 == 63) pump(0);
    }
}

static void run_until(uint64_t deadline, int (*done)(void)) {
    while (now_ns() < deadline && !done()) pump(50);
}

static void pump(int timeout_ms) {
    struct epoll_event evs[1024];
    {
        int n = epoll_wait(epfd, evs, 1024, timeout_ms);
        if (n < 0 && errno == EINTR) return;
        if (n < 0) die("epoll_wait");
        wake_ns = now_ns();
        for (int k = 0; k < n; k++) {
            struct conn *c = &conns[evs[k].data.u32];
            if (c->state == DEAD) continue;
            if (evs[k].events & (EPOLLERR | EPOLLHUP) && c->state == CONNECTING) {
                c->state = DEAD;
                failed++;
                close(c->fd);
                continue;
            }
            if (c->state == CONNECTING && evs[k].events & EPOLLOUT) handshake(c);
            if (evs[k].events & EPOLLIN) readable(c);
            if (c->state != DEAD) flush(c);
        }
    }
}

static int all_ready(void) { return ready + failed >= nconns; }
static int all_events(void) { return events[want_events - 1] + failed >= nconns; }
static int never(void) { return 0; }

static int cmp(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static double pct(double p) {
    if (!nlat) return 0;
    size_t i = (size_t)(p * (double)(nlat - 1));
    return (double)latencies[i] / 1000.0;
}

static int toggle(const char *path, const char *movie) {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) die("connect (the Unix socket)");
    char buf[4096];
    if (read(fd, buf, sizeof buf) <= 0) die("read hello");
    char line[256];
    int n = snprintf(line, sizeof line, "{\"op\":\"toggle-watched\",\"movie\":\"%s\"}\n", movie);
    uint64_t t0 = now_ns();
    if (write(fd, line, (size_t)n) != n) die("write");
    ssize_t r = read(fd, buf, sizeof buf - 1);
    uint64_t t1 = now_ns();
    if (r <= 0) die("read reply");
    buf[r] = 0;
    printf("toggle sent_ns=%llu acked_ns=%llu ok=%d\n", (unsigned long long)t0, (unsigned long long)t1,
           strstr(buf, "\"ok\":true") != NULL);
    return 0;
}

int main(int argc, char **argv) {
    int first_source = 1, sources = 0, storm = 0, window = 16;
    double hold = 0, drag = 0, warmup = 1;
    const char *unix_path = NULL, *toggle_movie = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--port") && v) port = atoi(argv[++i]);
        else if (!strcmp(a, "--host") && v) host = argv[++i];
        else if (!strcmp(a, "--clients") && v) nconns = atoi(argv[++i]);
        else if (!strcmp(a, "--first-source") && v) first_source = atoi(argv[++i]);
        else if (!strcmp(a, "--sources") && v) sources = atoi(argv[++i]);
        else if (!strcmp(a, "--subscribe")) subscribe_after_hello = 1;
        else if (!strcmp(a, "--hold") && v) hold = atof(argv[++i]);
        else if (!strcmp(a, "--storm")) storm = 1;
        else if (!strcmp(a, "--drag") && v) drag = atof(argv[++i]);
        else if (!strcmp(a, "--window") && v) window = atoi(argv[++i]);
        else if (!strcmp(a, "--warmup") && v) warmup = atof(argv[++i]);
        else if (!strcmp(a, "--events") && v) want_events = atoi(argv[++i]);
        else if (!strcmp(a, "--unix") && v) unix_path = argv[++i];
        else if (!strcmp(a, "--ws-unix") && v) ws_unix_path = argv[++i];
        else if (!strcmp(a, "--toggle") && v) toggle_movie = argv[++i];
        else {
            fprintf(stderr, "wsload: unknown or incomplete option %s (see the comment at the top of wsload.c)\n", a);
            return 2;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (unix_path && toggle_movie) return toggle(unix_path, toggle_movie);
    if (ws_unix_path && !port) port = 80;  // only the Host header's
    if (!port || nconns <= 0 || (hold <= 0 && !storm && drag <= 0) || window < 1 || window > 64 ||
        want_events < 1 || want_events > MAX_EVENTS) {
        fprintf(stderr, "wsload: needs --port, --clients N and one of --hold S, --storm, --drag S (window 1-64)\n");
        return 2;
    }
    // The hard limit is the most a process may hold (no CAP_SYS_RESOURCE here: 20,000).
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    if (!sources) sources = nconns / 20000 + 1;
    if (first_source + sources - 1 > 254) {
        fprintf(stderr, "wsload: source addresses past 127.0.0.254\n");
        return 2;
    }
    conns = calloc((size_t)nconns, sizeof *conns);
    if (!conns) die("calloc");
    epfd = epoll_create1(EPOLL_CLOEXEC);
    if (epfd < 0) die("epoll_create1");
    uint64_t start = now_ns();
    if (drag > 0) {
        drag_window = window;
        make_drag_frame();
        measure_from = drag_until = UINT64_MAX;  // requests go on, replies are not counted yet
    }
    open_all(first_source, sources);
    run_until(start + 120ull * 1000000000ull, all_ready);
    uint64_t all = now_ns();
    printf("ready clients=%d ready=%ld greeted=%ld failed=%ld seconds=%.3f ready_ns=%llu\n", nconns, ready, greeted,
           failed, (double)(all - start) / 1e9, (unsigned long long)all);
    if (storm) return ready == nconns ? 0 : 1;
    if (drag > 0) {
        measure_from = now_ns() + (uint64_t)(warmup * 1e9);
        drag_until = measure_from + (uint64_t)(drag * 1e9);
        run_until(drag_until, never);
        double secs = (double)(drag_until - measure_from) / 1e9;
        qsort(latencies, nlat, sizeof *latencies, cmp);
        printf("drag clients=%d window=%d replies=%ld rps=%.0f p50_us=%.1f p99_us=%.1f p999_us=%.1f failed=%ld\n",
               nconns, window, replies, (double)replies / secs, pct(0.5), pct(0.99), pct(0.999), failed);
        return failed ? 1 : 0;
    }
    run_until(all + (uint64_t)(hold * 1e9), all_events);
    for (int k = 0; k < want_events; k++) {
        printf("event k=%d clients=%d had=%ld first_ns=%llu last_ns=%llu failed=%ld\n", k, nconns, events[k],
               (unsigned long long)first_event_ns[k], (unsigned long long)last_event_ns[k], failed);
    }
    run_until(all + (uint64_t)(hold * 1e9), never);
    return 0;
}
