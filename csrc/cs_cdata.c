/*
 * Byte arrays with LuaJIT FFI's API, for corosched.ngx's "ffi" stand-in.
 * OpenResty libraries use FFI char buffers as scratch space
 * (lua-resty-websocket 0.08+ masks every frame in a `char[?]` buffer:
 * ffi.typeof("char[?]"), ffi.new(ct, n), buf[i] = v, ffi.string(buf, n)).
 * Stock Lua has no FFI; this gives that one corner of it, bounds-checked:
 *
 *   core.ffi.typeof(decl)          -> ctype ("char[?]", "uint8_t[16]"...)
 *   core.ffi.new(ct [, n] [, init...]) / ct(...) -> array, zero-filled
 *   core.ffi.string(p [, len])     -> Lua string
 *   core.ffi.copy(dst, src [, len]), core.ffi.fill(dst, len [, c])
 *   core.ffi.sizeof(ct | cdata [, n])
 *
 * decl: char, signed char, int8_t, unsigned char or uint8_t, then [?]
 * (n given to new) or [N]. Elements read as numbers (char as the
 * platform's char: signed on x86); writes convert a number (truncated,
 * wrapped to 8 bits) or a boolean, as LuaJIT's do. `p + n`, `p - n` give
 * a `char *` into the same array; `p - q` the distance. Initializers as
 * LuaJIT's: one number repeated, a list, a table (from [0] or [1]), or a
 * string (with its zero byte when there is room).
 *
 * Where LuaJIT reads or writes out of bounds (an index past the end, a
 * length longer than the buffer, a string without a zero byte), these
 * raise instead. Other C types raise "not available".
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <lua.h>
#include <lauxlib.h>

#include "cs_sched.h"

#define CS_CTYPE_MT "corosched.ctype"
#define CS_CDATA_MT "corosched.cdata"
#define CS_CDATA_MAX 0x7fffff00u /* bytes, as LuaJIT's limit */

typedef struct cs_ctype_s {
    unsigned char sgn; /* elements read as signed */
    unsigned char vla; /* [?]: size given to new */
    unsigned char ptr; /* char *: made by arithmetic only */
    size_t n;          /* [N] */
} cs_ctype_t;

typedef struct cs_cdata_s {
    cs_ctype_t t;
    unsigned char *base; /* the array's first byte */
    size_t size;         /* the array's size */
    size_t off;          /* element 0 of this object within the array */
    unsigned char mem[]; /* an array's own bytes (a pointer has none) */
} cs_cdata_t;

static const char cs_ffi_why[] =
    "stock Lua has no LuaJIT FFI; byte arrays only: char, signed char, "
    "int8_t, unsigned char, uint8_t, as [?] or [N]";


/* "char [?]", "unsigned char [16]", "char *" into buf */
static const char *
cs_ctype_name(const cs_ctype_t *t, char *buf, size_t len)
{
    const char *e = t->sgn ? "char" : "unsigned char";

    if (t->ptr)
        snprintf(buf, len, "%s *", e);
    else if (t->vla)
        snprintf(buf, len, "%s [?]", e);
    else
        snprintf(buf, len, "%s [%zu]", e, t->n);
    return buf;
}


static const char *
cs_skip(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n')
        s++;
    return s;
}


/* a byte type's name at s: its end, or NULL */
static const char *
cs_word(const char *s, const char *w)
{
    size_t n = strlen(w);

    if (strncmp(s, w, n) != 0)
        return NULL;
    s += n;
    return (*s == '\0' || *s == ' ' || *s == '\t' || *s == '[') ? s : NULL;
}


