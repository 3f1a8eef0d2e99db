/* Document routing: which shard of an index a document lives on, computed exactly as
 * Elasticsearch does so the same _id (or _routing) lands on the same shard number:
 *   hash  = murmur3_x86_32(UTF-16LE code units of the routing string, seed 0)
 *   shard = floorMod(hash, routing_num_shards) / (routing_num_shards / num_shards)
 * With routing_num_shards == num_shards (indices created with a fixed number of shards and no
 * index.number_of_routing_shards) this is floorMod(hash, num_shards). Elasticsearch 7+ defaults
 * routing_num_shards to a multiple of num_shards chosen for splitting (see
 * sc_routing_default_num_routing_shards); pass that to match a default 7+ index. */
#ifndef SC_SHARD_ROUTING_H
#define SC_SHARD_ROUTING_H

#include <stddef.h>
#include <stdint.h>

#include "base/slice.h"

/* murmur3_x86_32 of raw bytes with a seed (the reference algorithm). */
uint32_t sc_murmur3_32(const void *data, size_t len, uint32_t seed);

/* Elasticsearch's Murmur3HashFunction.hash(String): the routing string (UTF-8 bytes, decoded;
 * invalid bytes count as U+FFFD) hashed as UTF-16LE code units with seed 0. */
int32_t sc_routing_hash(sc_slice routing);

/* The shard number for `routing` (the _routing value, or the _id when there is none).
 * num_shards >= 1; routing_num_shards a multiple of num_shards (0 = num_shards). */
uint32_t sc_routing_shard(sc_slice routing, uint32_t num_shards, uint32_t routing_num_shards);

/* Elasticsearch 7+'s default index.number_of_routing_shards for num_shards: num_shards * 2^k
 * with the largest k such that the result is at most 1024, but k >= 1 (1 -> 1024, 5 -> 640,
 * 600 -> 1200). */
uint32_t sc_routing_default_num_routing_shards(uint32_t num_shards);

#endif
