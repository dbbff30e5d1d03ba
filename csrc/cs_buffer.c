/*
 * The receive buffer and the receive-pattern engine (see cs_buffer.h).
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cs_buffer.h"
#include "cs_alloc.h"

/* first allocation of a buffer */
#define CS_BUF_MIN 256


void
cs_buf_free_mem(cs_buf_t *b)
{
    free(b->data);
    cs_buf_init(b);
}


char *
cs_buf_prepare(cs_buf_t *b, size_t n)
{
    size_t len, need, ncap;
    char *p;

    if (b->data != NULL && b->cap - b->end >= n) {
        return b->data + b->end;
    }

    len = b->end - b->start;

    /*
     * Compact only when at least as many bytes were consumed as are moved,
     * so the copying is paid for by the consumption; otherwise grow.
     */
    if (b->data != NULL && b->cap - len >= n && b->start >= len) {
        if (len > 0) {
            memmove(b->data, b->data + b->start, len);
        }
        b->start = 0;
        b->end = len;
        return b->data + len;
    }

    if (n > SIZE_MAX - len) {
        return NULL;
    }
    need = len + n;
    ncap = b->cap > SIZE_MAX / 2 ? SIZE_MAX : b->cap * 2;
    if (ncap < CS_BUF_MIN) {
        ncap = CS_BUF_MIN;
    }
    if (ncap < need) {
        ncap = need;
    }

    if (b->start == 0) {
        p = realloc(b->data, ncap);
        if (p == NULL) {
            return NULL;
        }
    } else {
        p = malloc(ncap);
        if (p == NULL) {
            return NULL;
        }
        if (len > 0 && b->data != NULL)
            memcpy(p, b->data + b->start, len);
        free(b->data);
    }

    b->data = p;
    b->cap = ncap;
    b->start = 0;
    b->end = len;
    return p + len;
}


void
cs_buf_commit(cs_buf_t *b, size_t n)
{
    assert(n <= b->cap - b->end);
    b->end += n;
}


int
cs_buf_append(cs_buf_t *b, const char *p, size_t n)
{
    char *dst;

    if (n == 0) {
        return CS_OK;
    }
    dst = cs_buf_prepare(b, n);
    if (dst == NULL) {
        return CS_ERROR;
    }
    memcpy(dst, p, n);
    b->end += n;
    return CS_OK;
}


void
cs_buf_reset(cs_buf_t *b)
{
    if (b->cap > CS_BUF_KEEP_MAX) {
        cs_buf_free(b);
    } else {
        b->start = 0;
        b->end = 0;
    }
}


/* how many more bytes out may take under limit (0 = no limit) */
static size_t
cs_room(const cs_buf_t *out, size_t limit)
{
    size_t len;

    if (limit == 0) {
        return SIZE_MAX;
    }
    len = cs_buf_len(out);
    return len >= limit ? 0 : limit - len;
}


int
cs_pat_line(cs_buf_t *in, cs_buf_t *out, size_t maxline)
{
    const char *p, *lf;
    size_t n, eol, i;

    n = cs_buf_len(in);
    if (n == 0) {
        return CS_AGAIN;
    }
    p = cs_buf_ptr(in);

    lf = memchr(p, '\n', n);
    eol = lf != NULL ? (size_t) (lf - p) : n;

    i = 0;
    while (i < eol) {
        const char *cr = memchr(p + i, '\r', eol - i);
        size_t seg = (cr != NULL ? (size_t) (cr - p) : eol) - i;

        if (seg > 0) {
            size_t room = cs_room(out, maxline);

            if (seg > room) {
                if (cs_buf_append(out, p + i, room) != CS_OK) {
                    cs_buf_consume(in, i);
                    return CS_ERROR;
                }
                cs_buf_consume(in, i + room);
                return CS_LIMIT;
            }
            if (cs_buf_append(out, p + i, seg) != CS_OK) {
                cs_buf_consume(in, i);
                return CS_ERROR;
            }
            i += seg;
        }
        if (cr != NULL) {
            i++;                /* drop the CR */
        }
    }

    if (lf != NULL) {
        cs_buf_consume(in, eol + 1);
        return CS_OK;
    }
    cs_buf_consume(in, n);
    return CS_AGAIN;
}