/* parses decl into t; 0 when it is not a byte array's type */
static int
cs_ctype_parse(const char *decl, cs_ctype_t *t)
{
    const char *s = cs_skip(decl), *e;
    size_t n = 0;

    memset(t, 0, sizeof(*t));
    if ((e = cs_word(s, "unsigned")) != NULL) {
        if ((e = cs_word(cs_skip(e), "char")) == NULL)
            return 0;
    } else if ((e = cs_word(s, "signed")) != NULL) {
        if ((e = cs_word(cs_skip(e), "char")) == NULL)
            return 0;
        t->sgn = 1;
    } else if ((e = cs_word(s, "char")) != NULL) {
        t->sgn = CHAR_MIN < 0;
    } else if ((e = cs_word(s, "int8_t")) != NULL) {
        t->sgn = 1;
    } else if ((e = cs_word(s, "uint8_t")) == NULL) {
        return 0;
    }
    s = cs_skip(e);
    if (*s++ != '[')
        return 0;
    s = cs_skip(s);
    if (*s == '?') {
        t->vla = 1;
        s++;
    } else {
        if (*s < '0' || *s > '9')
            return 0;
        while (*s >= '0' && *s <= '9') {
            n = n * 10 + (size_t) (*s++ - '0');
            if (n > CS_CDATA_MAX)
                return 0;
        }
        t->n = n;
    }
    s = cs_skip(s);
    if (*s++ != ']')
        return 0;
    return *cs_skip(s) == '\0';
}


static cs_cdata_t *
cs_tocdata(lua_State *L, int idx)
{
    return luaL_testudata(L, idx, CS_CDATA_MT);
}


/* the ctype at idx: a ctype, a declaration or a cdata's own */
static cs_ctype_t
cs_checkctype(lua_State *L, int idx)
{
    cs_ctype_t t, *ct = luaL_testudata(L, idx, CS_CTYPE_MT);
    cs_cdata_t *cd;
    const char *decl;

    if (ct != NULL)
        return *ct;
    if ((cd = cs_tocdata(L, idx)) != NULL)
        return cd->t;
    decl = luaL_checkstring(L, idx);
    if (!cs_ctype_parse(decl, &t))
        luaL_error(L, "corosched.ngx: ffi C type '%s' is not available (%s)",
                   decl, cs_ffi_why);
    return t;
}


/* a Lua number as LuaJIT converts it to an integer (NaN, huge: 0) */
static lua_Integer
cs_num2int(lua_State *L, int idx)
{
    lua_Number d;
    int isint;
    lua_Integer i = lua_tointegerx(L, idx, &isint);

    if (isint)
        return i;
    d = lua_tonumber(L, idx);
    if (!(d > -9.2e18 && d < 9.2e18))
        return 0;
    return (lua_Integer) d;
}


/* the value at idx as a byte of t's element type */
static unsigned char
cs_tobyte(lua_State *L, int idx, const cs_ctype_t *t)
{
    switch (lua_type(L, idx)) {
    case LUA_TNUMBER:
        return (unsigned char) ((uint64_t) cs_num2int(L, idx) & 0xff);
    case LUA_TBOOLEAN:
        return (unsigned char) lua_toboolean(L, idx);
    default:
        return (unsigned char) luaL_error(L, "cannot convert '%s' to '%s'",
                                          luaL_typename(L, idx),
                                          t->sgn ? "char" : "unsigned char");
    }
}


/* a number argument as an integer (LuaJIT truncates), or raise */
static lua_Integer
cs_checkint(lua_State *L, int idx)
{
    if (lua_type(L, idx) != LUA_TNUMBER) {
        if (lua_isnoneornil(L, idx) && lua_gettop(L) < idx)
            luaL_argerror(L, idx, "value expected");
        luaL_argerror(L, idx, lua_pushfstring(L, "cannot convert '%s' to 'int'",
                                              luaL_typename(L, idx)));
    }
    return cs_num2int(L, idx);
}


static void
cs_oob(lua_State *L, const cs_cdata_t *cd, const char *what, lua_Integer i)
{
    char name[64];

    luaL_error(L, "corosched.ngx: ffi: %s %I out of bounds of '%s' (%I bytes "
               "from element 0)", what, i,
               cs_ctype_name(&cd->t, name, sizeof(name)),
               (lua_Integer) (cd->size - cd->off));
}


