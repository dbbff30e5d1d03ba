/*
 * corosched.re: OpenResty's ngx.re API (match, find, gmatch, sub, gsub) on
 * PCRE2, with the semantics of lua-nginx-module and lua-resty-core:
 *
 *   m, err          = re.match(subject, regex, opts?, ctx?, res?)
 *   from, to, err   = re.find(subject, regex, opts?, ctx?, nth?)
 *   iter, err       = re.gmatch(subject, regex, opts?); m, err = iter()
 *   s, n, err       = re.sub(subject, regex, replace, opts?)
 *   s, n, err       = re.gsub(subject, regex, replace, opts?)
 *
 * Programmer errors raise (an unknown option letter, a ctx or res that is
 * not a table); a regex that does not compile and a failed match return
 * nil and OpenResty's message ("pcre2_compile() failed: ... in \"...\"",
 * "pcre_exec() failed: N" with PCRE2's code N). The subject goes through
 * tostring(), as in lua-resty-core.
 *
 * A compiled regex is a userdata owning its pcre2_code and match data; its
 * __gc frees them, so no error path leaks. With "o" it is kept in this Lua
 * state's cache (at most CS_RE_CACHE_MAX entries, then "o" compiles every
 * time); without, it is freed as soon as the call (or the gmatch iterator)
 * is done with it. The offsets of a match are copied out of the match data
 * before anything that allocates in Lua runs: a finalizer or a replacement
 * function may use the same cached regex meanwhile.
 *
 * After an empty match the next search starts one character further (one
 * byte, or one UTF-8 sequence in UTF mode). A gsub replacement function may
 * yield (lua_callk): it can sleep or do socket I/O in a light thread. "j"
 * JIT-compiles, except under valgrind (see luaopen_corosched_re).
 */
#define PCRE2_CODE_UNIT_WIDTH 8

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <lua.h>
#include <lauxlib.h>
#include <pcre2.h>

#include "cs_common.h"

#define CS_RE_MT "corosched.re.regex"

#define CS_RE_CACHE_MAX 1024   /* lua_regex_cache_max_entries' default */
#define CS_RE_DFA_WS    1000   /* DFA workspace, ints (as ngx_lua) */
#define CS_RE_LOCAL     16     /* offset pairs kept on the C stack */

/* option letters that are not compile options */
#define CS_RE_ONCE     0x01    /* o: cache the compiled regex */
#define CS_RE_DFA      0x02    /* d: pcre2_dfa_match, longest match */
#define CS_RE_JIT      0x04    /* j: pcre2_jit_compile */
#define CS_RE_DUPNAMES 0x08    /* D: named captures as arrays */
#define CS_RE_NOCHECK  0x10    /* U: no UTF-8 check of the subject */

typedef struct cs_re_s {
    pcre2_code *code;
    pcre2_match_data *md;
    PCRE2_SPTR names;       /* PCRE2's name table (inside code) */
    uint32_t ncap;          /* capture groups; 0 in DFA mode */
    uint32_t nnames;
    uint32_t name_size;     /* bytes per name table entry */
    unsigned flags;         /* CS_RE_* */
    int utf;                /* compiled in UTF mode (u, U or (*UTF)) */
    int cached;             /* in the cache: never freed before __gc */
} cs_re_t;

/* the state of a gmatch iterator or of a sub/gsub call */
typedef struct cs_re_run_s {
    size_t pos;             /* where the next search starts */
    size_t cp;              /* sub: subject bytes before cp are copied */
    size_t end;             /* sub: end of the current match */
    size_t next;            /* sub: where the search after it starts */
    lua_Integer count;      /* sub: matches replaced */
    lua_Integer npieces;    /* sub with a function: pieces of the result */
    int checked;            /* the subject's UTF-8 was checked once */
    int done;               /* gmatch: exhausted or failed */
    int stop;               /* sub: no search after the current match */
    int global;             /* gsub */
    PCRE2_SIZE ov[];        /* a copy of the offsets: 2 * (ncap + 1) */
} cs_re_run_t;

/* a parsed replacement template: literal pieces and captures */
typedef struct cs_re_seg_s {
    size_t off;             /* literal: offset in the template; else group */
    size_t len;             /* literal: length; CS_RE_CAPTURE: a capture */
} cs_re_seg_t;

#define CS_RE_CAPTURE ((size_t) -1)

typedef struct cs_re_tpl_s {
    size_t n;
    cs_re_seg_t seg[];
} cs_re_tpl_t;

/* the regex cache of this Lua state (user value 1: key -> regex) */
typedef struct cs_re_cache_s {
    int n;
    int nojit;              /* under valgrind: "j" does not JIT-compile */
} cs_re_cache_t;