int
cs_pat_count(cs_buf_t *in, cs_buf_t *out, size_t want)
{
    size_t k;

    k = cs_room(out, want);
    if (want == 0 || k == 0) {
        return CS_OK;
    }
    if (k > cs_buf_len(in)) {
        k = cs_buf_len(in);
    }
    if (k > 0) {
        if (cs_buf_append(out, cs_buf_ptr(in), k) != CS_OK) {
            return CS_ERROR;
        }
        cs_buf_consume(in, k);
    }
    return cs_buf_len(out) >= want ? CS_OK : CS_AGAIN;
}


int
cs_until_init(cs_until_t *u, const char *pat, size_t plen, int inclusive)
{
    size_t k;

    memset(u, 0, sizeof(*u));
    if (plen == 0 || plen > SIZE_MAX / sizeof(size_t)) {
        return CS_ERROR;
    }

    u->pat = malloc(plen);
    u->fail = malloc(plen * sizeof(size_t));
    if (u->pat == NULL || u->fail == NULL) {
        cs_until_free(u);
        return CS_ERROR;
    }
    memcpy(u->pat, pat, plen);
    u->plen = plen;
    u->inclusive = inclusive != 0;

    /*
     * KMP failure table: fail[k] is the length of the longest proper prefix
     * of pat[0..k) that is also a suffix of it. Only 1 <= k < plen is used
     * (after a full match the matcher restarts at 0).
     */
    u->fail[0] = 0;
    if (plen > 1) {
        u->fail[1] = 0;
    }
    for (k = 1; k + 1 < plen; k++) {
        size_t b = u->fail[k];

        while (b > 0 && pat[k] != pat[b]) {
            b = u->fail[b];
        }
        if (pat[k] == pat[b]) {
            b++;
        }
        u->fail[k + 1] = b;
    }

    return CS_OK;
}


void
cs_until_free(cs_until_t *u)
{
    free(u->pat);
    free(u->fail);
    memset(u, 0, sizeof(*u));
}


void
cs_until_reset(cs_until_t *u)
{
    u->q = 0;
    u->pend_start = 0;
    u->pend_end = 0;
    u->boundary = 0;
}


int
cs_until_flush(cs_until_t *u, cs_buf_t *out)
{
    size_t len;

    len = cs_buf_len(out);
    if (cs_buf_append(out, u->pat + u->pend_start,
                      u->pend_end - u->pend_start) != CS_OK
        || cs_buf_append(out, u->pat, u->q) != CS_OK)
    {
        out->end = out->start + len;    /* undo a half-done flush */
        return CS_ERROR;
    }
    u->q = 0;
    u->pend_start = 0;
    u->pend_end = 0;
    return CS_OK;
}


void
cs_until_drop_match(cs_until_t *u)
{
    u->q = 0;
}


int
cs_until_unread(cs_until_t *u, cs_buf_t *in)
{
    size_t np = u->pend_end - u->pend_start, n = np + u->q;
    cs_buf_t t;

    if (n == 0) {
        return CS_OK;
    }
    if (in->data != NULL && in->start >= n) {   /* room in front */
        in->start -= n;
        memcpy(in->data + in->start, u->pat + u->pend_start, np);
        memcpy(in->data + in->start + np, u->pat, u->q);
    } else {
        cs_buf_init(&t);
        if (cs_buf_append(&t, u->pat + u->pend_start, np) != CS_OK
            || cs_buf_append(&t, u->pat, u->q) != CS_OK
            || cs_buf_append(&t, cs_buf_ptr(in), cs_buf_len(in)) != CS_OK)
        {
            cs_buf_free(&t);
            return CS_ERROR;
        }
        cs_buf_free(in);
        *in = t;
    }
    u->q = 0;
    u->pend_start = 0;
    u->pend_end = 0;
    return CS_OK;
}


