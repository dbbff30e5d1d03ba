/*
 * libFuzzer target for cs_net_parse_addr() and cs_net_format_addr().
 *
 *   clang -std=c99 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer \
 *       -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
 *       -Icsrc fuzz/fuzz_addr.c csrc/cs_net.c -o build/fuzz_addr
 *   mkdir -p build/corpus-addr
 *   ./build/fuzz_addr -max_total_time=60 build/corpus-addr fuzz/corpus/addr
 *
 * (New inputs go to the first directory; fuzz/corpus/addr is the seed
 * corpus and stays as it is.) Debian: apt-get install clang (the fuzzer
 * runtime, libclang_rt.fuzzer, ships with it).
 *
 * Input: one selector byte, two port bytes (little-endian), then the host,
 * not NUL-terminated. Selector bits 0-1 choose the port: 0 the 16-bit value,
 * 1 a negative one, 2 one past 65535, 3 a large one. Bit 7 switches to the
 * raw mode: the rest is a cs_addr_t's bytes (family, address, length) that
 * cs_net_format_addr() must survive, whatever they say.
 *
 * Checked: no crash or sanitizer report; a parse either succeeds with a
 * sane address or fails with EINVAL, ENOENT or ENAMETOOLONG; a successful
 * parse formats (into a buffer of exactly the needed size; one byte less
 * gives ENOSPC) and the text parses back to the same address, which
 * formats to the same text.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_net.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_ASSERT(c)                                                   \
    do {                                                                 \
        if (!(c)) {                                                      \
            fprintf(stderr, "fuzz_addr: %s:%d: %s\n", __FILE__, __LINE__, \
                #c);                                                     \
            abort();                                                     \
        }                                                                \
    } while (0)


/* formats a into a heap buffer of exactly the size needed (so ASan sees
 * any overrun) and checks the one-byte-short case; returns the text (to
 * free) and the port in *port */
static char *
fuzz_format(const cs_addr_t *a, int *port, int *rc_out)
{
    char big[CS_NET_ADDRSTRLEN];
    char *exact;
    size_t n;
    int rc, p, p2;

    p = -7;
    rc = cs_net_format_addr(a, big, sizeof(big), &p);
    *rc_out = rc;
    if (rc < 0) {
        FUZZ_ASSERT(rc == CS_ERROR);
        FUZZ_ASSERT(errno == EAFNOSUPPORT);
        FUZZ_ASSERT(big[0] == '\0');
        FUZZ_ASSERT(p == -7);
        return NULL;
    }
    FUZZ_ASSERT(rc == p && p >= 0 && p <= 65535);
    n = strlen(big);
    FUZZ_ASSERT(n < sizeof(big));

    exact = malloc(n + 1);
    FUZZ_ASSERT(exact != NULL);
    FUZZ_ASSERT(cs_net_format_addr(a, exact, n + 1, &p2) == rc);
    FUZZ_ASSERT(p2 == p && strcmp(exact, big) == 0);

    if (n > 0) {
        char *shorter = malloc(n);

        FUZZ_ASSERT(shorter != NULL);
        errno = 0;
        FUZZ_ASSERT(cs_net_format_addr(a, shorter, n, &p2) == CS_ERROR);
        FUZZ_ASSERT(errno == ENOSPC && shorter[0] == '\0');
        free(shorter);
    }
    FUZZ_ASSERT(cs_net_format_addr(a, NULL, 0, NULL) == CS_ERROR);

    *port = p;
    return exact;
}