/* the address of element i, bounds-checked */
static unsigned char *
cs_elem(lua_State *L, cs_cdata_t *cd, int kidx)
{
    char name[64];
    lua_Integer i;

    if (lua_type(L, kidx) != LUA_TNUMBER) {
        if (lua_type(L, kidx) == LUA_TSTRING)
            luaL_error(L, "'%s' has no member named '%s'",
                       cs_ctype_name(&cd->t, name, sizeof(name)),
                       lua_tostring(L, kidx));
        luaL_error(L, "'%s' cannot be indexed with '%s'",
                   cs_ctype_name(&cd->t, name, sizeof(name)),
                   luaL_typename(L, kidx));
    }
    i = cs_num2int(L, kidx);
    if (i < -(lua_Integer) cd->off || i >= (lua_Integer) (cd->size - cd->off))
        cs_oob(L, cd, "index", i);
    return cd->base + cd->off + i;
}


/* how many bytes from p's element 0 on: a cdata's rest, or a string's
 * length plus its zero byte; raise for anything else */
static const unsigned char *
cs_checkptr(lua_State *L, int idx, size_t *avail, int *isstr)
{
    cs_cdata_t *cd = cs_tocdata(L, idx);
    const char *s;
    size_t len;

    if (cd != NULL) {
        *avail = cd->size - cd->off;
        *isstr = 0;
        return cd->base + cd->off;
    }
    if (lua_type(L, idx) != LUA_TSTRING)
        luaL_argerror(L, idx, lua_pushfstring(L,
                      "cannot convert '%s' to 'const char *'",
                      luaL_typename(L, idx)));
    s = lua_tolstring(L, idx, &len);
    *avail = len + 1;
    *isstr = 1;
    return (const unsigned char *) s;
}


/* a length argument within avail bytes */
static size_t
cs_checklen(lua_State *L, int idx, size_t avail, const char *what)
{
    lua_Integer n = cs_checkint(L, idx);

    if (n < 0 || (uint64_t) n > avail)
        luaL_error(L, "corosched.ngx: ffi.%s: length %I out of bounds (%I "
                   "bytes there)", what, n, (lua_Integer) avail);
    return (size_t) n;
}


/* ---- ctypes ------------------------------------------------------------ */

static int
cs_ffi_typeof(lua_State *L)
{
    cs_ctype_t t = cs_checkctype(L, 1), *ct;
    char name[64];

    cs_ctype_name(&t, name, sizeof(name));
    /* one ctype per type, as LuaJIT's (typeof(d) == typeof(d)) */
    lua_getfield(L, LUA_REGISTRYINDEX, CS_CTYPE_MT ".cache");
    if (lua_getfield(L, -1, name) != LUA_TNIL)
        return 1;
    lua_pop(L, 1);
    ct = lua_newuserdatauv(L, sizeof(*ct), 0);
    *ct = t;
    luaL_setmetatable(L, CS_CTYPE_MT);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, name);
    return 1;
}


static int
cs_ctype__tostring(lua_State *L)
{
    char name[64];

    lua_pushfstring(L, "ctype<%s>",
                    cs_ctype_name(luaL_checkudata(L, 1, CS_CTYPE_MT), name,
                                  sizeof(name)));
    return 1;
}


/* ---- new ----------------------------------------------------------------- */

