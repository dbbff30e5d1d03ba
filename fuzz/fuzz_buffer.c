/*
 * libFuzzer target for csrc/cs_buffer.c: drives cs_pat_line, cs_pat_count
 * and cs_until_run with the stream cut into arbitrary chunks, and compares
 * every result with a plain whole-stream reference written below. Some
 * runs also give the bytes a receiveuntil matcher holds back to the input
 * (cs_until_unread) and scan them again: the results must not change.
 *
 * Build and run:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Icsrc \
 *       fuzz/fuzz_buffer.c csrc/cs_buffer.c -o build/fuzz_buffer
 *   build/fuzz_buffer -max_total_time=120 fuzz/corpus/buffer
 *
 * Input layout:
 *   [0] mode: bits 0-1 pattern (0 "*l", 1 count, 2-3 receiveuntil),
 *       bit 2 inclusive, bit 3 sized iterator, bit 4 maxline on,
 *       bits 5-6 alphabet squeeze (0 none, 1 "ab", 2 "ab\r\n", 3 "abc")
 *   [1] size / maxline / want (0..31)
 *   [2] pattern length - 1 (mod 12)
 *   [3] chunking seed
 *   [4 .. 4+plen) pattern, then the stream
 *
 * Both sides write a transcript of events: a tag, a length and the bytes.
 *   'O' CS_OK (a line, a count, a chunk, a collected string)
 *   'B' CS_OK of a sized iterator that hit the boundary
 *   'C' the CS_CLOSED that must follow 'B'
 *   'L' CS_LIMIT
 *   'P' at the end of the stream: what is left (out + held bytes)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_buffer.h"

#define MAXPAT 12

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
    int kind;           /* 0 line, 1 count, 2 until */
    int inclusive;
    size_t size;        /* sized iterator (until) */
    size_t maxline;     /* line / until without size */
    size_t want;        /* count */
    const char *pat;
    size_t plen;
} fz_params_t;


static void
fz_die(const char *what)
{
    fprintf(stderr, "fuzz_buffer: %s\n", what);
    abort();
}


static void
fz_event(cs_buf_t *tr, char tag, const char *p, size_t n)
{
    if (cs_buf_append(tr, &tag, 1) != CS_OK
        || cs_buf_append(tr, (const char *) &n, sizeof(n)) != CS_OK
        || cs_buf_append(tr, p, n) != CS_OK)
    {
        fz_die("out of memory");
    }
}


/* event of two concatenated pieces */
static void
fz_event2(cs_buf_t *tr, char tag, const char *a, size_t an, const char *b,
    size_t bn)
{
    size_t n = an + bn;

    if (cs_buf_append(tr, &tag, 1) != CS_OK
        || cs_buf_append(tr, (const char *) &n, sizeof(n)) != CS_OK
        || cs_buf_append(tr, a, an) != CS_OK
        || cs_buf_append(tr, b, bn) != CS_OK)
    {
        fz_die("out of memory");
    }
}


/* ---- reference: whole stream, obviously correct ---- */

/* first occurrence of pat in s[0..n), or n */
static size_t
ref_find(const char *s, size_t n, const char *pat, size_t plen)
{
    size_t i;

    for (i = 0; i + plen <= n; i++) {
        if (memcmp(s + i, pat, plen) == 0) {
            return i;
        }
    }
    return n;
}


/* longest suffix of s[0..n) that is a proper prefix of pat */
static size_t
ref_held(const char *s, size_t n, const char *pat, size_t plen)
{
    size_t k;

    for (k = plen - 1; k > 0; k--) {
        if (k <= n && memcmp(s + n - k, pat, k) == 0) {
            return k;
        }
    }
    return 0;
}


/*
 * data d[0..n) of which the first det bytes are known to be data: 'L'
 * pieces of m bytes while more known data follows, then `last` with the
 * rest plus the suffix.
 */
static void
ref_limited(cs_buf_t *tr, const char *d, size_t n, size_t det, size_t m,
    char last, const char *suf, size_t sn)
{
    size_t off = 0;

    while (m > 0 && det - off > m) {
        fz_event(tr, 'L', d + off, m);
        off += m;
    }
    fz_event2(tr, last, d + off, n - off, suf, sn);
}


/* the state after q matched bytes of pat and then c, when c != pat[q]:
 * the longest prefix of pat that ends the text (0 if none) */
static size_t
ref_next(const fz_params_t *fp, size_t q, char c)
{
    size_t k;

    for (k = q; k > 0; k--) {
        if (fp->pat[k - 1] == c
            && memcmp(fp->pat, fp->pat + q - (k - 1), k - 1) == 0)
        {
            return k;
        }
    }
    return 0;
}


/*
 * A sized receiveuntil iterator as lua-nginx-module's reads: a byte outside
 * any match goes out at once and counts against the size; a failed partial
 * match gives out the bytes before the longest match that goes on, all at
 * once, even past the size; a chunk ends once the size is reached, or at
 * the pattern ('B', then 'C').
 */
