/*
 * Unit test of csrc/cs_buffer.c (no framework). Build and run:
 *   gcc -std=c99 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -Wshadow -Wundef \
 *       -Wwrite-strings -Wpointer-arith -Wcast-align -Wformat=2 -Wvla \
 *       -Wstrict-prototypes -Wmissing-prototypes -Wmissing-declarations \
 *       -Wdeclaration-after-statement -fPIC -fvisibility=hidden -Icsrc \
 *       -fsanitize=address,undefined -fno-sanitize-recover=all \
 *       fuzz/test_buffer.c csrc/cs_buffer.c -o build/test_buffer
 *   build/test_buffer
 * The last line is "N passed, M failed"; the exit code is 1 on a failure.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_buffer.h"

static int npass, nfail;

#define CHECK(cond) tb_check((cond) != 0, #cond, __LINE__)

static void
tb_check(int ok, const char *what, int line)
{
    if (ok) {
        npass++;
    } else {
        nfail++;
        printf("FAIL line %d: %s\n", line, what);
    }
}


/* out holds exactly the NUL-terminated s */
static int
tb_is(const cs_buf_t *b, const char *s)
{
    size_t n = strlen(s);

    return cs_buf_len(b) == n
           && (n == 0 || memcmp(cs_buf_ptr(b), s, n) == 0);
}


static void
tb_feed(cs_buf_t *b, const char *s)
{
    if (cs_buf_append(b, s, strlen(s)) != CS_OK) {
        printf("out of memory\n");
        exit(2);
    }
}


/*
 * ENOMEM without a malloc hook: a buffer whose (fake) length is so big that
 * growing it asks for an impossible size, so realloc returns NULL. Its data
 * is a real small allocation (cs_buf_free releases it); nothing is ever
 * written there. ASan must return NULL rather than abort on such sizes.
 */
#if defined(__GNUC__)
#define TB_VISIBLE __attribute__((visibility("default")))
#else
#define TB_VISIBLE
#endif

TB_VISIBLE const char *__asan_default_options(void);

TB_VISIBLE const char *
__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}


static void
tb_fake_full(cs_buf_t *b)
{
    b->data = malloc(16);
    if (b->data == NULL) {
        exit(2);
    }
    b->start = 0;
    b->cap = SIZE_MAX - 4;
    b->end = b->cap;
}


static void
tb_cat(char **acc, size_t *n, const char *p, size_t len)
{
    char *q = realloc(*acc, *n + len + 1);

    if (q == NULL) {
        printf("out of memory\n");
        exit(2);
    }
    if (len > 0) {
        memcpy(q + *n, p, len);
    }
    *n += len;
    q[*n] = '\0';
    *acc = q;
}


/*
 * Runs a receiveuntil iterator over data fed `step` bytes at a time and
 * returns its transcript: O[...] for CS_OK, B[...] for CS_OK at the
 * boundary, C for the CS_CLOSED that follows, L[...] for CS_LIMIT, and
 * P[...] at the end (out plus cs_until_flush). Caller frees.
 */
static char *
tb_until(const char *pat, int inclusive, size_t size, size_t maxline,
    const char *data, size_t step)
{
    cs_until_t u;
    cs_buf_t in, out;
    char *acc = NULL, tag[2] = { 0, 0 };
    size_t n = 0, pos = 0, len = strlen(data);
    int rc;

    cs_buf_init(&in);
    cs_buf_init(&out);
    if (cs_until_init(&u, pat, strlen(pat), inclusive) != CS_OK) {
        printf("cs_until_init failed\n");
        exit(2);
    }
    tb_cat(&acc, &n, "", 0);

    while (pos < len) {
        size_t k = len - pos < step ? len - pos : step;

        if (cs_buf_append(&in, data + pos, k) != CS_OK) {
            exit(2);
        }
        pos += k;
        for (;;) {
            rc = cs_until_run(&u, &in, &out, size, maxline);
            if (rc == CS_AGAIN) {
                break;
            }
            if (rc == CS_CLOSED) {
                tb_cat(&acc, &n, "C", 1);
                continue;
            }
            tag[0] = rc == CS_LIMIT ? 'L'
                     : rc != CS_OK ? '?'
                     : cs_until_at_boundary(&u) ? 'B' : 'O';
            tb_cat(&acc, &n, tag, 1);
            tb_cat(&acc, &n, "[", 1);
            tb_cat(&acc, &n, cs_buf_ptr(&out), cs_buf_len(&out));
            tb_cat(&acc, &n, "]", 1);
            cs_buf_reset(&out);
            if (rc != CS_OK && rc != CS_LIMIT) {
                break;
            }
        }
    }

    if (cs_until_flush(&u, &out) != CS_OK) {
        exit(2);
    }
    tb_cat(&acc, &n, "P[", 2);
    tb_cat(&acc, &n, cs_buf_ptr(&out), cs_buf_len(&out));
    tb_cat(&acc, &n, "]", 1);

    cs_until_free(&u);
    cs_buf_free(&in);
    cs_buf_free(&out);
    return acc;
}


