/*
 * floor.c — the floor client: the least a PostgreSQL benchmark client can do per transaction,
 * for measurement only (bench/floor.sh compares pgrig, pgbench and sysbench with it).
 *
 * Per connection it sends precomputed protocol bytes — the Bind/Describe/Execute/Sync that libpq
 * sends for an already-prepared statement, one round trip per statement exactly as pgbench
 * `-M prepared` and sysbench (server-side prepared statements) do — and reads until
 * ReadyForQuery, looking only at each message's type byte and length. No statistics, no
 * allocation after start-up: a pool of transactions with random parameters is built once
 * (shared, read-only) and each connection walks it from its own offset.
 *
 * Workloads (the same statements and round trips as the tools they mirror):
 *   select   pgbench -S -M prepared: 1 statement per transaction
 *   tpcb     pgbench (TPC-B-like) -M prepared: BEGIN, 5 statements, END = 7 round trips
 *   oltp     sysbench oltp_read_write: BEGIN, 10 point selects, 4 ranges, 2 updates,
 *            delete + insert, COMMIT = 20 round trips
 * I/O modes:
 *   threads  blocking sockets, one thread per connection: send, then read until 'Z'
 *   epoll    non-blocking sockets, --jobs threads each with one edge-triggered epoll
 *            instance: send, epoll_wait, read until a short read
 *
 * Prints one line: `transactions N errors E connections C seconds S tps T`. A transaction with
 * an ErrorResponse in it is counted in errors (on the server it is a rollback). Unix socket and
 * trust authentication only (the throwaway server of bench/floor.sh).
 *
 * Usage: floor --socket PATH --user U --db D --workload select|tpcb|oltp --io threads|epoll
 *              --clients N [--jobs J] --time S [--scale N] [--tables N] [--table-size N]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define POOL_TX 4096
#define RBUF 65536

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "floor: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

/* ---- growable byte buffer (start-up only) ---- */
struct buf { char *p; size_t len, cap; };

static void put(struct buf *b, const void *d, size_t n) {
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2 + 256;
        b->p = realloc(b->p, b->cap);
        if (!b->p) die("out of memory");
    }
    memcpy(b->p + b->len, d, n);
    b->len += n;
}
static void put8(struct buf *b, uint8_t v) { put(b, &v, 1); }
static void put16(struct buf *b, uint16_t v) { uint8_t x[2] = {v >> 8, v}; put(b, x, 2); }
static void put32(struct buf *b, uint32_t v) {
    uint8_t x[4] = {v >> 24, v >> 16, v >> 8, v};
    put(b, x, 4);
}
static void putz(struct buf *b, const char *s) { put(b, s, strlen(s) + 1); }
/* starts a message of type t; returns the offset of its length field */
static size_t msg_begin(struct buf *b, char t) { put8(b, t); put32(b, 0); return b->len - 4; }
static void msg_end(struct buf *b, size_t at) {
    uint32_t n = b->len - at;
    uint8_t *p = (uint8_t *)b->p + at;
    p[0] = n >> 24; p[1] = n >> 16; p[2] = n >> 8; p[3] = n;
}

/* ---- protocol messages ---- */
static void parse_msg(struct buf *b, const char *name, const char *sql) {
    size_t at = msg_begin(b, 'P');
    putz(b, name); putz(b, sql); put16(b, 0);
    msg_end(b, at);
}
static void sync_msg(struct buf *b) { put8(b, 'S'); put32(b, 4); }

/* Bind (text parameters) + Describe portal + Execute + Sync: what libpq's PQsendQueryPrepared
 * sends. params: nparams NUL-terminated strings. */
static void exec_prepared(struct buf *b, const char *name, int nparams, char **params) {
    size_t at = msg_begin(b, 'B');
    putz(b, ""); putz(b, name); put16(b, 0); put16(b, nparams);
    for (int i = 0; i < nparams; i++) { put32(b, strlen(params[i])); put(b, params[i], strlen(params[i])); }
    put16(b, 0);
    msg_end(b, at);
    at = msg_begin(b, 'D'); put8(b, 'P'); putz(b, ""); msg_end(b, at);
    at = msg_begin(b, 'E'); putz(b, ""); put32(b, 0); msg_end(b, at);
    sync_msg(b);
}