/* [-0, +1, e] luaL_tolstring, but a float as LuaJIT's tostring (so
 * OpenResty) writes it: "%.14g", 2.0 as "2" (integers stay exact) */
static const char *
cs_re_tostring(lua_State *L, int idx, size_t *len)
{
    char buf[64];

    if (lua_type(L, idx) == LUA_TNUMBER && !lua_isinteger(L, idx)) {
        lua_pushlstring(L, buf, cs_numfmt(buf, sizeof(buf),
                                          (double) lua_tonumber(L, idx), 0));
        return lua_tolstring(L, -1, len);
    }
    return luaL_tolstring(L, idx, len);
}


/* {====== compiling ====== */

static int
cs_re_gc(lua_State *L)
{
    cs_re_t *re = luaL_checkudata(L, 1, CS_RE_MT);

    if (re->md != NULL)
        pcre2_match_data_free(re->md);
    if (re->code != NULL)
        pcre2_code_free(re->code);
    re->md = NULL;
    re->code = NULL;
    return 0;
}


/* frees a regex the call is done with, unless the cache holds it */
static void
cs_re_release(cs_re_t *re)
{
    if (re->cached)
        return;
    if (re->md != NULL)
        pcre2_match_data_free(re->md);
    if (re->code != NULL)
        pcre2_code_free(re->code);
    re->md = NULL;
    re->code = NULL;
}


/* parses the option letters (lua-resty-core's parse_regex_opts) */
static void
cs_re_opts(lua_State *L, const char *opts, size_t len, unsigned *flags,
           uint32_t *copts)
{
    size_t i;

    *flags = 0;
    *copts = 0;
    for (i = 0; i < len; i++) {
        switch (opts[i]) {
        case 'o': *flags |= CS_RE_ONCE; break;
        case 'j': *flags |= CS_RE_JIT; break;
        case 'd': *flags |= CS_RE_DFA; break;
        case 'i': *copts |= PCRE2_CASELESS; break;
        case 's': *copts |= PCRE2_DOTALL; break;
        case 'm': *copts |= PCRE2_MULTILINE; break;
        case 'x': *copts |= PCRE2_EXTENDED; break;
        case 'a': *copts |= PCRE2_ANCHORED; break;
        case 'u': *copts |= PCRE2_UTF; break;
        case 'U':
            *copts |= PCRE2_UTF;
            *flags |= CS_RE_NOCHECK;
            break;
        case 'D':
            *copts |= PCRE2_DUPNAMES;
            *flags |= CS_RE_DUPNAMES;
            break;
        case 'J': /* PCRE's JAVASCRIPT_COMPAT, as PCRE2 spells it */
            *copts |= PCRE2_ALT_BSUX | PCRE2_ALLOW_EMPTY_CLASS
                      | PCRE2_MATCH_UNSET_BACKREF;
            break;
        default:
            luaL_error(L, "unknown flag \"%c\" (flags \"%s\")", opts[i],
                       opts);
        }
    }
}


/* pushes nginx's message for a pattern that does not compile */
static void
cs_re_compile_error(lua_State *L, int errcode, const char *rx, size_t len,
                    PCRE2_SIZE erroff)
{
    PCRE2_UCHAR msg[256];
    luaL_Buffer b;

    if (pcre2_get_error_message(errcode, msg, sizeof(msg)) < 0)
        msg[0] = '\0';
    luaL_buffinit(L, &b);
    luaL_addstring(&b, "pcre2_compile() failed: ");
    luaL_addstring(&b, (const char *) msg);
    luaL_addstring(&b, " in \"");
    luaL_addlstring(&b, rx, len);
    luaL_addchar(&b, '"');
    if (erroff < len) {
        luaL_addstring(&b, " at \"");
        luaL_addstring(&b, rx + erroff);
        luaL_addchar(&b, '"');
    }
    luaL_pushresult(&b);
}


/* compiles into the new regex re (on the stack top); 0, or -1 with the
 * message pushed */