/* tb_until with steps 1, 2, 3, 7 and all at once all give `want` */
static int
tb_until_all(const char *pat, int inclusive, size_t size, size_t maxline,
    const char *data, const char *want)
{
    static const size_t steps[] = { 1, 2, 3, 7, (size_t) -1 };
    size_t i;
    int ok = 1;

    for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        char *got = tb_until(pat, inclusive, size, maxline, data, steps[i]);

        if (strcmp(got, want) != 0) {
            printf("  pattern \"%s\" step %zu: got %s\n  want %s\n",
                   pat, steps[i], got, want);
            ok = 0;
        }
        free(got);
    }
    return ok;
}


static void
test_buf_basic(void)
{
    cs_buf_t b;
    char *p;

    cs_buf_init(&b);
    CHECK(b.data == NULL && b.start == 0 && b.end == 0 && b.cap == 0);
    CHECK(cs_buf_len(&b) == 0);
    CHECK(cs_buf_ptr(&b) == NULL);

    CHECK(cs_buf_append(&b, "", 0) == CS_OK);
    CHECK(b.data == NULL);

    CHECK(cs_buf_append(&b, "hello", 5) == CS_OK);
    CHECK(tb_is(&b, "hello"));
    CHECK(b.cap >= 5);

    cs_buf_consume(&b, 2);
    CHECK(tb_is(&b, "llo"));
    CHECK(b.start == 2);
    cs_buf_consume(&b, 0);
    CHECK(tb_is(&b, "llo"));
    cs_buf_consume(&b, 3);
    CHECK(cs_buf_len(&b) == 0 && b.start == 0 && b.end == 0);
    CHECK(b.data != NULL);

    p = cs_buf_prepare(&b, 3);
    CHECK(p == b.data);
    memcpy(p, "abc", 3);
    cs_buf_commit(&b, 2);
    CHECK(tb_is(&b, "ab"));
    p = cs_buf_prepare(&b, 0);
    CHECK(p == b.data + 2);
    cs_buf_commit(&b, 0);
    CHECK(tb_is(&b, "ab"));

    cs_buf_free(&b);
    CHECK(b.data == NULL && b.start == 0 && b.end == 0 && b.cap == 0);
    cs_buf_free(&b);
    CHECK(b.data == NULL);

    /* prepare(0) on a fresh buffer gives a usable pointer */
    p = cs_buf_prepare(&b, 0);
    CHECK(p != NULL && b.cap > 0);
    cs_buf_free(&b);
}


static void
test_buf_grow(void)
{
    cs_buf_t b;
    size_t i, cap, grows = 0;
    char c;
    int ok = 1;

    cs_buf_init(&b);
    cap = 0;
    for (i = 0; i < 100000; i++) {
        c = (char) ('a' + i % 26);
        if (cs_buf_append(&b, &c, 1) != CS_OK) {
            ok = 0;
            break;
        }
        if (b.cap != cap) {
            CHECK(cap == 0 || b.cap >= 2 * cap);    /* geometric */
            cap = b.cap;
            grows++;
        }
    }
    CHECK(ok);
    CHECK(grows < 20);
    CHECK(cs_buf_len(&b) == 100000);
    for (i = 0; i < 100000; i++) {
        if (cs_buf_ptr(&b)[i] != (char) ('a' + i % 26)) {
            ok = 0;
        }
    }
    CHECK(ok);

    /* a big prepare goes straight to the size needed */
    cap = b.cap;
    CHECK(cs_buf_prepare(&b, 10 * cap) != NULL);
    CHECK(b.cap - b.end >= 10 * cap);
    CHECK(cs_buf_len(&b) == 100000);

    cs_buf_free(&b);
}


static void
test_buf_compact(void)
{
    cs_buf_t b;
    char *old, *p;
    size_t cap;

    cs_buf_init(&b);
    p = cs_buf_prepare(&b, 100);
    cap = b.cap;
    memset(p, 'x', cap);
    cs_buf_commit(&b, cap);           /* full */
    memcpy(b.data + cap - 3, "END", 3);
    cs_buf_consume(&b, cap - 3);        /* start >= len: compaction pays */
    old = b.data;
    p = cs_buf_prepare(&b, 10);
    CHECK(b.data == old && b.cap == cap);
    CHECK(b.start == 0 && b.end == 3);
    CHECK(p == b.data + 3);
    CHECK(tb_is(&b, "END"));

    /* more unread than consumed: grow instead of moving much data */
    cs_buf_commit(&b, 10);
    memset(b.data + 3, 'y', 10);
    p = cs_buf_prepare(&b, cap - cs_buf_len(&b));
    CHECK(p != NULL);
    cs_buf_commit(&b, cap - 13);
    CHECK(cs_buf_len(&b) == cap);
    cs_buf_consume(&b, 1);
    p = cs_buf_prepare(&b, 1);
    CHECK(p != NULL && b.cap > cap);
    CHECK(b.start == 0 && cs_buf_len(&b) == cap - 1);
    CHECK(memcmp(cs_buf_ptr(&b), "NDyyyyyyyyyy", 12) == 0);

    cs_buf_free(&b);
}


