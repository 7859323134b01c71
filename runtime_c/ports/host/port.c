/*
 * Host port: the runtime as a POSIX process speaking the RPC on stdin/stdout,
 * or, when the environment variable AOT_HOST_LISTEN is set to a TCP port
 * number (0: any free port), on the first connection to 127.0.0.1:PORT; the
 * port in use is printed on stderr as "aot-host: listening on 127.0.0.1:PORT".
 * Used by fast tests, fuzzing and the host runner; timings are nanoseconds of
 * CLOCK_MONOTONIC, so they are noisy and only good for smoke tests.
 */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "aot/platform.h"

static uint8_t in_buf[4096];
static size_t in_len;
static size_t in_pos;
static uint64_t timer_origin;
static int fd_in = 0;
static int fd_out = 1;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Listen on 127.0.0.1:port, accept one connection, serve on it. */
static void serve_on_tcp(const char *spec)
{
    struct sockaddr_in addr;
    socklen_t addr_len = sizeof addr;
    int one = 1;
    int server = socket(AF_INET, SOCK_STREAM, 0);
    int conn;

    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons((uint16_t)atoi(spec));
    setsockopt(server, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (server < 0 || bind(server, (struct sockaddr *)&addr, sizeof addr) != 0 ||
        listen(server, 1) != 0 ||
        getsockname(server, (struct sockaddr *)&addr, &addr_len) != 0) {
        perror("aot-host: cannot listen");
        exit(4);
    }
    fprintf(stderr, "aot-host: listening on 127.0.0.1:%u\n", (unsigned)ntohs(addr.sin_port));
    fflush(stderr);
    conn = accept(server, NULL, NULL);
    if (conn < 0) {
        perror("aot-host: accept failed");
        exit(4);
    }
    close(server);
    setsockopt(conn, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fd_in = conn;
    fd_out = conn;
}

void aot_port_init(void)
{
    const char *listen_spec = getenv("AOT_HOST_LISTEN");
    in_len = 0;
    in_pos = 0;
    signal(SIGPIPE, SIG_IGN); /* a vanished host shows up as EPIPE instead */
    if (listen_spec != NULL) {
        serve_on_tcp(listen_spec);
    }
}

int aot_port_read_byte(void)
{
    while (in_pos == in_len) {
        ssize_t n = read(fd_in, in_buf, sizeof in_buf);
        if (n == 0 || (n < 0 && errno != EINTR)) {
            return -1;
        }
        in_len = n > 0 ? (size_t)n : 0;
        in_pos = 0;
    }
    return in_buf[in_pos++];
}

void aot_port_write(const uint8_t *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd_out, data, len);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            aot_port_exit(3); /* the host went away: nothing left to serve */
        }
        data += n;
        len -= (size_t)n;
    }
}

void aot_port_timer_start(void)
{
    timer_origin = now_ns();
}

uint64_t aot_port_timer_stop(void)
{
    return now_ns() - timer_origin;
}

uint8_t aot_port_timer_unit(void)
{
    return AOT_TIMER_NANOSECONDS;
}

uint32_t aot_port_clock_hz(void)
{
    return 0; /* the host's clock is not the firmware's to know */
}

void aot_port_report(aot_device_report_t *report)
{
    /* The machine running aot: nothing of its clock or caches is ours to report. */
    report->measured_clock_hz = 0;
    report->flash_wait_states = AOT_NO_WAIT_STATES;
    report->caches = 0;
}

uint32_t aot_port_entropy(void)
{
    return (uint32_t)now_ns() ^ ((uint32_t)getpid() << 16);
}

void aot_port_exit(int code)
{
    exit(code);
}