static void
fuzz_raw(const uint8_t *data, size_t size)
{
    cs_addr_t a;
    char *text;
    int port, rc;

    memset(&a, 0, sizeof(a));
    if (size > 0) {
        a.len = (socklen_t) (data[0] % (sizeof(a.ss) + 8));
        data++;
        size--;
    }
    memcpy(&a.ss, data, size < sizeof(a.ss) ? size : sizeof(a.ss));
    if (a.len > sizeof(a.ss)) {
        a.len = sizeof(a.ss); /* the kernel never says more */
    }
    text = fuzz_format(&a, &port, &rc);
    free(text);
    FUZZ_ASSERT(cs_net_addr_equal(&a, &a));
    (void) cs_net_addr_port(&a);
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cs_addr_t a, b;
    char *host, *text, *text2;
    size_t len;
    int sel, port, rc, err, outport, is_unix, port_ok;

    if (size < 3) {
        return 0;
    }
    sel = data[0];
    port = data[1] | (data[2] << 8);
    if (sel & 0x80) {
        fuzz_raw(data + 3, size - 3);
        return 0;
    }
    switch (sel & 3) {
    case 1:
        port = -1 - port;
        break;
    case 2:
        port = 65536 + port;
        break;
    case 3:
        port = 65536 + port * 16384; /* up to 2^30 */
        break;
    default:
        break;
    }

    /* the host in a buffer of its own size: no NUL after it */
    len = size - 3;
    host = malloc(len ? len : 1);
    FUZZ_ASSERT(host != NULL);
    memcpy(host, data + 3, len);

    is_unix = cs_net_is_unix(host, len);
    port_ok = port >= 0 && port <= 65535;
    (void) cs_net_is_localhost(host, len);

    { /* the cosocket host splitter: its part is inside host, and a port
       * it takes from the string is a valid one */
        const char *lit, *why;
        size_t litlen;
        int p2 = port;

        rc = cs_net_split_host(host, len, &p2, &lit, &litlen, &why);
        if (rc == CS_OK) {
            FUZZ_ASSERT(lit == host && litlen <= len);
            FUZZ_ASSERT(p2 == port || (p2 >= 1 && p2 <= 65535));
            FUZZ_ASSERT(is_unix || litlen > 0);
            FUZZ_ASSERT(is_unix || host[0] == '['
                        || memchr(host, ':', litlen) == NULL);
        } else {
            FUZZ_ASSERT(rc == CS_ERROR && why != NULL && p2 == port);
        }
    }

    errno = 0;
    rc = cs_net_parse_addr(&a, host, len, port);
    err = errno;
    if (rc != CS_OK) {
        FUZZ_ASSERT(rc == CS_ERROR);
        FUZZ_ASSERT(err == EINVAL || err == ENOENT || err == ENAMETOOLONG);
        /* a name to resolve has a valid port, no ':' and no '[' */
        if (err == ENOENT) {
            FUZZ_ASSERT(!is_unix && port_ok && len > 0);
            FUZZ_ASSERT(memchr(host, ':', len) == NULL && host[0] != '[');
        }
        if (err == ENAMETOOLONG) {
            FUZZ_ASSERT(is_unix);
        }
        free(host);
        return 0;
    }

    /* a sane address */
    FUZZ_ASSERT(len > 0 && memchr(host, '\0', len) == NULL);
    FUZZ_ASSERT(a.len > 0 && a.len <= sizeof(a.ss));
    switch (a.ss.ss_family) {
    case AF_UNIX:
        FUZZ_ASSERT(is_unix);
        FUZZ_ASSERT(a.len == offsetof(struct sockaddr_un, sun_path) + len - 5
                                 + 1);
        break;
    case AF_INET:
        FUZZ_ASSERT(!is_unix && port_ok && a.len == sizeof(struct sockaddr_in));
        break;
    case AF_INET6:
        FUZZ_ASSERT(!is_unix && port_ok);
        FUZZ_ASSERT(a.len == sizeof(struct sockaddr_in6));
        break;
    default:
        FUZZ_ASSERT(!"unexpected family");
    }
    FUZZ_ASSERT(cs_net_addr_port(&a) == (is_unix ? 0 : port));

    /* format, parse back, format again */
    text = fuzz_format(&a, &outport, &rc);
    FUZZ_ASSERT(text != NULL);
    FUZZ_ASSERT(outport == (is_unix ? 0 : port));
    if (!is_unix) {
        FUZZ_ASSERT(cs_net_addr_set_port(&a, port) == CS_OK);
    }
    errno = 0;
    rc = cs_net_parse_addr(&b, text, strlen(text), outport);
    if (rc != CS_OK) {
        fprintf(stderr, "fuzz_addr: \"%s\" does not parse back (errno %d)\n",
            text, errno);
        abort();
    }
    FUZZ_ASSERT(cs_net_addr_equal(&a, &b) && cs_net_addr_equal(&b, &a));
    FUZZ_ASSERT(a.len == b.len);
    text2 = fuzz_format(&b, &outport, &rc);
    FUZZ_ASSERT(text2 != NULL && strcmp(text, text2) == 0);

    free(text2);
    free(text);
    free(host);
    return 0;
}
