/*
 * TLS on OpenSSL for the TCP cosocket: see cs_tls.h. Lua-free but for the
 * session objects and cs.socket.setcafile at the end.
 *
 * One SSL_CTX serves the whole process (TLS 1.2 minimum, the system CA
 * store, depth 32, partial writes, buffers released while idle). Each
 * connection is an SSL whose BIO calls cs_net_recv/cs_net_send on the
 * cosocket's fd, so nothing here ever blocks: OpenSSL's "want read/write"
 * becomes CS_AGAIN with the readiness to park on.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <arpa/inet.h>
#include <sys/stat.h>

#include <event2/event.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <lua.h>
#include <lauxlib.h>

#include "cs_tls.h"
#include "cs_alloc.h"

#define CS_TLS_DEPTH 32 /* intermediates allowed (API.md: at least 9) */
#define CS_TLS_CAFILES 16 /* CA stores kept, one per file */
#define CS_TLS_SESSION_MT "corosched.ssl_session"

struct cs_tls_s {
    SSL *ssl;
    int fd;
    int err;               /* errno of the BIO's last failed call */
    unsigned char verify;  /* the handshake checks chain and name */
    unsigned char done;    /* the handshake succeeded */
    unsigned char fatal;   /* a fatal error: no close_notify */
    signed char last;      /* a read's end (CS_CLOSED, CS_ERROR) met after
                            * data: the next read returns it (nginx's
                            * c->ssl->last) */
    int last_errno;
};

struct cs_tls_conf_s {
    X509 *cert;
    STACK_OF(X509) *chain;
    EVP_PKEY *key;
    X509_STORE *store;     /* the system's CAs and the socket's, or NULL */
};

/* a store made for a CA file: the system's CAs and the file's. Loading
 * the system's takes tens of ms and about 1 MB, so stores are shared by
 * every socket that names the same unchanged file (newest first). */
typedef struct cs_tls_cafile_s {
    struct cs_tls_cafile_s *next;
    X509_STORE *store;      /* one reference is the cache's */
    time_t mtime;
    off_t size;
    char path[1];           /* allocated to its length */
} cs_tls_cafile_t;

static SSL_CTX *cs_tls_ctx;
static BIO_METHOD *cs_tls_biom;
static cs_tls_cafile_t *cs_tls_cafiles;


/* {====== errors ====== */

/* the reason of OpenSSL's last error, or dflt; clears the queue */
static void
cs_tls_reason(char *err, size_t errlen, const char *dflt)
{
    unsigned long e = ERR_peek_last_error();
    const char *r = e != 0 ? ERR_reason_error_string(e) : NULL;

    if (r != NULL)
        snprintf(err, errlen, "%s", r);
    else if (e != 0)
        snprintf(err, errlen, "error:%08lX", e);
    else
        snprintf(err, errlen, "%s", dflt);
    ERR_clear_error();
}

/* }====== */


/* {====== the BIO: OpenSSL's bytes through cs_net ====== */

static int
cs_tls_bio_read(BIO *b, char *buf, int len)
{
    cs_tls_t *t = BIO_get_data(b);
    ssize_t n;

    BIO_clear_retry_flags(b);
    if (len <= 0)
        return 0;
    n = cs_net_recv(t->fd, buf, (size_t) len);
    if (n > 0)
        return (int) n;
    if (n == CS_AGAIN) {
        BIO_set_retry_read(b);
        return -1;
    }
    if (n == CS_CLOSED)
        return 0;
    t->err = errno;
    return -1;
}


static int
cs_tls_bio_write(BIO *b, const char *buf, int len)
{
    cs_tls_t *t = BIO_get_data(b);
    ssize_t n;

    BIO_clear_retry_flags(b);
    if (len <= 0)
        return 0;
    n = cs_net_send(t->fd, buf, (size_t) len);
    if (n > 0)
        return (int) n;
    if (n == CS_AGAIN) {
        BIO_set_retry_write(b);
        return -1;
    }
    t->err = errno;
    return -1;
}