static void
test_buf_reset_enomem(void)
{
    cs_buf_t b;
    char *p;

    cs_buf_init(&b);
    tb_feed(&b, "abc");
    p = b.data;
    cs_buf_reset(&b);
    CHECK(cs_buf_len(&b) == 0 && b.data == p && b.cap > 0);

    CHECK(cs_buf_prepare(&b, CS_BUF_KEEP_MAX) != NULL);
    CHECK(b.cap == CS_BUF_KEEP_MAX);
    cs_buf_reset(&b);
    CHECK(b.data != NULL);              /* 64 KiB is kept */

    CHECK(cs_buf_prepare(&b, CS_BUF_KEEP_MAX + 1) != NULL);
    cs_buf_commit(&b, 5);
    cs_buf_reset(&b);
    CHECK(b.data == NULL && b.cap == 0 && cs_buf_len(&b) == 0);
    cs_buf_reset(&b);
    CHECK(b.data == NULL);

    /* impossible sizes fail cleanly */
    tb_feed(&b, "keep");
    CHECK(cs_buf_prepare(&b, SIZE_MAX) == NULL);
    CHECK(cs_buf_prepare(&b, SIZE_MAX - 2) == NULL);
    CHECK(tb_is(&b, "keep"));
    cs_buf_free(&b);

    tb_fake_full(&b);
    p = b.data;
    CHECK(cs_buf_append(&b, "x", 1) == CS_ERROR);
    CHECK(cs_buf_append(&b, "xxxxxxxx", 8) == CS_ERROR);
    CHECK(cs_buf_prepare(&b, 5) == NULL);
    CHECK(b.data == p && b.end == SIZE_MAX - 4 && b.start == 0);
    b.start = 1;                        /* the copying way of growing */
    CHECK(cs_buf_append(&b, "xx", 2) == CS_ERROR);
    CHECK(b.data == p && b.end == SIZE_MAX - 4 && b.start == 1);
    cs_buf_free(&b);
}


