/* Status code names and messages, generated from the X-macro list in status.h. */
#include "base/status.h"

static const char *const messages[] = {
#define SC__STATUS_MSG(name, msg) msg,
    SC_STATUS_LIST(SC__STATUS_MSG)
#undef SC__STATUS_MSG
};

static const char *const names[] = {
#define SC__STATUS_NAME(name, msg) #name,
    SC_STATUS_LIST(SC__STATUS_NAME)
#undef SC__STATUS_NAME
};

const char *sc_status_str(sc_status s)
{
    if ((unsigned)s >= (unsigned)SC_STATUS_COUNT_)
        return "unknown status";
    return messages[s];
}

const char *sc_status_name(sc_status s)
{
    if ((unsigned)s >= (unsigned)SC_STATUS_COUNT_)
        return "SC_UNKNOWN";
    return names[s];
}