/* fills cd from the initializers at first..top (LuaJIT's rules) */
static void
cs_cdata_init(lua_State *L, cs_cdata_t *cd, int first)
{
    int top = lua_gettop(L), ninit = top - first + 1, i;
    size_t n = cd->size, k, len;
    char name[64];
    const char *s;

    if (ninit <= 0)
        return;
    if (ninit == 1 && lua_type(L, first) == LUA_TSTRING) {
        s = lua_tolstring(L, first, &len);
        if (len > n && cd->t.vla)
            luaL_error(L, "corosched.ngx: ffi.new: a string of %I bytes "
                       "does not fit '%s' of %I", (lua_Integer) len,
                       cs_ctype_name(&cd->t, name, sizeof(name)),
                       (lua_Integer) n);
        memcpy(cd->mem, s, len + 1 < n ? len + 1 : n);
        return;
    }
    if (ninit == 1 && lua_type(L, first) == LUA_TTABLE) {
        lua_Integer from = lua_geti(L, first, 0) == LUA_TNIL ? 1 : 0;

        lua_pop(L, 1);
        for (k = 0;; k++) {
            if (lua_geti(L, first, from + (lua_Integer) k) == LUA_TNIL) {
                lua_pop(L, 1);
                break;
            }
            if (k >= n)
                luaL_error(L, "too many initializers for '%s'",
                           cs_ctype_name(&cd->t, name, sizeof(name)));
            cd->mem[k] = cs_tobyte(L, -1, &cd->t);
            lua_pop(L, 1);
        }
        if (k == 1 && !cd->t.vla)
            memset(cd->mem, cd->mem[0], n);
        return;
    }
    if ((size_t) ninit > n)
        luaL_error(L, "too many initializers for '%s'",
                   cs_ctype_name(&cd->t, name, sizeof(name)));
    for (i = 0; i < ninit; i++)
        cd->mem[i] = cs_tobyte(L, first + i, &cd->t);
    if (ninit == 1)
        memset(cd->mem, cd->mem[0], n);
}


static int
cs_ffi_new(lua_State *L)
{
    cs_ctype_t t = cs_checkctype(L, 1);
    cs_cdata_t *cd;
    size_t n = t.n;
    int first = 2;
    char name[64];

    if (t.ptr)
        return luaL_error(L, "corosched.ngx: ffi.new('%s') is not available "
                          "(%s)", cs_ctype_name(&t, name, sizeof(name)),
                          cs_ffi_why);
    if (t.vla) {
        lua_Integer k = cs_checkint(L, 2);

        if (k < 0 || k > CS_CDATA_MAX)
            return luaL_argerror(L, 1, "size of C type is unknown or too "
                                 "large");
        n = (size_t) k;
        first = 3;
    }
    cd = lua_newuserdatauv(L, sizeof(*cd) + n, 0);
    cd->t = t;
    cd->base = cd->mem;
    cd->size = n;
    cd->off = 0;
    memset(cd->mem, 0, n);
    luaL_setmetatable(L, CS_CDATA_MT);
    lua_insert(L, first); /* below the initializers */
    cs_cdata_init(L, cd, first + 1);
    lua_settop(L, first);
    return 1;
}


static int
cs_ctype__call(lua_State *L)
{
    return cs_ffi_new(L);
}


/* ---- cdata --------------------------------------------------------------- */

static int
cs_cdata__index(lua_State *L)
{
    cs_cdata_t *cd = luaL_checkudata(L, 1, CS_CDATA_MT);
    unsigned char b = *cs_elem(L, cd, 2);

    lua_pushinteger(L, cd->t.sgn ? (lua_Integer) (signed char) b : b);
    return 1;
}


static int
cs_cdata__newindex(lua_State *L)
{
    cs_cdata_t *cd = luaL_checkudata(L, 1, CS_CDATA_MT);
    unsigned char *p = cs_elem(L, cd, 2);

    *p = cs_tobyte(L, 3, &cd->t);
    return 0;
}


/* a char * at element k of the array cd points into */
static int
cs_cdata_ptr(lua_State *L, int idx, lua_Integer k)
{
    cs_cdata_t *cd = cs_tocdata(L, idx), *p;

    if (k < -(lua_Integer) cd->off || k > (lua_Integer) (cd->size - cd->off))
        cs_oob(L, cd, "pointer offset", k);
    p = lua_newuserdatauv(L, sizeof(*p), 1);
    *p = *cd;
    p->t.ptr = 1;
    p->t.vla = 0;
    p->off = cd->off + (size_t) k;
    luaL_setmetatable(L, CS_CDATA_MT);
    /* the array itself keeps the bytes alive */
    if (cd->t.ptr)
        lua_getiuservalue(L, idx, 1);
    else
        lua_pushvalue(L, idx);
    lua_setiuservalue(L, -2, 1);
    return 1;
}


