/* OS numbers a node publishes in its registration and _cat/nodes shows: "heap" (resident
 * memory as a percentage of the node's memory budget: scry has no JVM heap), RAM in use,
 * system CPU over the last sample period (5 s) and load averages (Linux /proc). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster/membership_internal.h"

static int rss_percent(sc_node *node)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size = 0, resident = 0;
    int n = f ? fscanf(f, "%lu %lu", &size, &resident) : 0;
    if (f)
        fclose(f);
    size_t budget = sc_node_config_get(node)->memory_limit_bytes;
    if (n != 2 || !budget)
        return -1;
    double bytes = (double)resident * (double)sysconf(_SC_PAGESIZE);
    int pct = (int)(100.0 * bytes / (double)budget + 0.5);
    return pct > 100 ? 100 : pct;
}

static int ram_percent(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return -1;
    char line[256];
    unsigned long long total = 0, avail = 0, v;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "MemTotal: %llu", &v) == 1)
            total = v;
        else if (sscanf(line, "MemAvailable: %llu", &v) == 1)
            avail = v;
    }
    fclose(f);
    if (!total || avail > total)
        return -1;
    return (int)(100.0 * (double)(total - avail) / (double)total + 0.5);
}

void sc__ms_sample_cpu(sc_membership *m)
{
    FILE *f = fopen("/proc/stat", "r");
    unsigned long long v[8] = {0};
    int n = f ? fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                       &v[4], &v[5], &v[6], &v[7])
              : 0;
    if (f)
        fclose(f);
    if (n < 5)
        return;
    uint64_t total = 0;
    for (int i = 0; i < 8; i++)
        total += v[i];
    uint64_t busy = total - v[3] - v[4]; /* minus idle and iowait */
    pthread_mutex_lock(&m->mu);
    if (m->cpu_total && total > m->cpu_total)
        atomic_store(
            &m->cpu_percent,
            (int)(100.0 * (double)(busy - m->cpu_busy) / (double)(total - m->cpu_total) + 0.5));
    m->cpu_busy = busy;
    m->cpu_total = total;
    pthread_mutex_unlock(&m->mu);
}

void sc__os_stats(sc_node *node, sc_member *mb)
{
    mb->heap_percent = rss_percent(node);
    mb->ram_percent = ram_percent();
    mb->cpu_percent = -1;
    if (getloadavg(mb->load, 3) != 3)
        mb->load[0] = mb->load[1] = mb->load[2] = -1;
}

void sc_membership_local_stats(sc_membership *m, sc_member *mb)
{
    sc__os_stats(m->node, mb);
    mb->cpu_percent = atomic_load(&m->cpu_percent);
}

char *sc__ms_node_value(sc_membership *m)
{
    sc_member st;
    sc_membership_local_stats(m, &st);
    json_t *v = json_object();
    json_object_set_new(v, "id", json_string(sc_node_id(m->node)));
    json_object_set_new(v, "name", json_string(sc_node_name(m->node)));
    json_object_set_new(v, "http", json_string(m->http));
    json_object_set_new(v, "transport", json_string(m->transport));
    json_object_set_new(v, "started_ms", json_integer(m->started_ms));
    json_object_set_new(v, "version", json_string(SCRY_VERSION));
    json_object_set_new(v, "heap_percent", json_integer(st.heap_percent));
    json_object_set_new(v, "ram_percent", json_integer(st.ram_percent));
    json_object_set_new(v, "cpu", json_integer(st.cpu_percent));
    json_t *load = json_array();
    for (int i = 0; i < 3; i++)
        json_array_append_new(load, json_real(st.load[i]));
    json_object_set_new(v, "load", load);
    char *text = json_dumps(v, JSON_COMPACT);
    json_decref(v);
    return text;
}