static void
test_line(void)
{
    cs_buf_t in, out;

    cs_buf_init(&in);
    cs_buf_init(&out);

    CHECK(cs_pat_line(&in, &out, 0) == CS_AGAIN);
    CHECK(cs_buf_len(&out) == 0);

    tb_feed(&in, "hello\nworld\r\n\n\r\nx\ry\r\r\nlast");
    CHECK(cs_pat_line(&in, &out, 0) == CS_OK);
    CHECK(tb_is(&out, "hello"));
    cs_buf_reset(&out);
    CHECK(cs_pat_line(&in, &out, 0) == CS_OK);
    CHECK(tb_is(&out, "world"));
    cs_buf_reset(&out);
    CHECK(cs_pat_line(&in, &out, 0) == CS_OK);
    CHECK(tb_is(&out, ""));
    CHECK(cs_pat_line(&in, &out, 0) == CS_OK);
    CHECK(tb_is(&out, ""));
    CHECK(cs_pat_line(&in, &out, 0) == CS_OK);
    CHECK(tb_is(&out, "xy"));               /* every CR is dropped */
    cs_buf_reset(&out);
    CHECK(cs_pat_line(&in, &out, 0) == CS_AGAIN);
    CHECK(tb_is(&out, "last"));
    CHECK(cs_buf_len(&in) == 0);
    tb_feed(&in, "\r");
    CHECK(cs_pat_line(&in, &out, 0) == CS_AGAIN);
    tb_feed(&in, "ing\r");
    CHECK(cs_pat_line(&in, &out, 0) == CS_AGAIN);
    tb_feed(&in, "\nnext");
    CHECK(cs_pat_line(&in, &out, 0) == CS_OK);
    CHECK(tb_is(&out, "lasting"));
    CHECK(tb_is(&in, "next"));
    cs_buf_reset(&out);
    cs_buf_reset(&in);

    /* maxline: exactly maxline is fine, CRs do not count */
    tb_feed(&in, "ab\rc\r\nabcd\nab");
    CHECK(cs_pat_line(&in, &out, 3) == CS_OK);
    CHECK(tb_is(&out, "abc"));
    cs_buf_reset(&out);
    CHECK(cs_pat_line(&in, &out, 3) == CS_LIMIT);
    CHECK(tb_is(&out, "abc"));
    CHECK(tb_is(&in, "d\nab"));
    cs_buf_reset(&out);
    CHECK(cs_pat_line(&in, &out, 3) == CS_OK);     /* the rest of it */
    CHECK(tb_is(&out, "d"));
    cs_buf_reset(&out);
    CHECK(cs_pat_line(&in, &out, 3) == CS_AGAIN);
    tb_feed(&in, "c");
    CHECK(cs_pat_line(&in, &out, 3) == CS_AGAIN);  /* 3 bytes, no LF yet */
    CHECK(tb_is(&out, "abc"));
    tb_feed(&in, "\r");
    CHECK(cs_pat_line(&in, &out, 3) == CS_AGAIN);
    tb_feed(&in, "\r\n");
    CHECK(cs_pat_line(&in, &out, 3) == CS_OK);
    CHECK(tb_is(&out, "abc"));
    cs_buf_reset(&out);
    tb_feed(&in, "abc\rdef\n");
    CHECK(cs_pat_line(&in, &out, 3) == CS_LIMIT);
    CHECK(tb_is(&out, "abc"));
    CHECK(tb_is(&in, "def\n"));
    cs_buf_reset(&out);
    cs_buf_reset(&in);

    /* maxline counted over several calls */
    tb_feed(&in, "ab");
    CHECK(cs_pat_line(&in, &out, 4) == CS_AGAIN);
    tb_feed(&in, "cdef\n");
    CHECK(cs_pat_line(&in, &out, 4) == CS_LIMIT);
    CHECK(tb_is(&out, "abcd"));
    CHECK(tb_is(&in, "ef\n"));
    cs_buf_reset(&out);
    cs_buf_reset(&in);

    /* ENOMEM: nothing is lost, the call can be retried */
    tb_feed(&in, "\rxy\r\nz");
    cs_buf_free(&out);
    tb_fake_full(&out);
    CHECK(cs_pat_line(&in, &out, 0) == CS_ERROR);
    CHECK(tb_is(&in, "xy\r\nz"));
    cs_buf_free(&out);
    CHECK(cs_pat_line(&in, &out, 0) == CS_OK);
    CHECK(tb_is(&out, "xy"));
    CHECK(tb_is(&in, "z"));
    cs_buf_reset(&out);
    cs_buf_reset(&in);
    cs_buf_free(&out);
    tb_feed(&in, "xyzuv\n");
    tb_fake_full(&out);                 /* room 4 under maxline, 5 needed */
    CHECK(cs_pat_line(&in, &out, SIZE_MAX) == CS_ERROR);
    CHECK(tb_is(&in, "xyzuv\n"));
    CHECK(cs_pat_line(&in, &out, 2) == CS_LIMIT);  /* no room at all */
    CHECK(tb_is(&in, "xyzuv\n"));

    cs_buf_free(&in);
    cs_buf_free(&out);
}


static void
test_count(void)
{
    cs_buf_t in, out;

    cs_buf_init(&in);
    cs_buf_init(&out);

    CHECK(cs_pat_count(&in, &out, 0) == CS_OK);
    CHECK(cs_buf_len(&out) == 0);
    CHECK(cs_pat_count(&in, &out, 3) == CS_AGAIN);

    tb_feed(&in, "ab");
    CHECK(cs_pat_count(&in, &out, 5) == CS_AGAIN);
    CHECK(tb_is(&out, "ab") && cs_buf_len(&in) == 0);
    tb_feed(&in, "cdefgh");
    CHECK(cs_pat_count(&in, &out, 5) == CS_OK);
    CHECK(tb_is(&out, "abcde"));
    CHECK(tb_is(&in, "fgh"));
    CHECK(cs_pat_count(&in, &out, 5) == CS_OK);     /* already complete */
    CHECK(tb_is(&in, "fgh"));
    cs_buf_reset(&out);
    CHECK(cs_pat_count(&in, &out, 3) == CS_OK);
    CHECK(tb_is(&out, "fgh") && cs_buf_len(&in) == 0);
    cs_buf_reset(&out);
    CHECK(cs_pat_count(&in, &out, 0) == CS_OK);

    tb_feed(&in, "xyz");
    cs_buf_free(&out);
    tb_fake_full(&out);
    CHECK(cs_pat_count(&in, &out, SIZE_MAX) == CS_ERROR);
    CHECK(tb_is(&in, "xyz"));

    cs_buf_free(&in);
    cs_buf_free(&out);
}