/* LuaJIT's message for an operand that is not a number */
static int
cs_cdata_arith_error(lua_State *L)
{
    char a[64], b[64];
    cs_cdata_t *x = cs_tocdata(L, 1), *y = cs_tocdata(L, 2);

    return luaL_error(L, "attempt to perform arithmetic on '%s' and '%s'",
                      x ? cs_ctype_name(&x->t, a, sizeof(a))
                        : luaL_typename(L, 1),
                      y ? cs_ctype_name(&y->t, b, sizeof(b))
                        : luaL_typename(L, 2));
}


static int
cs_cdata__add(lua_State *L)
{
    int c = cs_tocdata(L, 1) != NULL ? 1 : 2;

    if (lua_type(L, 3 - c) != LUA_TNUMBER)
        return cs_cdata_arith_error(L);
    return cs_cdata_ptr(L, c, cs_num2int(L, 3 - c));
}


static int
cs_cdata__sub(lua_State *L)
{
    cs_cdata_t *a = cs_tocdata(L, 1), *b = cs_tocdata(L, 2);

    if (a != NULL && lua_type(L, 2) == LUA_TNUMBER) {
        lua_Integer k = cs_num2int(L, 2);

        /* (-mininteger overflows; any offset that large is out of bounds) */
        return cs_cdata_ptr(L, 1, k == LUA_MININTEGER ? LUA_MAXINTEGER : -k);
    }
    if (a == NULL || b == NULL)
        return cs_cdata_arith_error(L);
    if (a->base != b->base)
        return luaL_error(L, "corosched.ngx: ffi: difference of pointers "
                          "into different arrays");
    lua_pushinteger(L, (lua_Integer) a->off - (lua_Integer) b->off);
    return 1;
}


static int
cs_cdata__eq(lua_State *L)
{
    cs_cdata_t *a = cs_tocdata(L, 1), *b = cs_tocdata(L, 2);

    lua_pushboolean(L, a != NULL && b != NULL && a->base == b->base
                           && a->off == b->off);
    return 1;
}


static int
cs_cdata__len(lua_State *L)
{
    char name[64];
    cs_cdata_t *cd = luaL_checkudata(L, 1, CS_CDATA_MT);

    return luaL_error(L, "attempt to get length of '%s'",
                      cs_ctype_name(&cd->t, name, sizeof(name)));
}


static int
cs_cdata__tostring(lua_State *L)
{
    char name[64];
    cs_cdata_t *cd = luaL_checkudata(L, 1, CS_CDATA_MT);

    lua_pushfstring(L, "cdata<%s>: %p",
                    cs_ctype_name(&cd->t, name, sizeof(name)),
                    (void *) (cd->base + cd->off));
    return 1;
}


/* ---- string, copy, fill, sizeof ------------------------------------------ */

static int
cs_ffi_string(lua_State *L)
{
    size_t avail, len;
    int isstr;
    const unsigned char *p = cs_checkptr(L, 1, &avail, &isstr), *z;

    if (lua_isnoneornil(L, 2)) {
        z = memchr(p, '\0', avail);
        if (z == NULL)
            return luaL_error(L, "corosched.ngx: ffi.string: no zero byte "
                              "in the %I bytes there", (lua_Integer) avail);
        len = (size_t) (z - p);
    } else {
        len = cs_checklen(L, 2, isstr ? avail - 1 : avail, "string");
    }
    lua_pushlstring(L, (const char *) p, len);
    return 1;
}


