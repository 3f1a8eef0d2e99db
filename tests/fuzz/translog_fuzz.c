/* libFuzzer target for src/shard/translog.c: the input becomes a translog generation file
 * (with a valid header prepended when the first byte is even, so the entry decoder is reached)
 * and is replayed; every returned operation must lie inside the file, and after replay the log
 * must accept an append and replay it back. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/file.h"
#include "shard/translog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[128];
static uint64_t n_seen;

static sc_status count(void *ctx, const sc_translog_op *op)
{
    (void)ctx;
    if (op->type != SC_TRANSLOG_INDEX && op->type != SC_TRANSLOG_DELETE)
        abort();
    if ((op->id.len && !op->id.ptr) || (op->source.len && !op->source.ptr))
        abort();
    n_seen++;
    return SC_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0])
        snprintf(dir, sizeof(dir), "/tmp/scry-translog-fuzz-%d", (int)getpid());
    if (sc_dir_remove_all(dir) != SC_OK || sc_dir_make(dir) != SC_OK)
        abort();
    char path[256];
    snprintf(path, sizeof(path), "%s/translog-1.tlog", dir);
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    if (size && data[0] % 2 == 0) {
        static const uint8_t header[16] = {'S', 'C', 'T', 'L', 'O', 'G', '0', '1', 1, 0, 0, 0, 0, 0, 0, 0};
        fwrite(header, 1, sizeof(header), f);
        data++;
        size--;
    }
    fwrite(data, 1, size, f);
    fclose(f);
    sc_translog *t;
    if (sc_translog_open(dir, 1, &t) != SC_OK)
        abort();
    n_seen = 0;
    uint64_t n = 0, cut = 0;
    sc_status st = sc_translog_replay(t, count, NULL, &n, &cut);
    if (st == SC_OK) {
        if (n != n_seen)
            abort();
        sc_translog_op op = {SC_TRANSLOG_INDEX, 7, 1, 1, sc_slice_cstr("x"), sc_slice_cstr("{}")};
        if (sc_translog_append(t, &op, NULL) != SC_OK || sc_translog_sync(t) != SC_OK)
            abort();
        sc_translog_close(t);
        if (sc_translog_open(dir, 1, &t) != SC_OK)
            abort();
        uint64_t n2 = 0;
        n_seen = 0;
        if (sc_translog_replay(t, count, NULL, &n2, &cut) != SC_OK || n2 != n + 1 || cut != 0)
            abort();
    }
    sc_translog_close(t);
    return 0;
}