static void
test_until_init(void)
{
    cs_until_t u;
    char pat[5] = "abab";
    static const size_t want_abab[] = { 0, 0, 0, 1 };
    static const size_t want_aabaaa[] = { 0, 0, 1, 0, 1, 2 };
    static const size_t want_crlf[] = { 0, 0, 0, 1 };
    size_t i;
    int ok;

    CHECK(cs_until_init(&u, "x", 0, 0) == CS_ERROR);
    CHECK(u.pat == NULL && u.fail == NULL);
    cs_until_free(&u);
    /* too long for the failure table, and ENOMEM (nothing is read) */
    CHECK(cs_until_init(&u, "x", SIZE_MAX, 0) == CS_ERROR);
    CHECK(cs_until_init(&u, "x", SIZE_MAX / sizeof(size_t), 0) == CS_ERROR);
    CHECK(u.pat == NULL && u.fail == NULL);

    CHECK(cs_until_init(&u, pat, 4, 1) == CS_OK);
    pat[0] = 'z';                       /* the pattern was copied */
    CHECK(pat[0] == 'z' && memcmp(u.pat, "abab", 4) == 0);
    CHECK(u.plen == 4 && u.inclusive);
    ok = 1;
    for (i = 0; i < 4; i++) {
        ok &= u.fail[i] == want_abab[i];
    }
    CHECK(ok);
    cs_until_free(&u);
    CHECK(u.pat == NULL);
    cs_until_free(&u);                  /* twice is harmless */

    CHECK(cs_until_init(&u, "aabaaa", 6, 5) == CS_OK);
    CHECK(u.inclusive == 1);
    ok = 1;
    for (i = 0; i < 6; i++) {
        ok &= u.fail[i] == want_aabaaa[i];
    }
    CHECK(ok);
    cs_until_free(&u);

    CHECK(cs_until_init(&u, "\r\n\r\n", 4, 0) == CS_OK);
    ok = 1;
    for (i = 0; i < 4; i++) {
        ok &= u.fail[i] == want_crlf[i];
    }
    CHECK(ok);
    CHECK(cs_until_at_boundary(&u) == 0);
    cs_until_free(&u);

    CHECK(cs_until_init(&u, "x", 1, 0) == CS_OK);
    CHECK(u.fail[0] == 0);
    cs_until_free(&u);
}


static void
test_until_unsized(void)
{
    /* basic, several occurrences, empty data before the pattern */
    CHECK(tb_until_all("\r\n", 0, 0, 0, "HTTP/1.1 200 OK\r\nA: b\r\n\r\nbody",
                       "O[HTTP/1.1 200 OK]O[A: b]O[]P[body]"));
    CHECK(tb_until_all("\r\n\r\n", 0, 0, 0, "a\r\nb\r\n\r\nc\r\n\r\r\n\r\n",
                       "O[a\r\nb]O[c\r\n\r]P[]"));
    CHECK(tb_until_all("\r\n\r\n", 1, 0, 0, "a\r\nb\r\n\r\nc\r\n\r\r\n\r\nd\r",
                       "O[a\r\nb\r\n\r\n]O[c\r\n\r\r\n\r\n]P[d\r]"));
    CHECK(tb_until_all("--", 0, 0, 0, "----x--", "O[]O[]O[x]P[]"));
    CHECK(tb_until_all("--", 1, 0, 0, "----x--", "O[--]O[--]O[x--]P[]"));

    /* single byte pattern */
    CHECK(tb_until_all(",", 0, 0, 0, "a,,bc,d", "O[a]O[]O[bc]P[d]"));
    CHECK(tb_until_all(",", 1, 0, 0, ",a,", "O[,]O[a,]P[]"));

    /* self-overlapping patterns: nothing lost, nothing doubled */
    CHECK(tb_until_all("aab", 0, 0, 0, "aaab", "O[a]P[]"));
    CHECK(tb_until_all("aab", 0, 0, 0, "aaaaaabaab", "O[aaaa]O[]P[]"));
    CHECK(tb_until_all("aab", 0, 0, 0, "abaacaaa", "P[abaacaaa]"));
    CHECK(tb_until_all("abab", 0, 0, 0, "abaababab", "O[aba]P[ab]"));
    CHECK(tb_until_all("abab", 1, 0, 0, "abababab", "O[abab]O[abab]P[]"));
    CHECK(tb_until_all("aaa", 0, 0, 0, "aabaaaaaa", "O[aab]O[]P[]"));
    CHECK(tb_until_all("abcabd", 0, 0, 0, "abcabcabd\n", "O[abc]P[\n]"));

    /* the cases of OpenResty's t/066-socket-receiveuntil.t */
    CHECK(tb_until_all("aa", 0, 0, 0, "abcabcaad\n", "O[abcabc]P[d\n]"));
    CHECK(tb_until_all("aaa", 0, 0, 0, "abaabcaaaef\n", "O[abaabc]P[ef\n]"));
    CHECK(tb_until_all("aaaaad", 0, 0, 0, "baaaaaaaaeaaaaaaadf\n",
                       "O[baaaaaaaaeaa]P[f\n]"));
    CHECK(tb_until_all("abcabdabcabe", 0, 0, 0, "abcabdabcabdabcabe\n",
                       "O[abcabd]P[\n]"));
    CHECK(tb_until_all("abcabdabcabe", 0, 0, 0, "abcabdabcabcabdabcabe\n",
                       "O[abcabdabc]P[\n]"));
    CHECK(tb_until_all("abcabdabcabe", 0, 0, 0, "abcabcabdabcabe\n",
                       "O[abc]P[\n]"));
    CHECK(tb_until_all("abcabdabcabe", 0, 0, 0, "ababcabdabcabe\n",
                       "O[ab]P[\n]"));
    CHECK(tb_until_all("--abc", 0, 0, 0, "----abc\n", "O[--]P[\n]"));

    /* held bytes come back in the partial */
    CHECK(tb_until_all("--abc", 0, 0, 0, "x--ab", "P[x--ab]"));
    CHECK(tb_until_all("\r\n\r\n", 0, 0, 0, "a\r\n\r", "P[a\r\n\r]"));
}


