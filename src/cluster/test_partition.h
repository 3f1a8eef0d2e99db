/* A test-only network partition (`scry serve --test-partition-file F`): while the file F
 * exists, this process's etcd client and its transport (client and server) refuse all traffic,
 * as if the node's links were cut. Without root network namespaces this is how the e2e tests
 * partition one node on loopback. Never set in production; unset costs one load. */
#ifndef SC_CLUSTER_TEST_PARTITION_H
#define SC_CLUSTER_TEST_PARTITION_H

#include <stdbool.h>

/* Process-wide; path is copied. Call before any cluster thread starts. NULL clears. */
void sc_test_partition_set(const char *path);
/* Whether the partition file exists now. */
bool sc_test_partitioned(void);

#endif