static int
cs_re_build(lua_State *L, cs_re_t *re, const char *rx, size_t len,
            unsigned flags, uint32_t copts)
{
    int errcode;
    PCRE2_SIZE erroff;
    uint32_t all = 0;

    re->code = pcre2_compile((PCRE2_SPTR) rx, len, copts, &errcode, &erroff,
                             NULL);
    if (re->code == NULL) {
        cs_re_compile_error(L, errcode, rx, len, erroff);
        return -1;
    }
    re->flags = flags;
    if (flags & CS_RE_JIT)
        (void) pcre2_jit_compile(re->code, PCRE2_JIT_COMPLETE);
    (void) pcre2_pattern_info(re->code, PCRE2_INFO_ALLOPTIONS, &all);
    re->utf = (all & PCRE2_UTF) != 0;
    if (flags & CS_RE_DFA) {
        /* the longest match only, no groups (ngx_lua: ovecsize 2) */
        re->md = pcre2_match_data_create(1, NULL);
    } else {
        (void) pcre2_pattern_info(re->code, PCRE2_INFO_CAPTURECOUNT,
                                  &re->ncap);
        (void) pcre2_pattern_info(re->code, PCRE2_INFO_NAMECOUNT,
                                  &re->nnames);
        if (re->nnames > 0) {
            (void) pcre2_pattern_info(re->code, PCRE2_INFO_NAMEENTRYSIZE,
                                      &re->name_size);
            (void) pcre2_pattern_info(re->code, PCRE2_INFO_NAMETABLE,
                                      &re->names);
        }
        re->md = pcre2_match_data_create_from_pattern(re->code, NULL);
    }
    if (re->md == NULL) {
        lua_pushliteral(L, "no memory");
        return -1;
    }
    return 0;
}


/*
 * The compiled regex of the string at iregex with the options at iopts,
 * pushed on the stack; from the cache with "o". On a compile error pushes
 * the message instead and returns NULL. Raises for an unknown option.
 */
static cs_re_t *
cs_re_compile(lua_State *L, int iregex, int iopts)
{
    size_t rlen, olen = 0;
    const char *rx, *opts = "";
    unsigned flags;
    uint32_t copts;
    cs_re_cache_t *cache = lua_touserdata(L, lua_upvalueindex(1));
    cs_re_t *re;

    /* what lua-resty-core raises for a regex that is no string (#regex,
     * then its FFI call; recorded in spec/59) */
    if (lua_type(L, iregex) == LUA_TTABLE)
        luaL_error(L, "bad argument #1 to 'ngx_lua_ffi_compile_regex' "
                      "(cannot convert 'table' to 'const unsigned char *')");
    else if (lua_type(L, iregex) != LUA_TSTRING)
        luaL_error(L, "attempt to get length of local 'regex' (a %s value)",
                   luaL_typename(L, iregex));
    rx = lua_tolstring(L, iregex, &rlen);

    if (lua_toboolean(L, iopts))
        opts = luaL_checklstring(L, iopts, &olen);
    cs_re_opts(L, opts, olen, &flags, &copts);
    if (cache->nojit)
        flags &= ~(unsigned) CS_RE_JIT;

    if (flags & CS_RE_ONCE) {
        lua_getiuservalue(L, lua_upvalueindex(1), 1);
        lua_pushvalue(L, iregex);
        lua_pushlstring(L, "\0", 1);
        lua_pushlstring(L, opts, olen);
        lua_concat(L, 3);                     /* [cache, key] */
        lua_pushvalue(L, -1);
        if (lua_rawget(L, -3) == LUA_TUSERDATA) {
            re = lua_touserdata(L, -1);
            lua_replace(L, -3);
            lua_pop(L, 1);
            return re;
        }
        lua_pop(L, 1);                        /* [cache, key] */
    }

    re = lua_newuserdatauv(L, sizeof(cs_re_t), 0);
    memset(re, 0, sizeof(*re));
    luaL_setmetatable(L, CS_RE_MT);
    if (cs_re_build(L, re, rx, rlen, flags, copts) != 0) {
        lua_replace(L, -2);                   /* the message */
        if (flags & CS_RE_ONCE) {
            lua_replace(L, -3);
            lua_pop(L, 1);
        }
        return NULL;
    }

    if (flags & CS_RE_ONCE) {
        if (cache->n < CS_RE_CACHE_MAX) {
            lua_pushvalue(L, -2);
            lua_pushvalue(L, -2);
            lua_rawset(L, -5);                /* cache[key] = re */
            cache->n++;
            re->cached = 1;
        }
        lua_replace(L, -3);
        lua_pop(L, 1);
    }
    return re;
}

/* }====== */


/* {====== matching ====== */

/* the match options of a search from pos: the UTF-8 check is done by the
 * first search of a subject (it covers the whole string) */
static uint32_t
cs_re_mopts(const cs_re_t *re, const cs_re_run_t *st, const char *s,
            size_t len, size_t pos)
{
    if (re->flags & CS_RE_NOCHECK)
        return PCRE2_NO_UTF_CHECK;
    if (re->utf && st != NULL && st->checked
        && (pos >= len || ((unsigned char) s[pos] & 0xc0) != 0x80))
        return PCRE2_NO_UTF_CHECK;
    return 0;
}


