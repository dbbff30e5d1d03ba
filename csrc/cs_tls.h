/*
 * TLS for the TCP cosocket, on OpenSSL: the client side of sslhandshake,
 * the transport that replaces the plain one once it succeeded, per-socket
 * settings (client certificate, extra trusted CAs) and the session objects
 * handed to Lua ("corosched.ssl_session").
 *
 * Its bytes go through cs_net (a BIO of our own), so the short-I/O and
 * fault-injection modes of testing builds apply to TLS too. Verification
 * follows API.md: the system CA store (OpenSSL's default paths), plus a
 * CA file per process (cs.socket.setcafile) or per socket; depth 32;
 * TLS 1.2 and 1.3.
 */
#ifndef CS_TLS_H
#define CS_TLS_H

#include "cs_socket.h"

typedef struct cs_tls_s cs_tls_t;           /* one connection */
typedef struct cs_tls_conf_s cs_tls_conf_t; /* one socket's settings */

/* tpio is a cs_tls_t */
extern const cs_transport_t cs_transport_tls;

/* what sslhandshake asks for */
typedef struct cs_tls_opts_s {
    const char *name;          /* SNI and the name checked, or NULL */
    int verify;                /* check the chain and the name */
    int ocsp;                  /* ask for a stapled OCSP response */
    void *session;             /* SSL_SESSION to resume, or NULL */
    const cs_tls_conf_t *conf; /* or NULL */
} cs_tls_opts_t;

/* a TLS client over the connected fd; NULL with err filled */
cs_tls_t *cs_tls_new(int fd, const cs_tls_opts_t *o, char *err,
                     size_t errlen);

/* one step of the handshake: CS_OK, CS_AGAIN (*want: EV_READ or EV_WRITE)
 * or CS_ERROR with err = OpenSSL's reason ("certificate has expired") */
int cs_tls_handshake(cs_tls_t *t, short *want, char *err, size_t errlen);

/* [-0, +1|2, m] the peer's certificate in PEM and the short name of its
 * signature algorithm ("RSA-SHA256"); nil, err without one */
int cs_tls_push_peer_cert(lua_State *L, cs_tls_t *t);

/* [-0, +1, m] the session of t as a Lua object, or true when it has none */
void cs_tls_push_session(lua_State *L, cs_tls_t *t);

/* the SSL_SESSION of the session object at idx, or NULL if not one */
void *cs_tls_to_session(lua_State *L, int idx);

/* a socket's settings, made on first use (*c NULL before): CS_OK, or
 * CS_ERROR with err. cert_pem: the certificate, then its chain (NULL:
 * none any more); key_pem: its private key. cafile: CA certificates
 * trusted for this socket's handshakes, besides the system's. */
int cs_tls_conf_set_cert(cs_tls_conf_t **c, const char *cert_pem,
                         size_t certlen, const char *key_pem, size_t keylen,
                         char *err, size_t errlen);
int cs_tls_conf_set_cafile(cs_tls_conf_t **c, const char *cafile, char *err,
                           size_t errlen);
void cs_tls_conf_free(cs_tls_conf_t *c);

/* cs.socket.setcafile and the session class, into the cs.socket table at
 * L's top */
void cs_tls_open(lua_State *L, cs_sched_t *S);

#endif