static long
cs_tls_bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    (void) b;
    (void) num;
    (void) ptr;
    return cmd == BIO_CTRL_FLUSH ? 1 : 0; /* nothing is buffered here */
}


static int
cs_tls_bio_create(BIO *b)
{
    BIO_set_init(b, 1);
    return 1;
}

/* }====== */


/* the shared client context, made on first use; NULL on failure */
static SSL_CTX *
cs_tls_get_ctx(void)
{
    SSL_CTX *ctx;
    BIO_METHOD *m;

    if (cs_tls_ctx != NULL)
        return cs_tls_ctx;
    m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK,
                     "corosched");
    ctx = SSL_CTX_new(TLS_client_method());
    if (m == NULL || ctx == NULL
        || !BIO_meth_set_read(m, cs_tls_bio_read)
        || !BIO_meth_set_write(m, cs_tls_bio_write)
        || !BIO_meth_set_ctrl(m, cs_tls_bio_ctrl)
        || !BIO_meth_set_create(m, cs_tls_bio_create)
        || !SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION)) {
        BIO_meth_free(m);
        SSL_CTX_free(ctx);
        return NULL;
    }
    /* no system CAs (no store, no file): every verifying handshake fails
     * with "unable to get local issuer certificate", which says it */
    (void) SSL_CTX_set_default_verify_paths(ctx);
    ERR_clear_error();
    SSL_CTX_set_verify_depth(ctx, CS_TLS_DEPTH);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE
                              | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER
                              | SSL_MODE_RELEASE_BUFFERS);
#ifdef SSL_OP_IGNORE_UNEXPECTED_EOF
    /* a peer that closes without close_notify: a plain EOF (API.md) */
    SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
#endif
    cs_tls_biom = m;
    cs_tls_ctx = ctx;
    return ctx;
}


#ifdef __GNUC__
/* the module is unloaded (Lua closes its C libraries after every object's
 * finalizer ran, so no SSL is left): the context goes too */
__attribute__((destructor)) static void
cs_tls_unload(void)
{
    cs_tls_cafile_t *f;

    while ((f = cs_tls_cafiles) != NULL) {
        cs_tls_cafiles = f->next;
        X509_STORE_free(f->store);
        free(f);
    }
    SSL_CTX_free(cs_tls_ctx);
    BIO_meth_free(cs_tls_biom);
    cs_tls_ctx = NULL;
    cs_tls_biom = NULL;
}
#endif


/* a store with the system's CAs and those of cafile (NULL: none) */
static X509_STORE *
cs_tls_store_new(const char *cafile, char *err, size_t errlen)
{
    X509_STORE *st = X509_STORE_new();

    if (st == NULL) {
        snprintf(err, errlen, "no memory");
        return NULL;
    }
    (void) X509_STORE_set_default_paths(st);
    ERR_clear_error();
    if (cafile != NULL && !X509_STORE_load_locations(st, cafile, NULL)) {
        char why[200];
        cs_tls_reason(why, sizeof(why), "no certificate found");
        snprintf(err, errlen, "cannot load CA file %s: %s", cafile, why);
        X509_STORE_free(st);
        return NULL;
    }
    X509_STORE_set_depth(st, CS_TLS_DEPTH);
    return st;
}


/* the store for cafile, from the cache when the file did not change
 * since; the caller owns a reference. NULL with err filled. */