static void
ref_sized(const fz_params_t *fp, const char *s, size_t n, cs_buf_t *tr)
{
    cs_buf_t out;
    size_t i, q = 0, k, drop;

    cs_buf_init(&out);
    for (i = 0; i < n; i++) {
        if (s[i] == fp->pat[q]) {
            if (++q < fp->plen) {
                continue;
            }
            fz_event2(tr, 'B', cs_buf_ptr(&out), cs_buf_len(&out),
                      fp->pat, fp->inclusive ? fp->plen : 0);
            fz_event(tr, 'C', "", 0);
            cs_buf_reset(&out);
            q = 0;
            continue;
        }
        k = q > 0 ? ref_next(fp, q, s[i]) : 0;
        drop = q > 0 ? q + (k > 0 ? 1 : 0) - k : 0;
        if (cs_buf_append(&out, q > 0 ? fp->pat : s + i, q > 0 ? drop : 1)
            != CS_OK)
        {
            fz_die("out of memory");
        }
        q = k;
        if (cs_buf_len(&out) >= fp->size) {
            fz_event(tr, 'O', cs_buf_ptr(&out), cs_buf_len(&out));
            cs_buf_reset(&out);
        }
        if (drop > 0 && k == 0) {
            i--;            /* looked at again outside any match */
        }
    }
    fz_event2(tr, 'P', cs_buf_ptr(&out), cs_buf_len(&out), fp->pat, q);
    cs_buf_free(&out);
}


static void
ref_run(const fz_params_t *fp, const char *s, size_t n, cs_buf_t *tr)
{
    size_t pos = 0, k;

    if (fp->kind == 0) {
        char *line = malloc(n + 1);
        size_t i;

        if (line == NULL) {
            fz_die("out of memory");
        }
        for (;;) {
            const char *lf = memchr(s + pos, '\n', n - pos);
            size_t eol = lf != NULL ? (size_t) (lf - s) : n;

            k = 0;
            for (i = pos; i < eol; i++) {
                if (s[i] != '\r') {
                    line[k++] = s[i];
                }
            }
            ref_limited(tr, line, k, k, fp->maxline, lf != NULL ? 'O' : 'P',
                        "", 0);
            if (lf == NULL) {
                break;
            }
            pos = eol + 1;
        }
        free(line);
        return;
    }

    if (fp->kind == 1) {
        while (n - pos >= fp->want) {
            fz_event(tr, 'O', s + pos, fp->want);
            pos += fp->want;
        }
        fz_event(tr, 'P', s + pos, n - pos);
        return;
    }

    if (fp->size > 0) {
        ref_sized(fp, s, n, tr);
        return;
    }
    for (;;) {
        size_t hit = ref_find(s + pos, n - pos, fp->pat, fp->plen);
        const char *suf = fp->inclusive ? fp->pat : "";
        size_t sn = fp->inclusive ? fp->plen : 0;

        if (hit == n - pos) {
            break;
        }
        ref_limited(tr, s + pos, hit, hit, fp->maxline, 'O', suf, sn);
        pos += hit + fp->plen;
    }

    k = n - pos - ref_held(s + pos, n - pos, fp->pat, fp->plen);
    ref_limited(tr, s + pos, n - pos, k, fp->maxline, 'P', "", 0);
}


/* ---- the engine, fed in chunks ---- */