int
cs_until_at_boundary(const cs_until_t *u)
{
    return u->boundary;
}


/*
 * Moves pending data (dropped from a failed partial match) to out. With a
 * size, all of it at once, even past the size, as lua-nginx-module adds
 * its pending data whole (a sized call may return more than it asked for);
 * without, within limit (maxline). CS_AGAIN: all moved, go on; CS_OK: a
 * sized chunk is full; CS_LIMIT: maxline reached with data left;
 * CS_ERROR: ENOMEM.
 */
static int
cs_until_pending(cs_until_t *u, cs_buf_t *out, size_t size, size_t limit)
{
    size_t k = u->pend_end - u->pend_start, room;

    if (k == 0) {
        return CS_AGAIN;
    }
    room = size > 0 ? k : cs_room(out, limit);
    if (room == 0) {
        return CS_LIMIT;
    }
    if (k > room) {
        k = room;
    }
    if (cs_buf_append(out, u->pat + u->pend_start, k) != CS_OK) {
        return CS_ERROR;
    }
    u->pend_start += k;
    if (u->pend_start < u->pend_end) {
        return CS_LIMIT;
    }
    u->pend_start = 0;
    u->pend_end = 0;
    return size > 0 && cs_buf_len(out) >= size ? CS_OK : CS_AGAIN;
}


int
cs_until_run(cs_until_t *u, cs_buf_t *in, cs_buf_t *out, size_t size,
    size_t maxline)
{
    const char *p, *hit;
    size_t n, i, j, k, room, limit;
    int rc;

    if (u->boundary) {
        u->boundary = 0;
        return CS_CLOSED;
    }
    if (size > 0 && cs_buf_len(out) >= size) {
        return CS_OK;
    }

    limit = size > 0 ? size : maxline;

    rc = cs_until_pending(u, out, size, limit);
    if (rc != CS_AGAIN) {
        return rc;
    }

    n = cs_buf_len(in);
    p = cs_buf_ptr(in);
    i = 0;
    rc = CS_AGAIN;

    while (i < n) {
        if (u->q == 0) {
            /* outside any match: copy up to the next possible start */
            hit = memchr(p + i, (unsigned char) u->pat[0], n - i);
            j = hit != NULL ? (size_t) (hit - p) : n;
            if (j > i) {
                room = cs_room(out, limit);
                if (room == 0) {
                    rc = size > 0 ? CS_OK : CS_LIMIT;
                    break;
                }
                k = j - i < room ? j - i : room;
                if (cs_buf_append(out, p + i, k) != CS_OK) {
                    rc = CS_ERROR;
                    break;
                }
                i += k;
                if (size > 0 && cs_buf_len(out) >= size) {
                    rc = CS_OK;
                    break;
                }
                continue;
            }
        }

        if (p[i] == u->pat[u->q]) {
            i++;
            if (++u->q < u->plen) {
                continue;
            }
            /* the whole pattern */
            if (u->inclusive
                && cs_buf_append(out, u->pat, u->plen) != CS_OK)
            {
                u->q = u->plen - 1;     /* give the last byte back */
                i--;
                rc = CS_ERROR;
                break;
            }
            u->q = 0;
            u->boundary = size > 0;
            rc = CS_OK;
            break;
        }

        /*
         * Mismatch after q > 0 matched bytes: the longest border of
         * pat[0..q) that p[i] continues stays matched (or none), the bytes
         * before it are data, dropped in one piece (OpenResty's matcher
         * jumps there in one step). p[i] is looked at again against the
         * shorter match.
         */
        k = u->fail[u->q];
        while (k > 0 && p[i] != u->pat[k]) {
            k = u->fail[k];
        }
        u->pend_start = 0;
        u->pend_end = u->q - k;
        u->q = k;
        rc = cs_until_pending(u, out, size, limit);
        if (rc != CS_AGAIN) {
            break;
        }
    }

    cs_buf_consume(in, i);
    return rc;
}
