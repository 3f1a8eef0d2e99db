/* One-line levelled logs (see log.h). */
#include "cluster/log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static _Atomic int log_level = SC_LOG_INFO;
static _Atomic int log_fd = 2;

void sc_log_set_level(sc_log_level level)
{
    atomic_store_explicit(&log_level, (int)level, memory_order_relaxed);
}

int sc_log_level_parse(const char *s)
{
    static const char *names[] = {"debug", "info", "warn", "error", "off"};
    for (int i = 0; i < 5; i++)
        if (s && strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

void sc_log_set_fd(int fd)
{
    atomic_store_explicit(&log_fd, fd, memory_order_relaxed);
}

int sc_log_enabled(sc_log_level level)
{
    return (int)level >= atomic_load_explicit(&log_level, memory_order_relaxed);
}

void sc_log(sc_log_level level, const char *component, const char *fmt, ...)
{
    static const char *tags[] = {"DEBUG", "INFO ", "WARN ", "ERROR", "OFF  "};
    if (!sc_log_enabled(level) || level >= SC_LOG_OFF)
        return;
    char msg[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t mlen = (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1;

    char line[4096 * 4 + 128];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    size_t pos = (size_t)snprintf(line, 128, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s [%s] ",
                                  tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                                  tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000, tags[level],
                                  component ? component : "-");
    if (pos > 127)
        pos = 127;
    for (size_t i = 0; i < mlen; i++) {
        unsigned char c = (unsigned char)msg[i];
        if (c < 0x20 || c == 0x7f) {
            pos += (size_t)snprintf(line + pos, 5, "\\x%02x", c);
        } else {
            line[pos++] = (char)c;
        }
    }
    line[pos++] = '\n';
    ssize_t w = write(atomic_load_explicit(&log_fd, memory_order_relaxed), line, pos);
    (void)w;
}