static void
test_until_sized(void)
{
    /* README: reader(4) on its example */
    CHECK(tb_until_all("\r\n--abcedhb", 0, 4, 0,
                       "hello, world! -agentzh\r\n--abcedhb blah blah",
                       "O[hell]O[o, w]O[orld]O[! -a]O[gent]B[zh]C"
                       "O[ bla]O[h bl]P[ah]"));
    /* t/066 TEST 15 */
    CHECK(tb_until_all("--abc", 0, 4, 0, "hello, world ----abc\n",
                       "O[hell]O[o, w]O[orld]B[ --]CP[\n]"));
    /* a chunk right before the pattern: then "" at the boundary (TEST 17) */
    CHECK(tb_until_all("--abc", 0, 4, 0, "abcd--abcefgh--abc",
                       "O[abcd]B[]CO[efgh]B[]CP[]"));
    CHECK(tb_until_all("--abc", 0, 4, 0, "abcd--abcefg--abc",
                       "O[abcd]B[]CB[efg]CP[]"));
    /* pattern first */
    CHECK(tb_until_all("--", 0, 3, 0, "--x", "B[]CP[x]"));
    /* inclusive: the pattern ends the last chunk */
    CHECK(tb_until_all("--", 1, 3, 0, "--abcdef--gh--",
                       "B[--]CO[abc]O[def]B[--]CB[gh--]CP[]"));
    /* failed partial matches: their bytes go out whole, even past the
     * size (lua-nginx-module), the byte that broke them read again */
    CHECK(tb_until_all("abcd", 0, 1, 0, "abcxabcabcd!",
                       "O[abc]O[x]O[abc]B[]CO[!]P[]"));
    CHECK(tb_until_all("abcd", 0, 2, 0, "abcxabcabcd!",
                       "O[abc]O[xabc]B[]CP[!]"));
    CHECK(tb_until_all("aaab", 0, 2, 0, "aaaaaaab",
                       "O[aa]O[aa]B[]CP[]"));
    CHECK(tb_until_all("aaab", 0, 3, 0, "aaaaaaaab",
                       "O[aaa]B[aa]CP[]"));
    /* a partial held across a chunk end */
    CHECK(tb_until_all("--abc", 0, 4, 0, "abc--xyz",
                       "O[abc--]P[xyz]"));
    CHECK(tb_until_all("--abc", 0, 4, 0, "abc--xy", "O[abc--]P[xy]"));
    /* maxline is ignored with a size */
    CHECK(tb_until_all("--", 0, 2, 1, "abcd--", "O[ab]O[cd]B[]CP[]"));
}


static void
test_until_maxline(void)
{
    CHECK(tb_until_all("--", 0, 0, 3, "abc--abcd--ab",
                       "O[abc]L[abc]O[d]P[ab]"));
    CHECK(tb_until_all("--", 1, 0, 3, "abc--", "O[abc--]P[]"));
    CHECK(tb_until_all("--", 0, 0, 2, "abcdefg--", "L[ab]L[cd]L[ef]O[g]P[]"));
    /* held bytes are not data yet: no CS_LIMIT for them */
    CHECK(tb_until_all("--abc", 0, 0, 3, "abc--ab", "P[abc--ab]"));
    CHECK(tb_until_all("--abc", 0, 0, 3, "abc--abc", "O[abc]P[]"));
    /* a failed partial match beyond the limit */
    CHECK(tb_until_all("abcd", 0, 0, 2, "abcxabcd", "L[ab]O[cx]P[]"));
    CHECK(tb_until_all("abcd", 0, 0, 2, "xabcy", "L[xa]L[bc]P[y]"));
    /* tail: LIMIT only once a data byte has no room */
    CHECK(tb_until_all("--", 0, 0, 2, "abcd", "L[ab]P[cd]"));
    CHECK(tb_until_all("--", 0, 0, 2, "abcd-", "L[ab]P[cd-]"));
}