/* ---- random numbers (xorshift64*) ---- */
static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) { rng ^= rng >> 12; rng ^= rng << 25; rng ^= rng >> 27; return rng * 2685821657736338717ull; }
static long uniform(long lo, long hi) { return lo + (long)(rnd() % (uint64_t)(hi - lo + 1)); }

/* ---- workloads: prepared statements and a pool of transactions ---- */
struct opts {
    const char *socket, *user, *db, *workload, *io;
    int clients, jobs, seconds, scale, tables, table_size;
};

struct pool {
    struct buf bytes;       /* every round trip's messages, back to back */
    uint32_t *off, *len;    /* per round trip: tx * nseg + k */
    int nseg;
    struct buf prepare;     /* Parse messages + Sync, sent once per connection */
};

static void seg_end(struct pool *p, size_t *start, int i) {
    p->off[i] = *start;
    p->len[i] = p->bytes.len - *start;
    *start = p->bytes.len;
}

static char *num(char *s, long v) { sprintf(s, "%ld", v); return s; }

static void rand_chars(char *s, int groups, int digits) {
    /* sysbench's ###########-###... template: groups of 11 digits joined by '-' */
    int k = 0;
    for (int g = 0; g < groups; g++) {
        if (g) s[k++] = '-';
        for (int d = 0; d < digits; d++) s[k++] = '0' + (char)uniform(0, 9);
    }
    s[k] = 0;
}

static void build_pgbench(struct pool *p, const struct opts *o, int tpcb) {
    static const char *tpcb_sql[] = {
        "BEGIN;",
        "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2;",
        "SELECT abalance FROM pgbench_accounts WHERE aid = $1;",
        "UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2;",
        "UPDATE pgbench_branches SET bbalance = bbalance + $1 WHERE bid = $2;",
        "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP);",
        "END;",
    };
    char a[24], b[24], t[24], d[24], name[8];
    p->nseg = tpcb ? 7 : 1;
    if (tpcb)
        for (int i = 0; i < 7; i++) { sprintf(name, "P%d", i); parse_msg(&p->prepare, name, tpcb_sql[i]); }
    else
        parse_msg(&p->prepare, "P0", "SELECT abalance FROM pgbench_accounts WHERE aid = $1;");
    sync_msg(&p->prepare);
    p->off = malloc(sizeof(uint32_t) * POOL_TX * p->nseg);
    p->len = malloc(sizeof(uint32_t) * POOL_TX * p->nseg);
    size_t start = 0;
    for (int x = 0; x < POOL_TX; x++) {
        num(a, uniform(1, 100000L * o->scale));
        if (!tpcb) { char *v[] = {a}; exec_prepared(&p->bytes, "P0", 1, v); seg_end(p, &start, x); continue; }
        num(b, uniform(1, o->scale)); num(t, uniform(1, 10L * o->scale)); num(d, uniform(-5000, 5000));
        char *s1[] = {d, a}, *s2[] = {a}, *s3[] = {d, t}, *s4[] = {d, b}, *s5[] = {t, b, a, d};
        char **args[] = {NULL, s1, s2, s3, s4, s5, NULL};
        int nargs[] = {0, 2, 1, 2, 2, 4, 0};
        for (int i = 0; i < 7; i++) {
            sprintf(name, "P%d", i);
            exec_prepared(&p->bytes, name, nargs[i], args[i]);
            seg_end(p, &start, x * 7 + i);
        }
    }
}

