/* Status codes returned by every fallible scry function. The list is an X-macro so the enum,
 * the names and the messages cannot drift apart. */
#ifndef SC_BASE_STATUS_H
#define SC_BASE_STATUS_H

#define SC_STATUS_LIST(X)                                                                          \
    X(SC_OK, "ok")                                                                                 \
    X(SC_ENOMEM, "out of memory")                                                                  \
    X(SC_EINVAL, "invalid argument")                                                               \
    X(SC_ECORRUPT, "corrupt data")                                                                 \
    X(SC_ELIMIT, "limit exceeded")                                                                 \
    X(SC_ETIMEOUT, "timed out")                                                                    \
    X(SC_ECANCELLED, "cancelled")                                                                  \
    X(SC_EIO, "i/o error")                                                                         \
    X(SC_ENOTFOUND, "not found")                                                                   \
    X(SC_EEXIST, "already exists")                                                                 \
    X(SC_ECONFLICT, "version conflict")                                                            \
    X(SC_EPARSE, "parse error")                                                                    \
    X(SC_EUNSUPPORTED, "not supported")                                                            \
    X(SC_EFULL, "queue full")                                                                      \
    X(SC_ECLOSED, "closed")

typedef enum sc_status {
#define SC__STATUS_ENUM(name, msg) name,
    SC_STATUS_LIST(SC__STATUS_ENUM)
#undef SC__STATUS_ENUM
        SC_STATUS_COUNT_
} sc_status;

#define SC_MUST_USE __attribute__((warn_unused_result))

/* Returns a static, human-readable message for `s` ("ok", "corrupt data", ...). Never NULL:
 * out-of-range values give "unknown status". Thread-safe. */
const char *sc_status_str(sc_status s);

/* Returns the enum constant's name ("SC_ECORRUPT"). Never NULL. Thread-safe. */
const char *sc_status_name(sc_status s);

/* Propagate a non-OK status to the caller. */
#define SC_TRY(expr)                                                                               \
    do {                                                                                           \
        sc_status sc__try_st = (expr);                                                             \
        if (sc__try_st != SC_OK)                                                                   \
            return sc__try_st;                                                                     \
    } while (0)

#endif