static X509_STORE *
cs_tls_store_get(const char *cafile, char *err, size_t errlen)
{
    cs_tls_cafile_t *f, **pp;
    struct stat st;
    X509_STORE *store;
    size_t len = strlen(cafile);
    int n = 0;

    if (stat(cafile, &st) != 0) {
        snprintf(err, errlen, "cannot load CA file %s: %s", cafile,
                 cs_net_strerror(errno));
        return NULL;
    }
    for (pp = &cs_tls_cafiles; (f = *pp) != NULL; pp = &f->next) {
        if (strcmp(f->path, cafile) == 0) {
            *pp = f->next; /* stale or not, it moves or goes */
            if (f->mtime == st.st_mtime && f->size == st.st_size) {
                f->next = cs_tls_cafiles;
                cs_tls_cafiles = f;
                X509_STORE_up_ref(f->store);
                return f->store;
            }
            X509_STORE_free(f->store);
            free(f);
            break;
        }
    }
    if ((store = cs_tls_store_new(cafile, err, errlen)) == NULL)
        return NULL;
    if ((f = malloc(sizeof(*f) + len)) == NULL)
        return store; /* works, uncached */
    memcpy(f->path, cafile, len + 1);
    f->mtime = st.st_mtime;
    f->size = st.st_size;
    f->store = store;
    X509_STORE_up_ref(store);
    f->next = cs_tls_cafiles;
    cs_tls_cafiles = f;
    while (f->next != NULL && ++n < CS_TLS_CAFILES)
        f = f->next;
    while (f->next != NULL) { /* the least recently used ones go */
        cs_tls_cafile_t *old = f->next;
        f->next = old->next;
        X509_STORE_free(old->store);
        free(old);
    }
    return store;
}


/* 1 when name is an IPv4 or IPv6 literal */
static int
cs_tls_is_ip(const char *name)
{
    unsigned char buf[sizeof(struct in6_addr)];

    return inet_pton(AF_INET, name, buf) == 1
           || inet_pton(AF_INET6, name, buf) == 1;
}


cs_tls_t *
cs_tls_new(int fd, const cs_tls_opts_t *o, char *err, size_t errlen)
{
    SSL_CTX *ctx = cs_tls_get_ctx();
    const cs_tls_conf_t *c = o->conf;
    cs_tls_t *t;
    BIO *bio;
    int ok = 1;

    if (ctx == NULL) {
        cs_tls_reason(err, errlen, "no memory");
        return NULL;
    }
    if ((t = calloc(1, sizeof(*t))) == NULL) {
        snprintf(err, errlen, "no memory");
        return NULL;
    }
    t->fd = fd;
    t->verify = (unsigned char) (o->verify != 0);
    t->ssl = SSL_new(ctx);
    bio = t->ssl != NULL ? BIO_new(cs_tls_biom) : NULL;
    if (bio == NULL) {
        cs_tls_reason(err, errlen, "no memory");
        SSL_free(t->ssl);
        free(t);
        return NULL;
    }
    BIO_set_data(bio, t);
    SSL_set_bio(t->ssl, bio, bio);
    SSL_set_connect_state(t->ssl);
    SSL_set_verify(t->ssl, o->verify ? SSL_VERIFY_PEER : SSL_VERIFY_NONE,
                   NULL);
    if (o->name != NULL && o->name[0] != '\0') {
        int ip = cs_tls_is_ip(o->name);
        if (!ip) /* SNI carries host names only (RFC 6066) */
            ok = SSL_set_tlsext_host_name(t->ssl, o->name) == 1;
        if (ok && o->verify && ip)
            ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(t->ssl),
                                               o->name) == 1;
        else if (ok && o->verify) { /* "*.example.com", not "w*.example" */
            SSL_set_hostflags(t->ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
            ok = SSL_set1_host(t->ssl, o->name) == 1;
        }
    }
    if (ok && c != NULL && c->cert != NULL)
        ok = SSL_use_certificate(t->ssl, c->cert) == 1
             && SSL_use_PrivateKey(t->ssl, c->key) == 1
             && (c->chain == NULL
                 || SSL_set1_chain(t->ssl, c->chain) == 1);
    if (ok && c != NULL && c->store != NULL)
        ok = SSL_set1_verify_cert_store(t->ssl, c->store) == 1;
    if (ok && o->ocsp)
        ok = SSL_set_tlsext_status_type(t->ssl, TLSEXT_STATUSTYPE_ocsp) == 1;
    if (ok && o->session != NULL)
        ok = SSL_set_session(t->ssl, o->session) == 1;
    if (!ok) {
        cs_tls_reason(err, errlen, "cannot set up the handshake");
        SSL_free(t->ssl);
        free(t);
        return NULL;
    }
    return t;
}


