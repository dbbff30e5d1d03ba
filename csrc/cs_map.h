/*
 * A pointer -> pointer hash map (open addressing, linear probing, deletion
 * by backward shift): finds the record of a coroutine from its lua_State
 * without touching the Lua heap, so it costs the GC nothing. Lua-free.
 */
#ifndef CS_MAP_H
#define CS_MAP_H

#include <stddef.h>

typedef struct cs_map_slot_s {
    const void *key;   /* NULL: empty */
    void *val;
} cs_map_slot_t;

typedef struct cs_map_s {
    cs_map_slot_t *slots;
    size_t mask;       /* capacity - 1 (capacity a power of 2), or 0 */
    size_t count;
} cs_map_t;

/* the value of key, or NULL */
void *cs_map_get(const cs_map_t *m, const void *key);

/* sets key (not NULL) to val (not NULL): 0, or -1 on ENOMEM (unchanged) */
int cs_map_set(cs_map_t *m, const void *key, void *val);

/* removes key if present */
void cs_map_del(cs_map_t *m, const void *key);

void cs_map_free(cs_map_t *m);

#endif