/*
 * Searches s from pos. On a match copies the offsets of group 0..ncap to ov
 * (PCRE2_UNSET for groups that did not take part) and returns how many
 * pairs PCRE2 set (> 0); else PCRE2's code (PCRE2_ERROR_NOMATCH or an
 * error).
 */
static int
cs_re_exec(cs_re_t *re, const char *s, size_t len, size_t pos,
           uint32_t mopts, PCRE2_SIZE *ov)
{
    const PCRE2_SIZE *src;
    uint32_t i;
    int rc;

    if (re->code == NULL)
        return PCRE2_ERROR_NULL;
    if (re->flags & CS_RE_DFA) {
        int ws[CS_RE_DFA_WS];

        rc = pcre2_dfa_match(re->code, (PCRE2_SPTR) s, len, pos, mopts,
                             re->md, NULL, ws, CS_RE_DFA_WS);
        if (rc == 0)            /* more matches than room: the longest */
            rc = 1;
    } else {
        rc = pcre2_match(re->code, (PCRE2_SPTR) s, len, pos, mopts, re->md,
                         NULL);
    }
    if (rc < 0)
        return rc;
    if (rc == 0)                /* cannot happen: md fits the pattern */
        rc = (int) pcre2_get_ovector_count(re->md);
    src = pcre2_get_ovector_pointer(re->md);
    for (i = 0; i <= re->ncap; i++) {
        if (i < (uint32_t) rc) {
            ov[2 * i] = src[2 * i];
            ov[2 * i + 1] = src[2 * i + 1];
        } else {
            ov[2 * i] = PCRE2_UNSET;
            ov[2 * i + 1] = PCRE2_UNSET;
        }
    }
    return rc;
}


/* where the search after an empty match at pos starts: one character on
 * (> len: nothing left) */
static size_t
cs_re_step(const cs_re_t *re, const char *s, size_t len, size_t pos)
{
    pos++;
    if (re->utf) {
        while (pos < len && ((unsigned char) s[pos] & 0xc0) == 0x80)
            pos++;
    }
    return pos;
}


/* pushes group i of a match: the substring, or false when unset */
static void
cs_re_push_group(lua_State *L, const char *s, const PCRE2_SIZE *ov,
                 uint32_t i)
{
    PCRE2_SIZE from = ov[2 * i], to = ov[2 * i + 1];

    if (from == PCRE2_UNSET)
        lua_pushboolean(L, 0);
    else
        lua_pushlstring(L, s + from, to > from ? to - from : 0);
}


/* fills the table at t with a match: [0] to [ncap] (false when unset),
 * then the named groups (with "D", arrays of the matched ones) */
static void
cs_re_captures(lua_State *L, int t, const cs_re_t *re, const char *s,
               const PCRE2_SIZE *ov)
{
    uint32_t i;

    t = lua_absindex(L, t);
    for (i = 0; i <= re->ncap; i++) {
        cs_re_push_group(L, s, ov, i);
        lua_seti(L, t, (lua_Integer) i);
    }
    for (i = 0; i < re->nnames; i++) {
        PCRE2_SPTR e = re->names + (size_t) i * re->name_size;
        uint32_t n = ((uint32_t) e[0] << 8) | e[1];
        const char *name = (const char *) e + 2;

        cs_re_push_group(L, s, ov, n);
        if (!(re->flags & CS_RE_DUPNAMES)) {
            lua_setfield(L, t, name);
        } else if (!lua_toboolean(L, -1)) {
            lua_pop(L, 1);              /* unmatched ones are left out */
        } else if (lua_getfield(L, t, name) == LUA_TTABLE) {
            lua_insert(L, -2);
            lua_seti(L, -2, (lua_Integer) lua_rawlen(L, -2) + 1);
            lua_pop(L, 1);
        } else {
            lua_pop(L, 1);
            lua_createtable(L, 2, 0);
            lua_insert(L, -2);
            lua_rawseti(L, -2, 1);
            lua_setfield(L, t, name);
        }
    }
}


/* room for the offsets of re: buf when it is big enough, else a new
 * userdata (pushed) */
static PCRE2_SIZE *
cs_re_room(lua_State *L, const cs_re_t *re, PCRE2_SIZE *buf)
{
    if (re->ncap < CS_RE_LOCAL)
        return buf;
    return lua_newuserdatauv(L, 2 * ((size_t) re->ncap + 1)
                                    * sizeof(PCRE2_SIZE), 0);
}