int
cs_tls_handshake(cs_tls_t *t, short *want, char *err, size_t errlen)
{
    int rc, e;
    long v;

    ERR_clear_error();
    t->err = 0;
    rc = SSL_do_handshake(t->ssl);
    if (rc == 1) {
        t->done = 1;
        return CS_OK;
    }
    e = SSL_get_error(t->ssl, rc);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        *want = e == SSL_ERROR_WANT_READ ? EV_READ : EV_WRITE;
        return CS_AGAIN;
    }
    t->fatal = 1;
    v = SSL_get_verify_result(t->ssl);
    if (t->verify && v != X509_V_OK) {
        snprintf(err, errlen, "%s", X509_verify_cert_error_string(v));
        ERR_clear_error();
    } else if (e == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) {
        snprintf(err, errlen, "%s", t->err != 0 ? cs_net_strerror(t->err)
                                                : "closed");
    } else {
        cs_tls_reason(err, errlen, "error");
    }
    return CS_ERROR;
}


/* {====== the transport ====== */

/* > 0 bytes, or a cs_rc.h code for what SSL_read/SSL_write said (n) */
static ssize_t
cs_tls_result(cs_tls_t *t, int n, int reading, short *want)
{
    switch (SSL_get_error(t->ssl, n)) {
    case SSL_ERROR_WANT_READ:
        *want = EV_READ;
        return CS_AGAIN;
    case SSL_ERROR_WANT_WRITE:
        *want = EV_WRITE;
        return CS_AGAIN;
    case SSL_ERROR_ZERO_RETURN: /* close_notify */
        return CS_CLOSED;
    case SSL_ERROR_SYSCALL:
        t->fatal = 1;
        /* EOF without close_notify; and for a read any failure of the
         * socket that OpenSSL did not queue an error for (a reset), as
         * nginx's ngx_ssl_handle_recv takes them for the peer's clean
         * shutdown: "closed" in OpenResty */
        if ((t->err == 0 || reading) && ERR_peek_error() == 0)
            return CS_CLOSED;
        errno = t->err != 0 ? t->err : EPROTO;
        ERR_clear_error();
        return CS_ERROR;
    default: /* a protocol error (bad record MAC, alert...) */
        t->fatal = 1;
        ERR_clear_error();
        errno = EPROTO;
        return CS_ERROR;
    }
}


static ssize_t
cs_tls_recv(void *io, int fd, char *buf, size_t len, short *want)
{
    cs_tls_t *t = io;
    size_t got = 0;
    ssize_t rc;
    int n;

    (void) fd;
    if (t->last != 0) {
        errno = t->last_errno;
        return t->last;
    }
    if (len > INT_MAX)
        len = INT_MAX;
    /* record after record until len is full or nothing more came, as
     * nginx's ngx_ssl_recv fills its buffer: a receiveany gets all the
     * records that are in. An end or error after some data waits for
     * the next call. */
    for (;;) {
        ERR_clear_error();
        t->err = 0;
        n = SSL_read(t->ssl, buf + got, (int) (len - got));
        if (n <= 0)
            break;
        got += (size_t) n;
        if (got == len)
            return (ssize_t) got;
    }
    rc = cs_tls_result(t, n, 1, want);
    if (got == 0)
        return rc;
    if (rc == CS_CLOSED || rc == CS_ERROR) {
        t->last = (signed char) rc;
        t->last_errno = errno;
    }
    return (ssize_t) got;
}


static ssize_t
cs_tls_send(void *io, int fd, const char *buf, size_t len, short *want)
{
    cs_tls_t *t = io;
    int n;

    (void) fd;
    ERR_clear_error();
    t->err = 0;
    n = SSL_write(t->ssl, buf, len > INT_MAX ? INT_MAX : (int) len);
    return n > 0 ? n : cs_tls_result(t, n, 0, want);
}


static void
cs_tls_free(void *io, int fd)
{
    cs_tls_t *t = io;

    if (t == NULL)
        return;
    if (fd >= 0 && t->done && !t->fatal) { /* close_notify, if it fits */
        ERR_clear_error();
        (void) SSL_shutdown(t->ssl);
        ERR_clear_error();
    }
    SSL_free(t->ssl); /* and the BIO */
    free(t);
}


