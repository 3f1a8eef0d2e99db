/* The test-only partition switch (test_partition.h). */
#include "cluster/test_partition.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *partition_file;

void sc_test_partition_set(const char *path)
{
    free(partition_file);
    partition_file = path && *path ? strdup(path) : NULL;
}

bool sc_test_partitioned(void)
{
    return partition_file && access(partition_file, F_OK) == 0;
}