/* the message on the stack top after nnil nils; returns the count */
static int
cs_re_fail(lua_State *L, int nnil)
{
    int i;

    for (i = 0; i < nnil; i++) {
        lua_pushnil(L);
        lua_insert(L, -2);
    }
    return nnil + 1;
}


/* pushes "pcre_exec() failed: rc" after nnil nils (lua-resty-core) */
static int
cs_re_exec_error(lua_State *L, int rc, int nnil)
{
    lua_pushfstring(L, "pcre_exec() failed: %d", rc);
    return cs_re_fail(L, nnil);
}


/* the start position from ctx.pos (1-based; absent or <= 0: the start) */
static size_t
cs_re_ctx_pos(lua_State *L, int ctx, size_t len)
{
    lua_Number p;
    int isnum;
    size_t pos = 0;

    if (lua_getfield(L, ctx, "pos") != LUA_TNIL) {
        p = lua_tonumberx(L, -1, &isnum);
        if (!isnum)
            luaL_error(L, "bad ctx.pos (number expected, got %s)",
                       luaL_typename(L, -1));
        if (p >= (lua_Number) len + 2)
            pos = len + 1;              /* PCRE2 says bad offset */
        else if (p > 0)
            pos = (size_t) (p - 1);
    }
    lua_pop(L, 1);
    return pos;
}


/* match (want_caps) and find: the arguments are subject, regex, opts,
 * ctx and res or nth */
static int
cs_re_match_helper(lua_State *L, int want_caps)
{
    PCRE2_SIZE buf[2 * CS_RE_LOCAL], *ov;
    lua_Integer nth = 0;
    size_t len, pos = 0;
    const char *s;
    cs_re_t *re;
    int rc, ctx;

    lua_settop(L, 5);
    s = cs_re_tostring(L, 1, &len);                  /* 6 */
    ctx = lua_toboolean(L, 4);
    if (ctx)
        luaL_checktype(L, 4, LUA_TTABLE);
    if (want_caps && lua_toboolean(L, 5))
        luaL_checktype(L, 5, LUA_TTABLE);
    if (!want_caps)
        nth = luaL_optinteger(L, 5, 0);

    re = cs_re_compile(L, 2, 3);                     /* 7 */
    if (re == NULL)
        return cs_re_fail(L, want_caps ? 1 : 2);
    ov = cs_re_room(L, re, buf);
    if (ctx)
        pos = cs_re_ctx_pos(L, 4, len);

    rc = cs_re_exec(re, s, len, pos, cs_re_mopts(re, NULL, s, len, pos), ov);
    if (rc < 0) {
        cs_re_release(re);
        if (rc == PCRE2_ERROR_NOMATCH) {
            lua_pushnil(L);
            return 1;
        }
        return cs_re_exec_error(L, rc, want_caps ? 1 : 2);
    }

    if (ctx) {
        lua_pushinteger(L, (lua_Integer) ov[1] + 1);
        lua_setfield(L, 4, "pos");
    }

    if (!want_caps) {
        cs_re_release(re);
        if (nth < 0)
            nth = 0;
        if (nth > (lua_Integer) re->ncap) {
            lua_pushnil(L);
            lua_pushnil(L);
            lua_pushliteral(L, "nth out of bound");
            return 3;
        }
        if (nth >= rc || ov[2 * nth] == PCRE2_UNSET) {
            lua_pushnil(L);
            lua_pushnil(L);
            return 2;
        }
        lua_pushinteger(L, (lua_Integer) ov[2 * nth] + 1);
        lua_pushinteger(L, (lua_Integer) ov[2 * nth + 1]);
        return 2;
    }

    if (lua_toboolean(L, 5))
        lua_pushvalue(L, 5);
    else
        lua_createtable(L, (int) re->ncap, (int) re->nnames + 1);
    cs_re_captures(L, -1, re, s, ov);
    cs_re_release(re);
    return 1;
}


static int
cs_re_match(lua_State *L)
{
    return cs_re_match_helper(L, 1);
}


static int
cs_re_find(lua_State *L)
{
    return cs_re_match_helper(L, 0);
}

/* }====== */


/* {====== gmatch ====== */

/* an exhausted or failed iterator drops its subject and regex */
static void
cs_re_gmatch_end(lua_State *L, cs_re_run_t *st, cs_re_t *re)
{
    st->done = 1;
    cs_re_release(re);
    lua_pushnil(L);
    lua_replace(L, lua_upvalueindex(1));
    lua_pushnil(L);
    lua_replace(L, lua_upvalueindex(2));
}