/* the state of an idle connection as OpenResty's keepalive checks see it:
 * the kernel's (cs_net_idle_state: the peer's FIN or reset is CS_CLOSED,
 * nothing is CS_OK), whatever OpenSSL holds (a close_notify a read met
 * after its data is pooled, as nginx keeps it in c->ssl->last). Bytes in
 * the kernel are read: post-handshake messages (TLS 1.3 session tickets)
 * are consumed, anything else (data, a close_notify, an alert) is
 * CS_ERROR ("connection in dubious state") */
static int
cs_tls_idle(void *io, int fd)
{
    cs_tls_t *t = io;
    char c;
    short want;
    int i, n, st;

    if (SSL_pending(t->ssl) > 0)
        return CS_ERROR;
    for (i = 0; i < 1000000; i++) { /* one byte each, at worst */
        if ((st = cs_net_idle_state(fd)) != CS_ERROR)
            return st;
        ERR_clear_error();
        t->err = 0;
        n = SSL_peek(t->ssl, &c, 1); /* data stays where it is */
        if (n > 0 || cs_tls_result(t, n, 1, &want) != CS_AGAIN)
            return CS_ERROR;
    }
    return CS_ERROR;
}


static size_t
cs_tls_pending(void *io)
{
    int n = SSL_pending(((cs_tls_t *) io)->ssl);

    return n > 0 ? (size_t) n : 0;
}


const cs_transport_t cs_transport_tls = {
    "tls", cs_tls_recv, cs_tls_send, cs_tls_free, cs_tls_idle,
    cs_tls_pending, 0
};

/* }====== */


/* {====== per-socket settings ====== */

static cs_tls_conf_t *
cs_tls_conf(cs_tls_conf_t **c, char *err, size_t errlen)
{
    if (*c == NULL && (*c = calloc(1, sizeof(**c))) == NULL)
        snprintf(err, errlen, "no memory");
    return *c;
}


static void
cs_tls_conf_drop_cert(cs_tls_conf_t *c)
{
    X509_free(c->cert);
    EVP_PKEY_free(c->key);
    sk_X509_pop_free(c->chain, X509_free);
    c->cert = NULL;
    c->key = NULL;
    c->chain = NULL;
}


int
cs_tls_conf_set_cert(cs_tls_conf_t **cp, const char *cert_pem,
                     size_t certlen, const char *key_pem, size_t keylen,
                     char *err, size_t errlen)
{
    cs_tls_conf_t *c;
    BIO *b;
    X509 *x;
    X509 *cert = NULL;
    EVP_PKEY *key = NULL;
    STACK_OF(X509) *chain = NULL;

    if (cert_pem == NULL) { /* none any more */
        if (*cp != NULL)
            cs_tls_conf_drop_cert(*cp);
        return CS_OK;
    }
    if ((c = cs_tls_conf(cp, err, errlen)) == NULL)
        return CS_ERROR;
    ERR_clear_error();
    if (certlen > INT_MAX || keylen > INT_MAX) {
        snprintf(err, errlen, "certificate or key too long");
        return CS_ERROR;
    }
    if ((b = BIO_new_mem_buf(cert_pem, (int) certlen)) != NULL) {
        cert = PEM_read_bio_X509(b, NULL, NULL, NULL);
        while (cert != NULL
               && (x = PEM_read_bio_X509(b, NULL, NULL, NULL)) != NULL) {
            if ((chain == NULL && (chain = sk_X509_new_null()) == NULL)
                || !sk_X509_push(chain, x)) {
                X509_free(x);
                break;
            }
        }
        BIO_free(b);
    }
    ERR_clear_error(); /* the end of the PEM data */
    if (cert == NULL) {
        snprintf(err, errlen, "bad client certificate");
        sk_X509_pop_free(chain, X509_free);
        return CS_ERROR;
    }
    if ((b = BIO_new_mem_buf(key_pem, (int) keylen)) != NULL) {
        key = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
        BIO_free(b);
    }
    if (key == NULL || !X509_check_private_key(cert, key)) {
        snprintf(err, errlen, key == NULL ? "bad private key"
                                          : "the private key does not match "
                                            "the certificate");
        ERR_clear_error();
        X509_free(cert);
        EVP_PKEY_free(key);
        sk_X509_pop_free(chain, X509_free);
        return CS_ERROR;
    }
    cs_tls_conf_drop_cert(c);
    c->cert = cert;
    c->key = key;
    c->chain = chain;
    return CS_OK;
}


