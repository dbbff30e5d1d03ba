/*
 * cs.crypto: OpenSSL's digests, HMAC, PBKDF2 and random bytes, which
 * corosched.ngx builds the lua-resty-string and lua-resty-openssl modules
 * on (resty.sha256, resty.random, resty.openssl.digest...: FFI modules,
 * so not usable on stock Lua). Nothing here parks: each call is a pure
 * computation.
 *
 *   cs.crypto.digest(alg)         -> digest object | nil, err
 *     d:update(s)                 -> true
 *     d:final()                   -> the digest (binary); d starts afresh
 *     d:reset()                   -> true
 *     d:size()                    -> the digest's length in bytes
 *   cs.crypto.hmac(alg, key, msg) -> the MAC (binary) | nil, err
 *   cs.crypto.pbkdf2(alg, pass, salt, iter, len) -> the key | nil, err
 *   cs.crypto.random(n)           -> n bytes from OpenSSL's CSPRNG | nil, err
 *
 * alg: an OpenSSL digest name, any case ("sha256", "SHA512", "md5").
 * A wrong argument type raises; an unknown algorithm or a failure of
 * OpenSSL returns nil, err.
 */
#include <limits.h>

#include <lua.h>
#include <lauxlib.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "cs_sched.h"

#define CS_DIGEST_MT "corosched.digest"

typedef struct cs_digest_s {
    EVP_MD_CTX *ctx;
    const EVP_MD *md;
} cs_digest_t;


/* nil, err with OpenSSL's reason (its error queue emptied) */
static int
cs_crypto_fail(lua_State *L, const char *what)
{
    unsigned long e = ERR_get_error();
    char buf[256];

    ERR_clear_error();
    lua_pushnil(L);
    if (e != 0) {
        ERR_error_string_n(e, buf, sizeof(buf));
        lua_pushfstring(L, "%s: %s", what, buf);
    } else {
        lua_pushstring(L, what);
    }
    return 2;
}


/* the digest named at idx, or NULL with nil, err pushed */
static const EVP_MD *
cs_crypto_md(lua_State *L, int idx)
{
    const char *name = luaL_checkstring(L, idx);
    const EVP_MD *md = EVP_get_digestbyname(name);

    if (md == NULL) {
        ERR_clear_error();
        lua_pushnil(L);
        lua_pushfstring(L, "unknown digest: %s", name);
    }
    return md;
}


static cs_digest_t *
cs_digest_check(lua_State *L)
{
    cs_digest_t *d = luaL_checkudata(L, 1, CS_DIGEST_MT);

    if (d->ctx == NULL)
        luaL_error(L, "attempt to use a freed digest");
    return d;
}


/* cs.crypto.digest(alg) */
static int
cs_crypto_digest(lua_State *L)
{
    const EVP_MD *md = cs_crypto_md(L, 1);
    cs_digest_t *d;

    if (md == NULL)
        return 2;
    d = lua_newuserdatauv(L, sizeof(cs_digest_t), 0);
    d->md = md;
    d->ctx = NULL;
    luaL_setmetatable(L, CS_DIGEST_MT);
    d->ctx = EVP_MD_CTX_new();
    if (d->ctx == NULL)
        return luaL_error(L, "not enough memory");
    if (!EVP_DigestInit_ex(d->ctx, md, NULL))
        return cs_crypto_fail(L, "digest");
    return 1;
}


/* d:update(s) -> true */
static int
cs_digest_update(lua_State *L)
{
    cs_digest_t *d = cs_digest_check(L);
    size_t len;
    const char *s = luaL_checklstring(L, 2, &len);

    if (!EVP_DigestUpdate(d->ctx, s, len))
        return cs_crypto_fail(L, "digest update");
    lua_pushboolean(L, 1);
    return 1;
}


/* d:final() -> the digest; d is ready for a new message */
static int
cs_digest_final(lua_State *L)
{
    cs_digest_t *d = cs_digest_check(L);
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int n = 0;

    if (!EVP_DigestFinal_ex(d->ctx, out, &n)
        || !EVP_DigestInit_ex(d->ctx, d->md, NULL))
        return cs_crypto_fail(L, "digest final");
    lua_pushlstring(L, (const char *) out, n);
    return 1;
}