/* upvalues: subject, regex, state */
static int
cs_re_gmatch_iter(lua_State *L)
{
    cs_re_run_t *st = lua_touserdata(L, lua_upvalueindex(3));
    cs_re_t *re;
    const char *s;
    size_t len, next;
    int rc;

    if (st->done) {
        lua_pushnil(L);
        return 1;
    }
    s = lua_tolstring(L, lua_upvalueindex(1), &len);
    re = lua_touserdata(L, lua_upvalueindex(2));

    rc = cs_re_exec(re, s, len, st->pos,
                    cs_re_mopts(re, st, s, len, st->pos), st->ov);
    if (rc < 0) {
        cs_re_gmatch_end(L, st, re);
        if (rc != PCRE2_ERROR_NOMATCH)
            return cs_re_exec_error(L, rc, 1);
        lua_pushnil(L);
        return 1;
    }
    st->checked = 1;

    next = st->ov[1];
    if (st->ov[1] == st->ov[0])
        next = cs_re_step(re, s, len, next);
    st->pos = next;

    lua_settop(L, 0);
    lua_createtable(L, (int) re->ncap, (int) re->nnames + 1);
    cs_re_captures(L, 1, re, s, st->ov);
    if (next > len)                  /* the last match was at the end */
        cs_re_gmatch_end(L, st, re);
    return 1;
}


static int
cs_re_gmatch(lua_State *L)
{
    cs_re_run_t *st;
    cs_re_t *re;

    lua_settop(L, 3);
    cs_re_tostring(L, 1, NULL);                      /* 4 */
    re = cs_re_compile(L, 2, 3);                     /* 5 */
    if (re == NULL)
        return cs_re_fail(L, 1);
    st = lua_newuserdatauv(L, sizeof(cs_re_run_t)
                                  + 2 * ((size_t) re->ncap + 1)
                                        * sizeof(PCRE2_SIZE), 0);
    memset(st, 0, sizeof(*st));
    lua_pushcclosure(L, cs_re_gmatch_iter, 3);
    return 1;
}

/* }====== */


/* {====== sub and gsub ====== */

/* adds the literal piece [from, to) of the template */
static void
cs_re_tpl_lit(cs_re_tpl_t *tpl, size_t from, size_t to)
{
    if (to > from) {
        tpl->seg[tpl->n].off = from;
        tpl->seg[tpl->n++].len = to - from;
    }
}


/* the group number of the name t[0..n) of a ${...} or $...: -1 when it
 * is not a number (ngx_lua: named captures are not supported) */
static int
cs_re_tpl_group(const char *t, size_t n, size_t *group)
{
    size_t j, g = 0;

    for (j = 0; j < n; j++) {
        if (t[j] < '0' || t[j] > '9')
            return -1;
        if (g < 100000000)          /* no such group: expands to "" */
            g = g * 10 + (size_t) (t[j] - '0');
    }
    *group = g;
    return 0;
}


static int
cs_re_is_name(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z')
           || (c >= 'A' && c <= 'Z') || c == '_';
}


/*
 * Parses the replacement template at idx as ngx_lua's script compiler
 * does: $0..$N and ${N} are groups, $$ is a dollar; $name, ${name}, an
 * unclosed ${, a lone $ are errors. Pushes the parsed template, or returns
 * -1 (the reason is not reported: OpenResty logs it, corosched has no
 * error log).
 */
static int
cs_re_template(lua_State *L, int idx)
{
    size_t len, i, lit = 0, ndollar = 0, start, nlen, group;
    const char *t = lua_tolstring(L, idx, &len);
    cs_re_tpl_t *tpl;
    int bracket;

    for (i = 0; i < len; i++)
        ndollar += t[i] == '$';
    tpl = lua_newuserdatauv(L, sizeof(cs_re_tpl_t)
                                   + (2 * ndollar + 1) * sizeof(cs_re_seg_t),
                            0);
    tpl->n = 0;

    for (i = 0; i < len; /* void */) {
        if (t[i] != '$') {
            i++;
            continue;
        }
        cs_re_tpl_lit(tpl, lit, i);
        if (++i == len)
            return -1;                  /* invalid capturing variable */
        if (t[i] == '$') {
            cs_re_tpl_lit(tpl, i, i + 1);
            lit = ++i;
            continue;
        }
        bracket = t[i] == '{';
        if (bracket && ++i == len)
            return -1;
        start = i;
        if (!bracket && t[i] >= '0' && t[i] <= '9') {
            while (i < len && t[i] >= '0' && t[i] <= '9')
                i++;                    /* $12abc: group 12, then "abc" */
        } else {
            while (i < len && cs_re_is_name(t[i]))
                i++;
        }
        nlen = i - start;
        if (bracket) {
            if (i == len || t[i] != '}')
                return -1;              /* the closing bracket is missing */
            i++;
        }
        if (nlen == 0)
            return -1;                  /* invalid capturing variable */
        if (cs_re_tpl_group(t + start, nlen, &group) != 0)
            return -1;                  /* named captures not supported */
        tpl->seg[tpl->n].off = group;
        tpl->seg[tpl->n++].len = CS_RE_CAPTURE;
        lit = i;
    }
    cs_re_tpl_lit(tpl, lit, len);
    return 0;
}