int
cs_tls_conf_set_cafile(cs_tls_conf_t **cp, const char *cafile, char *err,
                       size_t errlen)
{
    cs_tls_conf_t *c = cs_tls_conf(cp, err, errlen);
    X509_STORE *st;

    if (c == NULL)
        return CS_ERROR;
    if ((st = cs_tls_store_get(cafile, err, errlen)) == NULL)
        return CS_ERROR;
    X509_STORE_free(c->store);
    c->store = st;
    return CS_OK;
}


void
cs_tls_conf_free(cs_tls_conf_t *c)
{
    if (c == NULL)
        return;
    cs_tls_conf_drop_cert(c);
    X509_STORE_free(c->store);
    free(c);
}

/* }====== */


/* {====== Lua: sessions and cs.socket.setcafile ====== */

void
cs_tls_push_session(lua_State *L, cs_tls_t *t)
{
    SSL_SESSION **ud = lua_newuserdatauv(L, sizeof(SSL_SESSION *), 0);

    *ud = NULL;
    luaL_setmetatable(L, CS_TLS_SESSION_MT);
    if ((*ud = SSL_get1_session(t->ssl)) == NULL) {
        lua_pop(L, 1);
        lua_pushboolean(L, 1);
    }
}


int
cs_tls_push_peer_cert(lua_State *L, cs_tls_t *t)
{
    /* no reference taken: nothing leaks when a Lua allocation raises */
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
    X509 *x = SSL_get0_peer_certificate(t->ssl);
#else
    X509 *x = SSL_get_peer_certificate(t->ssl);
    X509_free(x); /* the connection keeps its own */
#endif
    unsigned char *der, *p;
    unsigned char line[65];
    luaL_Buffer b;
    int len, i, n, nid;

    if (x == NULL || (len = i2d_X509(x, NULL)) <= 0) {
        lua_pushnil(L);
        lua_pushliteral(L, "no peer certificate");
        return 2;
    }
    der = p = lua_newuserdatauv(L, (size_t) len, 0);
    if (i2d_X509(x, &p) != len)
        return luaL_error(L, "cannot encode the peer certificate");
    luaL_buffinit(L, &b);
    luaL_addstring(&b, "-----BEGIN CERTIFICATE-----\n");
    for (i = 0; i < len; i += 48) { /* 64 characters a line */
        n = EVP_EncodeBlock(line, der + i, len - i < 48 ? len - i : 48);
        luaL_addlstring(&b, (const char *) line, (size_t) n);
        luaL_addchar(&b, '\n');
    }
    luaL_addstring(&b, "-----END CERTIFICATE-----\n");
    luaL_pushresult(&b);
    lua_remove(L, -2); /* the DER */
    nid = X509_get_signature_nid(x);
    lua_pushstring(L, nid != NID_undef ? OBJ_nid2sn(nid) : "undefined");
    return 2;
}


void *
cs_tls_to_session(lua_State *L, int idx)
{
    SSL_SESSION **ud = luaL_testudata(L, idx, CS_TLS_SESSION_MT);

    return ud != NULL ? *ud : NULL;
}


static int
cs_tls_session__gc(lua_State *L)
{
    SSL_SESSION **ud = luaL_checkudata(L, 1, CS_TLS_SESSION_MT);

    SSL_SESSION_free(*ud);
    *ud = NULL;
    return 0;
}


static int
cs_tls_session__tostring(lua_State *L)
{
    lua_pushfstring(L, "corosched.ssl_session: %p",
                    lua_touserdata(L, 1));
    return 1;
}


