/* Test fixture: a private etcd (/usr/bin/etcd, or $SCRY_ETCD) on free loopback ports with a
 * temporary --data-dir, started and stopped by the test process. Header-only, for
 * tests/unit/cluster. */
#ifndef SC_TEST_ETCD_FIXTURE_H
#define SC_TEST_ETCD_FIXTURE_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

typedef struct etcd_fixture {
    pid_t pid;
    int client_port, peer_port;
    char dir[256];
    char url[64];
} etcd_fixture;

static int fixture_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    return ntohs(a.sin_port);
}

static size_t fixture_sink(char *p, size_t s, size_t n, void *u)
{
    (void)p, (void)u;
    return s * n;
}

static int fixture_ready(const etcd_fixture *f)
{
    CURL *h = curl_easy_init();
    char url[128];
    snprintf(url, sizeof url, "%s/version", f->url);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 500L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, fixture_sink);
    long code = 0;
    if (curl_easy_perform(h) == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(h);
    return code == 200;
}

/* One etcd start on f's ports; 0 once it answers, -1 if it exited or did not answer in 10 s. */
static int fixture_spawn(etcd_fixture *f)
{
    const char *bin = getenv("SCRY_ETCD") ? getenv("SCRY_ETCD") : "/usr/bin/etcd";
    char data[300], curls[64], purls[64], cluster[96], log[300];
    snprintf(data, sizeof data, "%s/data", f->dir);
    snprintf(log, sizeof log, "%s/etcd.log", f->dir);
    snprintf(curls, sizeof curls, "http://127.0.0.1:%d", f->client_port);
    snprintf(purls, sizeof purls, "http://127.0.0.1:%d", f->peer_port);
    snprintf(cluster, sizeof cluster, "t=%s", purls);
    snprintf(f->url, sizeof f->url, "http://127.0.0.1:%d", f->client_port);
    f->pid = fork();
    if (f->pid == 0) {
        FILE *lf = freopen(log, "a", stderr);
        (void)lf;
        execl(bin, bin, "--name", "t", "--data-dir", data, "--listen-client-urls", curls,
              "--advertise-client-urls", curls, "--listen-peer-urls", purls,
              "--initial-advertise-peer-urls", purls, "--initial-cluster", cluster, "--log-level",
              "error", (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 200; i++) {
        if (fixture_ready(f))
            return 0;
        if (waitpid(f->pid, NULL, WNOHANG) == f->pid) { /* e.g. a port taken meanwhile */
            f->pid = 0;
            return -1;
        }
        struct timespec ts = {0, 50 * 1000000};
        nanosleep(&ts, NULL);
    }
    kill(f->pid, SIGKILL);
    waitpid(f->pid, NULL, 0);
    f->pid = 0;
    return -1;
}

/* Starts etcd (keeping f->dir and ports when restart is nonzero); 0 on success. A first start
 * retries on new ports: tests run in parallel and a free port can be taken before etcd binds. */
static int fixture_start(etcd_fixture *f, int restart)
{
    if (restart)
        return fixture_spawn(f);
    snprintf(f->dir, sizeof f->dir, "/tmp/scry-etcd-test-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    for (int attempt = 0; attempt < 3; attempt++) {
        f->client_port = fixture_free_port();
        f->peer_port = fixture_free_port();
        if (f->client_port > 0 && f->peer_port > 0 && f->client_port != f->peer_port &&
            fixture_spawn(f) == 0)
            return 0;
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s/data'", f->dir);
        if (system(cmd) != 0)
            return -1;
    }
    return -1;
}

/* Kills etcd (SIGKILL) and reaps it; the data dir stays. */
static void fixture_kill(etcd_fixture *f)
{
    if (f->pid > 0) {
        kill(f->pid, SIGKILL);
        waitpid(f->pid, NULL, 0);
        f->pid = 0;
    }
}

static void fixture_stop(etcd_fixture *f)
{
    fixture_kill(f);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", f->dir);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

#endif