static void build_oltp(struct pool *p, const struct opts *o) {
    static const char *sql[] = {
        "SELECT c FROM sbtest%d WHERE id=$1",
        "SELECT c FROM sbtest%d WHERE id BETWEEN $1 AND $2",
        "SELECT SUM(k) FROM sbtest%d WHERE id BETWEEN $1 AND $2",
        "SELECT c FROM sbtest%d WHERE id BETWEEN $1 AND $2 ORDER BY c",
        "SELECT DISTINCT c FROM sbtest%d WHERE id BETWEEN $1 AND $2 ORDER BY c",
        "UPDATE sbtest%d SET k=k+1 WHERE id=$1",
        "UPDATE sbtest%d SET c=$1 WHERE id=$2",
        "DELETE FROM sbtest%d WHERE id=$1",
        "INSERT INTO sbtest%d (id, k, c, pad) VALUES ($1, $2, $3, $4)",
    };
    char q[128], name[48];
    p->nseg = 20;
    parse_msg(&p->prepare, "B", "BEGIN");
    parse_msg(&p->prepare, "C", "COMMIT");
    for (int t = 1; t <= o->tables; t++)
        for (int s = 0; s < 9; s++) {
            snprintf(q, sizeof q, sql[s], t);
            sprintf(name, "S%d_%d", t, s);
            parse_msg(&p->prepare, name, q);
        }
    sync_msg(&p->prepare);
    p->off = malloc(sizeof(uint32_t) * POOL_TX * 20);
    p->len = malloc(sizeof(uint32_t) * POOL_TX * 20);
    size_t start = 0;
    char i1[24], i2[24], c[128], pad[64];
    for (int x = 0; x < POOL_TX; x++) {
        int seg = x * 20;
        exec_prepared(&p->bytes, "B", 0, NULL); seg_end(p, &start, seg++);
        int t = uniform(1, o->tables);
        for (int i = 0; i < 10; i++) {   /* point selects: one table, ten ids */
            char *v[] = {num(i1, uniform(1, o->table_size))};
            sprintf(name, "S%d_0", t); exec_prepared(&p->bytes, name, 1, v); seg_end(p, &start, seg++);
        }
        for (int s = 1; s <= 4; s++) {   /* ranges of 100 ids, each on its own table */
            long id = uniform(1, o->table_size);
            char *v[] = {num(i1, id), num(i2, id + 99)};
            sprintf(name, "S%ld_%d", uniform(1, o->tables), s);
            exec_prepared(&p->bytes, name, 2, v); seg_end(p, &start, seg++);
        }
        { char *v[] = {num(i1, uniform(1, o->table_size))};
          sprintf(name, "S%ld_5", uniform(1, o->tables)); exec_prepared(&p->bytes, name, 1, v); seg_end(p, &start, seg++); }
        { rand_chars(c, 10, 11); char *v[] = {c, num(i1, uniform(1, o->table_size))};
          sprintf(name, "S%ld_6", uniform(1, o->tables)); exec_prepared(&p->bytes, name, 2, v); seg_end(p, &start, seg++); }
        t = uniform(1, o->tables);
        long id = uniform(1, o->table_size);
        { char *v[] = {num(i1, id)}; sprintf(name, "S%d_7", t); exec_prepared(&p->bytes, name, 1, v); seg_end(p, &start, seg++); }
        { rand_chars(c, 10, 11); rand_chars(pad, 5, 11);
          char *v[] = {num(i1, id), num(i2, uniform(1, o->table_size)), c, pad};
          sprintf(name, "S%d_8", t); exec_prepared(&p->bytes, name, 4, v); seg_end(p, &start, seg++); }
        exec_prepared(&p->bytes, "C", 0, NULL); seg_end(p, &start, seg++);
    }
}

/* ---- the response reader: message types and lengths only ---- */
struct conn {
    int fd;
    uint32_t tx;      /* index into the pool */
    int seg;          /* round trip within the transaction */
    int hdr_have;     /* bytes of the current 5-byte header seen */
    uint8_t hdr[5];
    uint32_t skip;    /* body bytes of the current message still to skip */
    int ready;        /* ReadyForQuery messages seen and not yet consumed */
    int failed;       /* an ErrorResponse in the current transaction */
    uint64_t ok, err;
};

static void feed(struct conn *c, const uint8_t *p, size_t n) {
    while (n) {
        if (c->skip) {
            size_t k = n < c->skip ? n : c->skip;
            p += k; n -= k; c->skip -= k;
            continue;
        }
        c->hdr[c->hdr_have++] = *p++; n--;
        if (c->hdr_have < 5) continue;
        uint32_t len = (uint32_t)c->hdr[1] << 24 | c->hdr[2] << 16 | c->hdr[3] << 8 | c->hdr[4];
        if (len < 4) die("malformed message from the server (type %c, length %u)", c->hdr[0], len);
        c->skip = len - 4;
        c->hdr_have = 0;
        if (c->hdr[0] == 'Z') c->ready++;
        else if (c->hdr[0] == 'E') c->failed = 1;
    }
}

static void send_all(int fd, const char *p, size_t n) {
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0) {
            if (errno == EINTR) continue;
            die("send: %s", strerror(errno));
        }
        p += k; n -= k;
    }
}

