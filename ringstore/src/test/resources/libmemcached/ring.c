/*
 * The ring libmemcached builds, asked of the installed library (libmemcached-dev): LibmemcachedParityTest
 * compiles this file with cc and runs it. No memcached is contacted: the ring is built and searched in
 * the client.
 *
 * stdin:  line 1: the distribution, "consistent" (MEMCACHED_DISTRIBUTION_CONSISTENT), "spy"
 *                 (MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY), or "weighted" / "spy-weighted" (the same
 *                 after MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, which makes the key hash MD5);
 *         line 2: the key hash, a name of libmemcached_string_hash() in lower case ("default", "md5", ...;
 *                 "md5" for the weighted ones);
 *         line 3: the order, "servers-first" (servers added, then the behaviors set: pylibmc's order) or
 *                 "behaviors-first" (PHP's setOption before addServer);
 *         line 4: N, then N lines "host port weight down" (down 1: in retry delay under auto-eject);
 *         then one key a line, in hex (an empty line is the empty key), to the end.
 * stdout: line 1: "points P" (the continuum's points); then P lines "value index", the continuum in
 *         order; then one line a key: "hash index", the key's hash (memcached_generate_hash_value) and memcached_generate_hash's server index.
 * exit:   0; 2 for bad input, a hash the library lacks (line "unsupported HASH" on stderr) or a failed call.
 */
#include <libmemcached/memcached.h>
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The continuum's element (libmemcached's continuum.hpp); the struct memcached_st exposes the array. */
struct memcached_continuum_item_st {
  uint32_t index;
  uint32_t value;
};

static char line[1 << 20];

static int read_line(void) {
  if (!fgets(line, sizeof line, stdin)) {
    return 0;
  }
  size_t n = strlen(line);
  if (n > 0 && line[n - 1] == '\n') {
    line[--n] = 0;
  }
  return 1;
}

static void die(const char *what, const char *detail) {
  fprintf(stderr, "%s: %s\n", what, detail);
  exit(2);
}

static void check(memcached_st *memc, memcached_return_t rc, const char *call) {
  if (rc != MEMCACHED_SUCCESS) {
    die(call, memcached_last_error_message(memc));
  }
}

static memcached_hash_t hash_named(const char *name) {
  for (int h = MEMCACHED_HASH_DEFAULT; h < MEMCACHED_HASH_MAX; h++) {
    const char *known = libmemcached_string_hash((memcached_hash_t) h);
    if (known && strcasecmp(known, name) == 0 && h != MEMCACHED_HASH_CUSTOM) {
      return (memcached_hash_t) h;
    }
  }
  die("unknown hash", name);
  return MEMCACHED_HASH_DEFAULT;
}

static void set_behaviors(memcached_st *memc, memcached_server_distribution_t distribution,
                          memcached_hash_t hash, int weighted) {
  check(memc, memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_AUTO_EJECT_HOSTS, 1), "AUTO_EJECT_HOSTS");
  if (weighted) { /* libmemcached's memcached_ketama_compat test: the key hash becomes MD5 */
    check(memc, memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1), "KETAMA_WEIGHTED");
    check(memc, memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_DISTRIBUTION, distribution), "DISTRIBUTION");
    return;
  }
  if (memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_HASH, hash) != MEMCACHED_SUCCESS) {
    /* a hash the library was built without (Debian's has no hsieh): the client keeps its hash */
    fprintf(stderr, "unsupported %s\n", libmemcached_string_hash(hash));
    exit(2);
  }
  check(memc, memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_DISTRIBUTION, distribution), "DISTRIBUTION");
}

int main(void) {
  memcached_st *memc = memcached_create(NULL);
  if (!memc || !read_line()) {
    die("input", "no distribution");
  }
  memcached_server_distribution_t distribution;
  int weighted = 0;
  if (strcmp(line, "consistent") == 0) {
    distribution = MEMCACHED_DISTRIBUTION_CONSISTENT;
  } else if (strcmp(line, "spy") == 0) {
    distribution = MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY;
  } else if (strcmp(line, "weighted") == 0) {
    distribution = MEMCACHED_DISTRIBUTION_CONSISTENT_WEIGHTED;
    weighted = 1;
  } else if (strcmp(line, "spy-weighted") == 0) {
    distribution = MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY;
    weighted = 1;
  } else {
    die("unknown distribution", line);
  }
  if (!read_line()) {
    die("input", "no hash");
  }
  memcached_hash_t hash = hash_named(line);
  if (!read_line()) {
    die("input", "no order");
  }
  int behaviors_first = strcmp(line, "behaviors-first") == 0;
  if (!behaviors_first && strcmp(line, "servers-first") != 0) {
    die("unknown order", line);
  }
  if (behaviors_first) {
    set_behaviors(memc, distribution, hash, weighted);
  }
  if (!read_line()) {
    die("input", "no server count");
  }
  int n = atoi(line);
  int *down = calloc((size_t) n + 1, sizeof(int));
  for (int i = 0; i < n; i++) {
    char host[1100];
    unsigned port, weight;
    if (!read_line() || sscanf(line, "%1023s %u %u %d", host, &port, &weight, &down[i]) != 4) {
      die("bad server line", line);
    }
    check(memc, memcached_server_add_with_weight(memc, host, (in_port_t) port, weight), "memcached_server_add_with_weight");
  }
  if (!behaviors_first) {
    set_behaviors(memc, distribution, hash, weighted);
  }
  int any_down = 0;
  for (int i = 0; i < n; i++) {
    if (down[i]) {
      memcached_instance_next_retry(memcached_server_instance_by_position(memc, (uint32_t) i), time(NULL) + 3600);
      any_down = 1;
    }
  }
  if (any_down) { /* setting the distribution again rebuilds the continuum from the live servers */
    check(memc, memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_DISTRIBUTION, distribution), "DISTRIBUTION");
  }
  uint32_t points = memc->ketama.continuum_points_counter;
  printf("points %u\n", points);
  for (uint32_t p = 0; p < points; p++) {
    printf("%u %u\n", memc->ketama.continuum[p].value, memc->ketama.continuum[p].index);
  }
  static char key[sizeof line / 2];
  while (read_line()) {
    size_t length = strlen(line);
    if (length % 2 != 0) {
      die("odd hex key", line);
    }
    for (size_t i = 0; i < length / 2; i++) {
      unsigned byte;
      if (!isxdigit((unsigned char) line[2 * i]) || sscanf(line + 2 * i, "%2x", &byte) != 1) {
        die("bad hex key", line);
      }
      key[i] = (char) byte;
    }
    printf("%u %u\n", memcached_generate_hash_value(key, length / 2, hash), memcached_generate_hash(memc, key, length / 2));
  }
  memcached_free(memc);
  free(down);
  return fflush(stdout) == 0 ? 0 : 2;
}