/* d:reset() -> true */
static int
cs_digest_reset(lua_State *L)
{
    cs_digest_t *d = cs_digest_check(L);

    if (!EVP_DigestInit_ex(d->ctx, d->md, NULL))
        return cs_crypto_fail(L, "digest reset");
    lua_pushboolean(L, 1);
    return 1;
}


static int
cs_digest_size(lua_State *L)
{
    cs_digest_t *d = cs_digest_check(L);

    lua_pushinteger(L, EVP_MD_size(d->md));
    return 1;
}


static int
cs_digest__gc(lua_State *L)
{
    cs_digest_t *d = luaL_checkudata(L, 1, CS_DIGEST_MT);

    EVP_MD_CTX_free(d->ctx);
    d->ctx = NULL;
    return 0;
}


/* cs.crypto.hmac(alg, key, msg) */
static int
cs_crypto_hmac(lua_State *L)
{
    const EVP_MD *md = cs_crypto_md(L, 1);
    size_t klen, mlen;
    const char *key = luaL_checklstring(L, 2, &klen);
    const char *msg = luaL_checklstring(L, 3, &mlen);
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int n = 0;

    if (md == NULL)
        return 2;
    if (klen > INT_MAX)
        return luaL_argerror(L, 2, "key too long");
    if (HMAC(md, key, (int) klen, (const unsigned char *) msg, mlen, out,
             &n) == NULL)
        return cs_crypto_fail(L, "hmac");
    lua_pushlstring(L, (const char *) out, n);
    return 1;
}


/* cs.crypto.pbkdf2(alg, pass, salt, iter, len) */
static int
cs_crypto_pbkdf2(lua_State *L)
{
    const EVP_MD *md = cs_crypto_md(L, 1);
    size_t plen, slen;
    const char *pass = luaL_checklstring(L, 2, &plen);
    const char *salt = luaL_checklstring(L, 3, &slen);
    lua_Integer iter = luaL_checkinteger(L, 4);
    lua_Integer len = luaL_checkinteger(L, 5);
    luaL_Buffer b;
    unsigned char *out;

    if (md == NULL)
        return 2;
    luaL_argcheck(L, plen <= INT_MAX, 2, "too long");
    luaL_argcheck(L, slen <= INT_MAX, 3, "too long");
    luaL_argcheck(L, iter >= 1 && iter <= INT_MAX, 4, "out of range");
    luaL_argcheck(L, len >= 1 && len <= 1024 * 1024, 5, "out of range");
    out = (unsigned char *) luaL_buffinitsize(L, &b, (size_t) len);
    if (!PKCS5_PBKDF2_HMAC(pass, (int) plen, (const unsigned char *) salt,
                           (int) slen, (int) iter, md, (int) len, out))
        return cs_crypto_fail(L, "pbkdf2");
    luaL_pushresultsize(&b, (size_t) len);
    return 1;
}


/* cs.crypto.random(n) */
static int
cs_crypto_random(lua_State *L)
{
    lua_Integer n = luaL_checkinteger(L, 1);
    luaL_Buffer b;
    unsigned char *out;

    luaL_argcheck(L, n >= 0 && n <= INT_MAX, 1, "out of range");
    out = (unsigned char *) luaL_buffinitsize(L, &b, (size_t) n);
    if (n > 0 && RAND_bytes(out, (int) n) != 1)
        return cs_crypto_fail(L, "random");
    luaL_pushresultsize(&b, (size_t) n);
    return 1;
}


void
cs_crypto_open(lua_State *L, cs_sched_t *S)
{
    static const luaL_Reg digest_methods[] = {
        { "update", cs_digest_update },
        { "final", cs_digest_final },
        { "reset", cs_digest_reset },
        { "size", cs_digest_size },
        { NULL, NULL }
    };
    static const luaL_Reg funcs[] = {
        { "digest", cs_crypto_digest },
        { "hmac", cs_crypto_hmac },
        { "pbkdf2", cs_crypto_pbkdf2 },
        { "random", cs_crypto_random },
        { NULL, NULL }
    };

    (void) S;
    if (luaL_newmetatable(L, CS_DIGEST_MT)) {
        luaL_newlib(L, digest_methods);
        lua_setfield(L, -2, "__index");
        lua_pushcfunction(L, cs_digest__gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_pop(L, 1);
    luaL_newlib(L, funcs);
    lua_setfield(L, -2, "crypto");
}
