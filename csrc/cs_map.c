/*
 * Open addressing with linear probing, at most 3/4 full (with a good
 * hash: 2.5 probes for a key that is there, 8.5 for one that is not, at
 * the worst); deletion shifts the following entries back, so there are no
 * tombstones. One entry per live light thread: 16 B, over 21 B to 43 B of
 * table per thread depending on the fill, where half full cost 32 B to
 * 64 B.
 */
#include <stdint.h>
#include <stdlib.h>

#include "cs_map.h"
#include "cs_alloc.h"


static size_t
cs_map_hash(const void *key)
{
    uint64_t h = (uint64_t) (uintptr_t) key;

    h ^= h >> 33; /* fmix64 of MurmurHash3: pointers are aligned */
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return (size_t) h;
}


void *
cs_map_get(const cs_map_t *m, const void *key)
{
    size_t i;

    if (m->slots == NULL)
        return NULL;
    for (i = cs_map_hash(key) & m->mask; m->slots[i].key != NULL;
         i = (i + 1) & m->mask) {
        if (m->slots[i].key == key)
            return m->slots[i].val;
    }
    return NULL;
}


/* returns 1 when key is new */
static int
cs_map_put(cs_map_slot_t *slots, size_t mask, const void *key, void *val)
{
    size_t i = cs_map_hash(key) & mask;
    int fresh;

    while (slots[i].key != NULL && slots[i].key != key)
        i = (i + 1) & mask;
    fresh = slots[i].key == NULL;
    slots[i].key = key;
    slots[i].val = val;
    return fresh;
}


int
cs_map_set(cs_map_t *m, const void *key, void *val)
{
    if (m->slots == NULL || (m->count + 1) * 4 > (m->mask + 1) * 3) {
        size_t cap = m->slots ? (m->mask + 1) * 2 : 64, i;
        cs_map_slot_t *s = calloc(cap, sizeof(*s));
        if (s == NULL)
            return -1;
        for (i = 0; m->slots != NULL && i <= m->mask; i++) {
            if (m->slots[i].key != NULL)
                (void) cs_map_put(s, cap - 1, m->slots[i].key,
                                  m->slots[i].val);
        }
        free(m->slots);
        m->slots = s;
        m->mask = cap - 1;
    }
    if (cs_map_put(m->slots, m->mask, key, val))
        m->count++;
    return 0;
}


void
cs_map_del(cs_map_t *m, const void *key)
{
    size_t i, j, k;

    if (m->slots == NULL)
        return;
    for (i = cs_map_hash(key) & m->mask; m->slots[i].key != key;
         i = (i + 1) & m->mask) {
        if (m->slots[i].key == NULL)
            return;
    }
    m->count--;
    /* backward shift: move up every entry whose probe passes through i */
    for (j = (i + 1) & m->mask; m->slots[j].key != NULL;
         j = (j + 1) & m->mask) {
        k = cs_map_hash(m->slots[j].key) & m->mask;
        if ((j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j))) {
            m->slots[i] = m->slots[j];
            i = j;
        }
    }
    m->slots[i].key = NULL;
    m->slots[i].val = NULL;
}


void
cs_map_free(cs_map_t *m)
{
    free(m->slots);
    m->slots = NULL;
    m->mask = 0;
    m->count = 0;
}
