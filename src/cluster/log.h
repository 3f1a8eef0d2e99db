/* One-line server logs with levels: "2026-11-30T05:50:00.123Z INFO  [component] message".
 * Used by the server layers (cluster, api, http, cmd). Lines go to stderr (or a file set with
 * sc_log_set_file); each line is written with one write(2) so concurrent threads never
 * interleave inside a line. The level threshold is a process-wide setting read with a relaxed
 * atomic load, so a suppressed sc_log call costs one load and a compare. */
#ifndef SC_CLUSTER_LOG_H
#define SC_CLUSTER_LOG_H

typedef enum sc_log_level {
    SC_LOG_DEBUG,
    SC_LOG_INFO,
    SC_LOG_WARN,
    SC_LOG_ERROR,
    SC_LOG_OFF,
} sc_log_level;

/* Sets the minimum level that is written (default INFO). Thread-safe. */
void sc_log_set_level(sc_log_level level);
/* Parses "debug", "info", "warn", "error", "off"; returns -1 for anything else. */
int sc_log_level_parse(const char *s);
/* Redirects logs to an already-open file descriptor (default 2). Thread-safe. */
void sc_log_set_fd(int fd);
/* true when a message at `level` would be written. */
int sc_log_enabled(sc_log_level level);
/* Writes one line. `component` is a short static tag ("http", "search"). Long messages are
 * truncated to 4 KiB; newlines and control bytes in the message are escaped so user text cannot
 * forge log lines. Thread-safe. */
void sc_log(sc_log_level level, const char *component, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