/* appends the template at tidx (parsed: tpl) expanded for a match */
static void
cs_re_expand(luaL_Buffer *b, const cs_re_tpl_t *tpl, const char *t,
             const cs_re_t *re, const char *s, const PCRE2_SIZE *ov)
{
    size_t k;

    for (k = 0; k < tpl->n; k++) {
        const cs_re_seg_t *g = &tpl->seg[k];
        size_t n = g->off;

        if (g->len != CS_RE_CAPTURE) {
            luaL_addlstring(b, t + g->off, g->len);
        } else if (n <= re->ncap && ov[2 * n] != PCRE2_UNSET
                   && ov[2 * n + 1] > ov[2 * n]) {
            luaL_addlstring(b, s + ov[2 * n], ov[2 * n + 1] - ov[2 * n]);
        }
    }
}


/* the bytes of the subject before the match at ov that are not copied */
static size_t
cs_re_prefix(const cs_re_run_t *st)
{
    return st->ov[0] > st->cp ? st->ov[0] - st->cp : 0;
}


/* records the match in st->ov: where the next search starts, whether
 * there is one */
static void
cs_re_advance(cs_re_run_t *st, const cs_re_t *re, const char *s, size_t len)
{
    st->count++;
    st->end = st->ov[1];
    st->next = st->ov[1];
    st->stop = !st->global;
    if (st->ov[1] == st->ov[0]) {
        st->next = cs_re_step(re, s, len, st->next);
        if (st->next > len)
            st->stop = 1;
    }
}


/*
 * The stack of sub/gsub: 1 subject, 2 regex, 3 replace, 4 opts,
 * 5 subject string, 6 compiled regex, 7 state, 8 template or pieces.
 */
static int
cs_re_sub_tpl(lua_State *L, cs_re_t *re, cs_re_run_t *st)
{
    size_t len, tlen;
    const char *s = lua_tolstring(L, 5, &len);
    const char *t = lua_tolstring(L, 3, &tlen);
    const cs_re_tpl_t *tpl = lua_touserdata(L, 8);
    luaL_Buffer b;
    int rc;

    luaL_buffinit(L, &b);
    for (;;) {
        rc = cs_re_exec(re, s, len, st->pos,
                        cs_re_mopts(re, st, s, len, st->pos), st->ov);
        if (rc == PCRE2_ERROR_NOMATCH)
            break;
        if (rc < 0) {
            cs_re_release(re);
            return cs_re_exec_error(L, rc, 2);
        }
        st->checked = 1;
        cs_re_advance(st, re, s, len);
        luaL_addlstring(&b, s + st->cp, cs_re_prefix(st));
        cs_re_expand(&b, tpl, t, re, s, st->ov);
        st->cp = st->end;
        st->pos = st->next;
        if (st->stop)
            break;
    }
    cs_re_release(re);
    if (st->count == 0) {
        lua_pushvalue(L, 5);
        lua_pushinteger(L, 0);
        return 2;
    }
    luaL_addlstring(&b, s + st->cp, len - st->cp);
    luaL_pushresult(&b);
    lua_pushinteger(L, st->count);
    return 2;
}


/* takes the replacement on the stack top (tostring'ed) as the next piece
 * of the result; returns whether the search is over */
static int
cs_re_took(lua_State *L, cs_re_run_t *st)
{
    cs_re_tostring(L, -1, NULL);
    lua_rawseti(L, 8, ++st->npieces);
    lua_pop(L, 1);
    st->cp = st->end;
    st->pos = st->next;
    return st->stop;
}


/* sub/gsub with a replacement function; ctx 1: resumed after the
 * function returned (its result on the stack top) */