static void
test_until_flush_reset(void)
{
    cs_until_t u;
    cs_buf_t in, out;

    cs_buf_init(&in);
    cs_buf_init(&out);
    CHECK(cs_until_init(&u, "--abc", 5, 0) == CS_OK);

    /* held bytes go to the partial once, and are forgotten */
    tb_feed(&in, "xy--a");
    CHECK(cs_until_run(&u, &in, &out, 0, 0) == CS_AGAIN);
    CHECK(tb_is(&out, "xy"));
    CHECK(cs_until_flush(&u, &out) == CS_OK);
    CHECK(tb_is(&out, "xy--a"));
    cs_buf_reset(&out);
    CHECK(cs_until_flush(&u, &out) == CS_OK);
    CHECK(cs_buf_len(&out) == 0);
    tb_feed(&in, "bc");             /* "bc" alone is no match now */
    CHECK(cs_until_run(&u, &in, &out, 0, 0) == CS_AGAIN);
    CHECK(tb_is(&out, "bc"));
    cs_buf_reset(&out);

    /* reset forgets held bytes */
    tb_feed(&in, "--ab");
    CHECK(cs_until_run(&u, &in, &out, 0, 0) == CS_AGAIN);
    CHECK(cs_buf_len(&out) == 0);
    cs_until_reset(&u);
    tb_feed(&in, "c--abc");
    CHECK(cs_until_run(&u, &in, &out, 0, 0) == CS_OK);
    CHECK(tb_is(&out, "c"));
    cs_buf_reset(&out);

    /* a failed partial match goes out whole, past the size */
    cs_until_free(&u);
    CHECK(cs_until_init(&u, "abcd", 4, 0) == CS_OK);
    tb_feed(&in, "abcabc");
    CHECK(cs_until_run(&u, &in, &out, 1, 0) == CS_OK);
    CHECK(tb_is(&out, "abc"));
    CHECK(cs_until_at_boundary(&u) == 0);
    cs_buf_reset(&out);
    CHECK(tb_is(&in, "abc"));           /* the 'a' that broke the match */
    CHECK(cs_until_flush(&u, &out) == CS_OK);  /* nothing pending */
    CHECK(cs_buf_len(&out) == 0);
    CHECK(cs_until_run(&u, &in, &out, 1, 0) == CS_AGAIN);
    CHECK(cs_buf_len(&out) == 0);
    CHECK(cs_until_flush(&u, &out) == CS_OK);  /* "abc" held */
    CHECK(tb_is(&out, "abc"));
    cs_buf_reset(&out);

    /* drop_match forgets the partial match: of "abcabc" against
     * "abcabd" with size 1, the first chunk is "abc", and "ab" the
     * partial match (the last 'c' unread) */
    cs_until_free(&u);
    CHECK(cs_until_init(&u, "abcabd", 6, 0) == CS_OK);
    tb_feed(&in, "abcabc");
    CHECK(cs_until_run(&u, &in, &out, 1, 0) == CS_OK);
    CHECK(tb_is(&out, "abc"));
    cs_buf_reset(&out);
    cs_until_drop_match(&u);
    CHECK(cs_until_flush(&u, &out) == CS_OK);
    CHECK(cs_buf_len(&out) == 0);
    CHECK(tb_is(&in, "c"));
    cs_buf_reset(&out);
    cs_buf_reset(&in);
    cs_until_free(&u);
    CHECK(cs_until_init(&u, "abcd", 4, 0) == CS_OK);

    /* reset clears the boundary */
    tb_feed(&in, "xabcd");
    CHECK(cs_until_run(&u, &in, &out, 9, 0) == CS_OK);
    CHECK(cs_until_at_boundary(&u) == 1);
    CHECK(tb_is(&out, "x"));
    cs_until_reset(&u);
    CHECK(cs_until_at_boundary(&u) == 0);
    cs_buf_reset(&out);
    tb_feed(&in, "yabcd");
    CHECK(cs_until_run(&u, &in, &out, 9, 0) == CS_OK);
    CHECK(tb_is(&out, "y"));
    CHECK(cs_until_run(&u, &in, &out, 9, 0) == CS_CLOSED);
    CHECK(cs_until_at_boundary(&u) == 0);
    CHECK(tb_is(&out, "y"));
    cs_buf_reset(&out);
    /* CS_CLOSED whatever the size of the next call, then re-armed */
    tb_feed(&in, "abcd");
    CHECK(cs_until_run(&u, &in, &out, 3, 0) == CS_OK);
    CHECK(cs_until_at_boundary(&u) && cs_buf_len(&out) == 0);
    CHECK(cs_until_run(&u, &in, &out, 0, 0) == CS_CLOSED);
    tb_feed(&in, "zabcd");
    CHECK(cs_until_run(&u, &in, &out, 0, 0) == CS_OK);
    CHECK(tb_is(&out, "z") && !cs_until_at_boundary(&u));
    cs_buf_reset(&out);

    /* out already holding size bytes: CS_OK at once */
    tb_feed(&out, "12");
    tb_feed(&in, "q");
    CHECK(cs_until_run(&u, &in, &out, 2, 0) == CS_OK);
    CHECK(tb_is(&in, "q"));
    cs_buf_reset(&out);
    cs_buf_reset(&in);

    cs_until_free(&u);
    cs_buf_free(&in);
    cs_buf_free(&out);
}