/* blocking: reads until one ReadyForQuery has arrived */
static void wait_ready(struct conn *c, uint8_t *rbuf) {
    while (!c->ready) {
        ssize_t n = recv(c->fd, rbuf, RBUF, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) die("recv: %s", n ? strerror(errno) : "server closed the connection");
        feed(c, rbuf, n);
    }
    c->ready--;
}

static const struct opts *O;
static struct pool P;
static volatile int stop_flag; /* set once by main; read at transaction ends */
static pthread_barrier_t start_barrier;

static int connect_one(const struct opts *o, uint8_t *rbuf) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(o->socket) >= sizeof sa.sun_path) die("socket path too long: %s", o->socket);
    strcpy(sa.sun_path, o->socket);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) die("connect %s: %s", o->socket, strerror(errno));
    struct buf b = {0};
    put32(&b, 0); put32(&b, 196608);
    putz(&b, "user"); putz(&b, o->user); putz(&b, "database"); putz(&b, o->db); put8(&b, 0);
    msg_end(&b, 0);
    struct conn c = {.fd = fd};
    send_all(fd, b.p, b.len);
    wait_ready(&c, rbuf);
    if (c.failed) die("connection refused by the server (is trust authentication on %s?)", o->socket);
    send_all(fd, P.prepare.p, P.prepare.len);
    wait_ready(&c, rbuf);
    if (c.failed) die("preparing the statements failed (are the %s tables there?)", o->workload);
    free(b.p);
    return fd;
}

static void end_tx(struct conn *c) {
    if (c->failed) c->err++; else c->ok++;
    c->failed = 0;
    c->tx = (c->tx + 1) % POOL_TX;
    c->seg = 0;
}

static void send_seg(struct conn *c) {
    uint32_t i = c->tx * P.nseg + c->seg;
    send_all(c->fd, P.bytes.p + P.off[i], P.len[i]);
}

static void terminate(int fd) {
    static const char x[5] = {'X', 0, 0, 0, 4};
    send_all(fd, x, 5);
    close(fd);
}

struct job { int first, n; struct conn *conns; };

static void *run_blocking(void *arg) {
    struct job *j = arg;
    struct conn *c = &j->conns[j->first];
    static __thread uint8_t rbuf[RBUF];
    pthread_barrier_wait(&start_barrier);
    while (!stop_flag) {
        for (c->seg = 0; c->seg < P.nseg; c->seg++) { send_seg(c); wait_ready(c, rbuf); }
        end_tx(c);
    }
    terminate(c->fd);
    return NULL;
}

/* epoll: reads a ready socket until a short read; on each ReadyForQuery sends the next round
 * trip (or, after a transaction when stopping, Terminate). Returns 0 once the connection ends. */
static int on_readable(struct conn *c, uint8_t *rbuf) {
    for (;;) {
        ssize_t n = recv(c->fd, rbuf, RBUF, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) break;
        if (n <= 0) die("recv: %s", n ? strerror(errno) : "server closed the connection");
        feed(c, rbuf, n);
        if (n < RBUF) break;
    }
    while (c->ready) {
        c->ready--;
        if (++c->seg == P.nseg) {
            end_tx(c);
            if (stop_flag) { terminate(c->fd); return 0; }
        }
        send_seg(c);
    }
    return 1;
}

static void *run_epoll(void *arg) {
    struct job *j = arg;
    static __thread uint8_t rbuf[RBUF];
    struct epoll_event evs[256];
    int ep = epoll_create1(EPOLL_CLOEXEC), live = j->n;
    if (ep < 0) die("epoll_create1: %s", strerror(errno));
    for (int i = 0; i < j->n; i++) {
        struct conn *c = &j->conns[j->first + i];
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | EPOLLET, .data.ptr = c};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) < 0) die("epoll_ctl: %s", strerror(errno));
    }
    pthread_barrier_wait(&start_barrier);
    for (int i = 0; i < j->n; i++) send_seg(&j->conns[j->first + i]);
    while (live) {
        int n = epoll_wait(ep, evs, 256, -1);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) die("epoll_wait: %s", strerror(errno));
        for (int i = 0; i < n; i++)
            if (!on_readable(evs[i].data.ptr, rbuf)) live--;
    }
    close(ep);
    return NULL;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int int_arg(const char *name, const char *v, int min) {
    char *end;
    long x = strtol(v, &end, 10);
    if (*v == 0 || *end || x < min || x > 1000000000) die("%s: expected an integer >= %d, got \"%s\"", name, min, v);
    return (int)x;
}