static int
cs_re_sub_fn(lua_State *L, int status, lua_KContext ctx)
{
    cs_re_t *re = lua_touserdata(L, 6);
    cs_re_run_t *st = lua_touserdata(L, 7);
    size_t len;
    const char *s = lua_tolstring(L, 5, &len);
    luaL_Buffer b;
    lua_Integer i;
    int rc, more;

    (void) status;
    more = !ctx || !cs_re_took(L, st);
    while (more) {
        rc = cs_re_exec(re, s, len, st->pos,
                        cs_re_mopts(re, st, s, len, st->pos), st->ov);
        if (rc == PCRE2_ERROR_NOMATCH)
            break;
        if (rc < 0) {
            cs_re_release(re);
            return cs_re_exec_error(L, rc, 2);
        }
        st->checked = 1;
        cs_re_advance(st, re, s, len);
        lua_pushlstring(L, s + st->cp, cs_re_prefix(st));
        lua_rawseti(L, 8, ++st->npieces);
        lua_pushvalue(L, 3);
        lua_createtable(L, (int) re->ncap, (int) re->nnames + 1);
        cs_re_captures(L, -1, re, s, st->ov);
        lua_callk(L, 1, 1, 1, cs_re_sub_fn);
        more = !cs_re_took(L, st);
    }
    cs_re_release(re);
    if (st->count == 0) {
        lua_pushvalue(L, 5);
        lua_pushinteger(L, 0);
        return 2;
    }
    luaL_buffinit(L, &b);
    for (i = 1; i <= st->npieces; i++) {
        lua_rawgeti(L, 8, i);
        luaL_addvalue(&b);
    }
    luaL_addlstring(&b, s + st->cp, len - st->cp);
    luaL_pushresult(&b);
    lua_pushinteger(L, st->count);
    return 2;
}


static int
cs_re_sub_helper(lua_State *L, int global)
{
    int func = lua_type(L, 3) == LUA_TFUNCTION;
    cs_re_run_t *st;
    cs_re_t *re;

    lua_settop(L, 4);
    cs_re_tostring(L, 1, NULL);                      /* 5 */
    if (!func) {
        cs_re_tostring(L, 3, NULL);
        lua_replace(L, 3);
    }
    re = cs_re_compile(L, 2, 4);                     /* 6 */
    if (re == NULL)
        return cs_re_fail(L, 2);
    st = lua_newuserdatauv(L, sizeof(cs_re_run_t)    /* 7 */
                                  + 2 * ((size_t) re->ncap + 1)
                                        * sizeof(PCRE2_SIZE), 0);
    memset(st, 0, sizeof(*st));
    st->global = global;
    if (func) {
        lua_newtable(L);                             /* 8 */
        return cs_re_sub_fn(L, LUA_OK, 0);
    }
    if (cs_re_template(L, 3) != 0) {                 /* 8 */
        cs_re_release(re);
        lua_pushliteral(L, "failed to compile the replacement template");
        return cs_re_fail(L, 2);
    }
    return cs_re_sub_tpl(L, re, st);
}


static int
cs_re_sub(lua_State *L)
{
    return cs_re_sub_helper(L, 0);
}


static int
cs_re_gsub(lua_State *L)
{
    return cs_re_sub_helper(L, 1);
}

/* }====== */


/* re.cached() -> the number of regexes the "o" cache holds (lua-resty-core's
 * ngx.re.opt refuses to change the JIT stack once there are some) */
static int
cs_re_cached(lua_State *L)
{
    const cs_re_cache_t *cache = lua_touserdata(L, lua_upvalueindex(1));

    lua_pushinteger(L, cache->n);
    return 1;
}


static const luaL_Reg cs_re_funcs[] = {
    {"cached", cs_re_cached},
    {"match", cs_re_match},
    {"find", cs_re_find},
    {"gmatch", cs_re_gmatch},
    {"sub", cs_re_sub},
    {"gsub", cs_re_gsub},
    {NULL, NULL}
};


CS_EXPORT int luaopen_corosched_re(lua_State *L);

CS_EXPORT int
luaopen_corosched_re(lua_State *L)
{
    cs_re_cache_t *cache;
    const char *preload;

    if (luaL_newmetatable(L, CS_RE_MT)) {
        lua_pushcfunction(L, cs_re_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_pop(L, 1);

    lua_newtable(L);
    cache = lua_newuserdatauv(L, sizeof(cs_re_cache_t), 1);
    cache->n = 0;
    /* PCRE2's JIT code reads whole words past the end of the subject, on
     * purpose; memcheck reports those bytes as uninitialised. Under
     * valgrind (its preload library is in LD_PRELOAD), no JIT. */
    preload = getenv("LD_PRELOAD");
    cache->nojit = preload != NULL && strstr(preload, "vgpreload") != NULL;
    lua_newtable(L);
    lua_setiuservalue(L, -2, 1);
    luaL_setfuncs(L, cs_re_funcs, 1);
    return 1;
}