/* the NID of an object's short or long name, in any case (pgmoon lowers
 * "ecdsa-with-SHA256"); NID_undef if none */
static int
cs_tls_nid(const char *name)
{
    int nid = OBJ_txt2nid(name), i;
    const char *sn, *ln;

    for (i = 1; nid == NID_undef && i < 4096; i++) {
        sn = OBJ_nid2sn(i);
        ln = OBJ_nid2ln(i);
        if ((sn != NULL && strcasecmp(sn, name) == 0)
            || (ln != NULL && strcasecmp(ln, name) == 0))
            nid = i;
    }
    ERR_clear_error(); /* unknown NIDs on the way */
    return nid;
}


/* cs.socket.x509_digest(pem, algorithm) -> the digest (binary) of the
 * certificate's DER form | nil, err. algorithm: a digest name ("sha256"),
 * or a signature algorithm's ("RSA-SHA256", "ecdsa-with-SHA384"): its
 * digest. For corosched.ngx's resty.openssl.x509 (pgmoon's SCRAM channel
 * binding, RFC 5929 tls-server-end-point). */
static int
cs_tls_x509_digest(lua_State *L)
{
    size_t len;
    const char *pem = luaL_checklstring(L, 1, &len);
    const char *alg = luaL_checkstring(L, 2);
    const EVP_MD *md = EVP_get_digestbyname(alg);
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    X509 *x = NULL;
    BIO *b;
    int dig;

    if (md == NULL /* a signature algorithm: its digest */
        && OBJ_find_sigid_algs(cs_tls_nid(alg), &dig, NULL) && dig != 0)
        md = EVP_get_digestbyname(OBJ_nid2sn(dig));
    if (md == NULL) {
        ERR_clear_error();
        lua_pushnil(L);
        lua_pushfstring(L, "unknown digest: %s", alg);
        return 2;
    }
    if (len <= INT_MAX && (b = BIO_new_mem_buf(pem, (int) len)) != NULL) {
        x = PEM_read_bio_X509(b, NULL, NULL, NULL);
        BIO_free(b);
    }
    if (x == NULL || !X509_digest(x, md, out, &n)) {
        X509_free(x);
        ERR_clear_error();
        lua_pushnil(L);
        lua_pushliteral(L, "bad certificate");
        return 2;
    }
    X509_free(x);
    lua_pushlstring(L, (const char *) out, n);
    return 1;
}


/* cs.socket.setcafile(path | nil) -> true | nil, err: CA certificates
 * trusted by every later handshake, besides the system's (nil: only the
 * system's again) */
static int
cs_tls_setcafile(lua_State *L)
{
    const char *path = luaL_optstring(L, 1, NULL);
    SSL_CTX *ctx = cs_tls_get_ctx();
    char err[512];
    X509_STORE *st;

    if (ctx == NULL)
        return luaL_error(L, "not enough memory");
    st = path != NULL ? cs_tls_store_get(path, err, sizeof(err))
                      : cs_tls_store_new(NULL, err, sizeof(err));
    if (st == NULL) {
        lua_pushnil(L);
        lua_pushstring(L, err);
        return 2;
    }
    SSL_CTX_set_cert_store(ctx, st); /* frees the one before */
    lua_pushboolean(L, 1);
    return 1;
}


void
cs_tls_open(lua_State *L, cs_sched_t *S)
{
    (void) S;
    if (luaL_newmetatable(L, CS_TLS_SESSION_MT)) {
        lua_pushcfunction(L, cs_tls_session__gc);
        lua_setfield(L, -2, "__gc");
        lua_pushcfunction(L, cs_tls_session__tostring);
        lua_setfield(L, -2, "__tostring");
    }
    lua_pop(L, 1);
    lua_pushcfunction(L, cs_tls_setcafile);
    lua_setfield(L, -2, "setcafile");
    lua_pushcfunction(L, cs_tls_x509_digest);
    lua_setfield(L, -2, "x509_digest");
}

/* }====== */