static void parse_args(struct opts *o, int argc, char **argv) {
    *o = (struct opts){.jobs = 1, .seconds = 5, .clients = 1, .scale = 1, .tables = 4, .table_size = 100000, .io = "threads"};
    for (int i = 1; i < argc; i++) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) die("%s: missing value", k);
        i++;
        if (!strcmp(k, "--socket")) o->socket = v;
        else if (!strcmp(k, "--user")) o->user = v;
        else if (!strcmp(k, "--db")) o->db = v;
        else if (!strcmp(k, "--workload")) o->workload = v;
        else if (!strcmp(k, "--io")) o->io = v;
        else if (!strcmp(k, "--clients")) o->clients = int_arg(k, v, 1);
        else if (!strcmp(k, "--jobs")) o->jobs = int_arg(k, v, 1);
        else if (!strcmp(k, "--time")) o->seconds = int_arg(k, v, 1);
        else if (!strcmp(k, "--scale")) o->scale = int_arg(k, v, 1);
        else if (!strcmp(k, "--tables")) o->tables = int_arg(k, v, 1);
        else if (!strcmp(k, "--table-size")) o->table_size = int_arg(k, v, 1);
        else die("unknown option %s", k);
    }
    if (!o->socket || !o->user || !o->db || !o->workload) die("--socket, --user, --db and --workload are required");
    if (strcmp(o->io, "threads") && strcmp(o->io, "epoll")) die("--io: expected threads or epoll, got \"%s\"", o->io);
    if (o->jobs > o->clients) o->jobs = o->clients;
}

int main(int argc, char **argv) {
    struct opts o;
    parse_args(&o, argc, argv);
    O = &o;
    if (!strcmp(o.workload, "select")) build_pgbench(&P, &o, 0);
    else if (!strcmp(o.workload, "tpcb")) build_pgbench(&P, &o, 1);
    else if (!strcmp(o.workload, "oltp")) build_oltp(&P, &o);
    else die("--workload: expected select, tpcb or oltp, got \"%s\"", o.workload);
    int epoll = !strcmp(o.io, "epoll");
    int nthreads = epoll ? o.jobs : o.clients;
    struct conn *conns = calloc(o.clients, sizeof *conns);
    static uint8_t rbuf[RBUF];
    for (int i = 0; i < o.clients; i++) {
        conns[i].fd = connect_one(&o, rbuf);
        conns[i].tx = (uint32_t)(i * (POOL_TX / o.clients)) % POOL_TX;
    }
    struct job *jobs = calloc(nthreads, sizeof *jobs);
    pthread_t *th = calloc(nthreads, sizeof *th);
    pthread_barrier_init(&start_barrier, NULL, nthreads + 1);
    for (int t = 0, first = 0; t < nthreads; t++) {
        int n = o.clients / nthreads + (t < o.clients % nthreads);
        jobs[t] = (struct job){first, n, conns};
        if (epoll)
            for (int i = first; i < first + n; i++) {
                int fl = fcntl(conns[i].fd, F_GETFL);
                if (fl < 0 || fcntl(conns[i].fd, F_SETFL, fl | O_NONBLOCK) < 0) die("fcntl: %s", strerror(errno));
            }
        first += n;
        if (pthread_create(&th[t], NULL, epoll ? run_epoll : run_blocking, &jobs[t])) die("pthread_create failed");
    }
    pthread_barrier_wait(&start_barrier);
    double t0 = now();
    struct timespec d = {o.seconds, 0};
    while (nanosleep(&d, &d) < 0 && errno == EINTR) {}
    stop_flag = 1;
    for (int t = 0; t < nthreads; t++) pthread_join(th[t], NULL);
    double secs = now() - t0;
    uint64_t ok = 0, err = 0;
    for (int i = 0; i < o.clients; i++) { ok += conns[i].ok; err += conns[i].err; }
    printf("transactions %llu errors %llu connections %d seconds %.3f tps %.1f\n",
           (unsigned long long)ok, (unsigned long long)err, o.clients, secs, (ok + err) / secs);
    return 0;
}