static void
eng_run(const fz_params_t *fp, const char *s, size_t n, unsigned seed,
    cs_buf_t *tr)
{
    cs_buf_t in, out;
    cs_until_t u;
    size_t pos = 0, maxc, inlen;
    uint32_t r = 2463534242u ^ (seed * 2654435761u);
    int rc;
    char tag;

    cs_buf_init(&in);
    cs_buf_init(&out);
    if (fp->kind == 2
        && cs_until_init(&u, fp->pat, fp->plen, fp->inclusive) != CS_OK)
    {
        fz_die("cs_until_init");
    }
    maxc = (size_t) 1 << (seed % 8);

    while (pos < n) {
        char *dst;
        size_t clen;
        int unread = fp->kind == 2 && (r & 0x200);

        r ^= r << 13;
        r ^= r >> 17;
        r ^= r << 5;
        clen = 1 + r % maxc;
        if (clen > n - pos) {
            clen = n - pos;
        }
        dst = cs_buf_prepare(&in, clen + (r >> 24));
        if (dst == NULL) {
            fz_die("cs_buf_prepare");
        }
        memcpy(dst, s + pos, clen);
        cs_buf_commit(&in, clen);
        pos += clen;

        for (;;) {
            inlen = cs_buf_len(&in);
            switch (fp->kind) {
            case 0:
                rc = cs_pat_line(&in, &out, fp->maxline);
                break;
            case 1:
                rc = cs_pat_count(&in, &out, fp->want);
                break;
            default:
                rc = cs_until_run(&u, &in, &out, fp->size, fp->maxline);
                break;
            }
            if (rc == CS_AGAIN) {
                if (cs_buf_len(&in) != 0) {
                    fz_die("CS_AGAIN with input left");
                }
                if (unread) {
                    /* another reader took over and gave the stream back:
                     * the held bytes, scanned again from scratch, must
                     * lead to the same results */
                    unread = 0;
                    if (cs_until_unread(&u, &in) != CS_OK) {
                        fz_die("cs_until_unread");
                    }
                    if (cs_buf_len(&in) > 0) {
                        continue;
                    }
                }
                break;
            }
            if (rc == CS_OK) {
                tag = fp->kind == 2 && cs_until_at_boundary(&u) ? 'B' : 'O';
                if (tag == 'B' && fp->size == 0) {
                    fz_die("boundary without size");
                }
            } else if (rc == CS_LIMIT) {
                tag = 'L';
                if (fp->kind == 2 && fp->size > 0) {
                    fz_die("CS_LIMIT with size");
                }
            } else {
                fz_die("unexpected return code");
            }
            fz_event(tr, tag, cs_buf_ptr(&out), cs_buf_len(&out));
            if (r & 0x100) {
                cs_buf_reset(&out);
            } else {
                cs_buf_free(&out);
            }
            if (tag == 'B') {
                inlen = cs_buf_len(&in);
                rc = cs_until_run(&u, &in, &out, fp->size, fp->maxline);
                if (rc != CS_CLOSED || cs_buf_len(&out) != 0
                    || cs_buf_len(&in) != inlen || cs_until_at_boundary(&u))
                {
                    fz_die("boundary not followed by CS_CLOSED");
                }
                fz_event(tr, 'C', "", 0);
            } else if (fp->kind == 2 && cs_buf_len(&in) > inlen) {
                fz_die("input grew");
            }
        }
    }

    if (fp->kind == 2) {
        if (cs_until_flush(&u, &out) != CS_OK) {
            fz_die("cs_until_flush");
        }
        cs_until_free(&u);
    }
    fz_event(tr, 'P', cs_buf_ptr(&out), cs_buf_len(&out));
    cs_buf_free(&in);
    cs_buf_free(&out);
}


static void
fz_dump(const char *name, const cs_buf_t *tr)
{
    const char *p = cs_buf_ptr(tr);
    size_t i = 0, n = cs_buf_len(tr), len, j;

    fprintf(stderr, "%s:\n", name);
    while (i < n) {
        memcpy(&len, p + i + 1, sizeof(len));
        fprintf(stderr, "  %c \"", p[i]);
        for (j = 0; j < len; j++) {
            unsigned char c = (unsigned char) p[i + 1 + sizeof(len) + j];

            if (c >= 32 && c < 127 && c != '"' && c != '\\') {
                fputc(c, stderr);
            } else {
                fprintf(stderr, "\\x%02x", c);
            }
        }
        fprintf(stderr, "\"\n");
        i += 1 + sizeof(len) + len;
    }
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const alpha[4] = { NULL, "ab", "ab\r\n", "abc" };
    fz_params_t fp;
    cs_buf_t ref, eng;
    char pat[MAXPAT], *s;
    size_t plen, n, i, param;
    unsigned mode, seed;
    const char *al;

    if (size < 4) {
        return 0;
    }
    mode = data[0];
    param = data[1] % 32;
    plen = 1 + data[2] % MAXPAT;
    seed = data[3];
    data += 4;
    size -= 4;
    if (size < plen) {
        return 0;
    }

    al = alpha[(mode >> 5) & 3];
    for (i = 0; i < plen; i++) {
        pat[i] = al != NULL ? al[data[i] % strlen(al)] : (char) data[i];
    }
    data += plen;
    size -= plen;

    n = size;
    s = malloc(n + 1);
    if (s == NULL) {
        return 0;
    }
    for (i = 0; i < n; i++) {
        s[i] = al != NULL ? al[data[i] % strlen(al)] : (char) data[i];
    }

    memset(&fp, 0, sizeof(fp));
    fp.kind = (mode & 3) >= 2 ? 2 : (int) (mode & 3);
    fp.inclusive = (mode >> 2) & 1;
    fp.pat = pat;
    fp.plen = plen;
    if (fp.kind == 1) {
        fp.want = 1 + param;
    } else if (fp.kind == 2 && (mode & 8)) {
        fp.size = 1 + param;
    } else if (mode & 16) {
        fp.maxline = 1 + param;
    }

    cs_buf_init(&ref);
    cs_buf_init(&eng);
    ref_run(&fp, s, n, &ref);
    eng_run(&fp, s, n, seed, &eng);

    if (cs_buf_len(&ref) != cs_buf_len(&eng)
        || memcmp(cs_buf_ptr(&ref), cs_buf_ptr(&eng), cs_buf_len(&ref)) != 0)
    {
        fprintf(stderr, "kind %d inclusive %d size %zu maxline %zu want %zu"
                " plen %zu\n", fp.kind, fp.inclusive, fp.size, fp.maxline,
                fp.want, fp.plen);
        fz_dump("reference", &ref);
        fz_dump("engine", &eng);
        fz_die("mismatch");
    }

    cs_buf_free(&ref);
    cs_buf_free(&eng);
    free(s);
    return 0;
}