static void
test_until_enomem(void)
{
    cs_until_t u;
    cs_buf_t in, out;

    cs_buf_init(&in);
    cs_buf_init(&out);
    CHECK(cs_until_init(&u, "--abc", 5, 1) == CS_OK);

    /* plain data */
    tb_feed(&in, "xy--abc");
    tb_fake_full(&out);
    CHECK(cs_until_run(&u, &in, &out, 0, 0) == CS_ERROR);
    CHECK(tb_is(&in, "xy--abc"));
    cs_buf_free(&out);
    CHECK(cs_until_run(&u, &in, &out, 0, 0) == CS_OK);
    CHECK(tb_is(&out, "xy--abc"));
    cs_buf_reset(&out);

    /* the inclusive pattern */
    tb_feed(&in, "--abc!");
    cs_buf_free(&out);
    tb_fake_full(&out);
    CHECK(cs_until_run(&u, &in, &out, 0, 0) == CS_ERROR);
    CHECK(tb_is(&in, "c!"));
    cs_buf_free(&out);
    CHECK(cs_until_run(&u, &in, &out, 0, 0) == CS_OK);
    CHECK(tb_is(&out, "--abc"));
    CHECK(tb_is(&in, "!"));
    cs_buf_reset(&out);
    cs_buf_reset(&in);

    /* data of a failed partial match */
    tb_feed(&in, "--ab-");
    cs_buf_free(&out);
    tb_fake_full(&out);
    CHECK(cs_until_run(&u, &in, &out, 0, 0) == CS_ERROR);
    /* flush cannot write either, and forgets nothing */
    CHECK(cs_until_flush(&u, &out) == CS_ERROR);
    cs_buf_free(&out);
    CHECK(cs_until_run(&u, &in, &out, 0, 0) == CS_AGAIN);
    CHECK(tb_is(&out, "--ab"));
    CHECK(cs_until_flush(&u, &out) == CS_OK);
    CHECK(tb_is(&out, "--ab-"));

    cs_until_free(&u);
    cs_buf_free(&in);
    cs_buf_free(&out);
}


/* many patterns, every chunking: compare with a whole-input search */
static void
test_until_exhaustive(void)
{
    static const char *const pats[] = {
        "a", "aa", "ab", "aab", "aba", "abab", "aaab", "abaab", "abcab"
    };
    char data[13], want[256], *got;
    size_t pi, len, i, pos, w;
    unsigned long x, total;
    int ok = 1;

    for (pi = 0; pi < sizeof(pats) / sizeof(pats[0]); pi++) {
        const char *pat = pats[pi];
        size_t plen = strlen(pat);

        for (len = 0; len <= 8; len++) {
            total = 1;
            for (i = 0; i < len; i++) {
                total *= 3;
            }
            for (x = 0; x < total; x++) {
                unsigned long y = x;

                for (i = 0; i < len; i++) {
                    data[i] = (char) ('a' + y % 3);
                    y /= 3;
                }
                data[len] = '\0';

                /* reference: unsized, not inclusive */
                w = 0;
                pos = 0;
                for (;;) {
                    const char *hit = strstr(data + pos, pat);

                    if (hit == NULL) {
                        break;
                    }
                    w += (size_t) sprintf(want + w, "O[%.*s]",
                                          (int) (hit - data - pos),
                                          data + pos);
                    pos = (size_t) (hit - data) + plen;
                }
                sprintf(want + w, "P[%s]", data + pos);

                for (i = 1; i <= 3; i++) {
                    got = tb_until(pat, 0, 0, 0, data, i);
                    if (strcmp(got, want) != 0) {
                        if (ok) {
                            printf("  \"%s\" in \"%s\": got %s want %s\n",
                                   pat, data, got, want);
                        }
                        ok = 0;
                    }
                    free(got);
                }
            }
        }
    }
    CHECK(ok);
}


int
main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    test_buf_basic();
    test_buf_grow();
    test_buf_compact();
    test_buf_reset_enomem();
    test_line();
    test_count();
    test_until_init();
    test_until_unsized();
    test_until_sized();
    test_until_maxline();
    test_until_flush_reset();
    test_until_enomem();
    test_until_exhaustive();

    printf("%d passed, %d failed\n", npass, nfail);
    return nfail != 0;
}