static cs_cdata_t *
cs_checkdst(lua_State *L, const char *what)
{
    cs_cdata_t *cd = cs_tocdata(L, 1);

    if (cd == NULL)
        luaL_argerror(L, 1, lua_pushfstring(L, "cannot convert '%s' to "
                      "'void *' (ffi.%s: a byte array)", luaL_typename(L, 1),
                      what));
    return cd;
}


static int
cs_ffi_copy(lua_State *L)
{
    cs_cdata_t *dst = cs_checkdst(L, "copy");
    size_t avail, len, room = dst->size - dst->off;
    int isstr;
    const unsigned char *src = cs_checkptr(L, 2, &avail, &isstr);

    if (lua_isnoneornil(L, 3)) {
        if (!isstr)
            return luaL_argerror(L, 3, "value expected");
        len = avail; /* the string and its zero byte */
    } else {
        len = cs_checklen(L, 3, avail, "copy");
    }
    if (len > room)
        return luaL_error(L, "corosched.ngx: ffi.copy: %I bytes do not fit "
                          "the %I there", (lua_Integer) len,
                          (lua_Integer) room);
    memmove(dst->base + dst->off, src, len);
    return 0;
}


static int
cs_ffi_fill(lua_State *L)
{
    cs_cdata_t *dst = cs_checkdst(L, "fill");
    size_t len = cs_checklen(L, 2, dst->size - dst->off, "fill");
    int c = lua_isnoneornil(L, 3) ? 0 : (int) cs_tobyte(L, 3, &dst->t);

    memset(dst->base + dst->off, c, len);
    return 0;
}


static int
cs_ffi_sizeof(lua_State *L)
{
    cs_cdata_t *cd = cs_tocdata(L, 1);
    cs_ctype_t t;
    lua_Integer n;

    if (cd != NULL) {
        lua_pushinteger(L, cd->t.ptr ? (lua_Integer) sizeof(void *)
                                     : (lua_Integer) cd->size);
        return 1;
    }
    t = cs_checkctype(L, 1);
    if (!t.vla) {
        lua_pushinteger(L, t.ptr ? (lua_Integer) sizeof(void *)
                                 : (lua_Integer) t.n);
        return 1;
    }
    n = cs_checkint(L, 2);
    if (n < 0 || n > CS_CDATA_MAX)
        return 0;
    lua_pushinteger(L, n);
    return 1;
}


void
cs_cdata_open(lua_State *L, cs_sched_t *S)
{
    static const luaL_Reg ctype_meta[] = {
        { "__call", cs_ctype__call },
        { "__tostring", cs_ctype__tostring },
        { NULL, NULL }
    };
    static const luaL_Reg cdata_meta[] = {
        { "__index", cs_cdata__index },
        { "__newindex", cs_cdata__newindex },
        { "__add", cs_cdata__add },
        { "__sub", cs_cdata__sub },
        { "__eq", cs_cdata__eq },
        { "__len", cs_cdata__len },
        { "__tostring", cs_cdata__tostring },
        { NULL, NULL }
    };
    static const luaL_Reg funcs[] = {
        { "typeof", cs_ffi_typeof },
        { "new", cs_ffi_new },
        { "string", cs_ffi_string },
        { "copy", cs_ffi_copy },
        { "fill", cs_ffi_fill },
        { "sizeof", cs_ffi_sizeof },
        { NULL, NULL }
    };

    (void) S;
    if (luaL_newmetatable(L, CS_CTYPE_MT))
        luaL_setfuncs(L, ctype_meta, 0);
    lua_pop(L, 1);
    if (luaL_newmetatable(L, CS_CDATA_MT))
        luaL_setfuncs(L, cdata_meta, 0);
    lua_pop(L, 1);
    /* the ctypes made so far, by name; weak values */
    lua_newtable(L);
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "v");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_setfield(L, LUA_REGISTRYINDEX, CS_CTYPE_MT ".cache");
    luaL_newlib(L, funcs);
    lua_setfield(L, -2, "ffi");
}
