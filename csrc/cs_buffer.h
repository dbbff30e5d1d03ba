/*
 * The receive buffer and the receive-pattern engine of cs.socket.
 *
 * Pure C99: no Lua, no libevent, no system calls. The socket code reads
 * into an `in` buffer (cs_buf_prepare + recv + cs_buf_commit) and then runs
 * one of the patterns below, which move bytes from `in` to `out` (the
 * result being assembled). A pattern that returns CS_AGAIN has consumed all
 * of `in` and keeps its progress in `out` (and, for receiveuntil, in the
 * cs_until_t), so the caller parks, reads more into `in` and calls the same
 * pattern again with the same `out`.
 *
 * Return codes (cs_rc.h): CS_OK, CS_AGAIN, CS_CLOSED (only cs_until_run, at
 * a boundary), CS_LIMIT (maxline) and CS_ERROR (only on ENOMEM; nothing is
 * lost then: what was not moved to `out` is still in `in` or in the
 * cs_until_t, and the same call may be retried).
 *
 * Buffer arguments of one call must be distinct buffers, and pointers given
 * to cs_buf_append must not point into the destination buffer.
 *
 *
 * receiveuntil: what OpenResty does, and what cs_until_run does
 * --------------------------------------------------------------
 *
 * Read in openresty/lua-nginx-module, src/ngx_http_lua_socket_tcp.c
 * (master of 2024; ngx_http_lua_socket_tcp_receiveuntil,
 * ngx_http_lua_socket_receiveuntil_iterator, ngx_http_lua_socket_read_until,
 * ngx_http_lua_socket_push_input_data), its README (tcpsock:receiveuntil)
 * and t/066-socket-receiveuntil.t (TEST 15 and 17):
 *
 * - receiveuntil(pattern [, {inclusive = bool}]) rejects an empty pattern
 *   ("pattern is empty"); `inclusive` must be a boolean or nil.
 *
 * - Iterator called without a size (or with 0; negative sizes count as 0):
 *   returns everything before the next occurrence of the pattern, which is
 *   consumed and not returned, or appended to the data when inclusive. The
 *   data may be the empty string (pattern right at the start). The matcher
 *   then starts afresh after the occurrence, so occurrences never overlap
 *   (leftmost, non-overlapping, like repeated memmem). On an error
 *   (timeout, closed) it returns nil, err, partial.
 *
 * - Iterator called with a size > 0 (a real iterator): every call returns as
 *   soon as `size` bytes of data are known not to be part of the pattern
 *   (read_until: `if (u->length && --u->rest == 0) return NGX_OK` for a
 *   plain byte). When the pattern is matched the call returns the data seen
 *   since the last chunk, which is shorter than size and may be EMPTY (for
 *   instance when the data before the pattern is a multiple of size, or is
 *   empty), plus the pattern when inclusive; it sets cp->state = -1 and the
 *   NEXT call returns nil, nil, nil without reading and resets the state to
 *   0, so the call after that looks for the next occurrence
 *   (receiveuntil_iterator: `if (cp->state == -1) { cp->state = 0; push
 *   nil, nil, nil }`). Example from the README, data
 *   "hello, world! -agentzh\r\n--abcedhb blah blah", reader(4):
 *   "hell", "o, w", "orld", "! -a", "gent", "zh", nil.
 *   TEST 17 shows the empty chunk: a chunk that ends right before the
 *   pattern is followed by "" and then nil.
 *
 * - "The actual data returned might be a little longer than the size limit
 *   when the boundary pattern has ambiguity": when a partial match fails,
 *   read_until pushes all the bytes dropped from the partial match at once
 *   (`pending_len = old_state + 1 - state`, or `state` bytes when no
 *   recovering edge applies) and returns if `u->rest <= pending_len`, so a
 *   chunk can overshoot by up to len(pattern) - 2 bytes. This engine does
 *   the same (cs_until_pending gives them out whole when a size is set).
 *
 * - OpenResty's matcher is a hand-built DFA with one recovering edge per
 *   state (ngx_http_lua_socket_compile_pattern) and is not complete for
 *   every self-overlapping pattern; this one is KMP with a full failure
 *   table, and never loses or duplicates a byte whatever the chunking.
 *
 * - A call that returns while a partial match is in progress (a sized
 *   call, or a timeout, whose `partial` leaves those bytes out) keeps it in
 *   cp->state; when another reader of the socket starts, those bytes go
 *   back to the front of its buffer (read_prepare, lua-nginx-module 0.10.25
 *   and later; t/066 TEST 22; 0.10.23 left them with the iterator), and the
 *   same iterator called again goes on with them. When the stream ends
 *   (closed, reset) they are dropped: "ab-" then EOF, pattern "--", gives
 *   nil, "closed", "ab" (recorded from OpenResty, spec/59). Here the
 *   caller chooses: the held bytes stay in the cs_until_t (the same
 *   iterator goes on), cs_until_unread puts them back into `in`,
 *   cs_until_flush appends them to `partial` (after cs_until_drop_match,
 *   the pending data only), cs_until_reset forgets them.
 *
 * Differences on purpose (corosched): without a size, maxline > 0 bounds the
 * data (CS_LIMIT, "line too long"); the pattern appended by `inclusive`
 * does not count towards maxline.
 */
#ifndef CS_BUFFER_H
#define CS_BUFFER_H

#include <assert.h>
#include <stddef.h>
#include "cs_rc.h"

/* buffers whose capacity is above this are freed by cs_buf_reset */
#define CS_BUF_KEEP_MAX (64 * 1024)

typedef struct cs_buf_s {
    char *data;
    size_t start;   /* first unread byte */
    size_t end;     /* one past the last byte */
    size_t cap;
} cs_buf_t;

/* empty, no allocation */
static inline void
cs_buf_init(cs_buf_t *b)
{
    b->data = NULL;
    b->start = 0;
    b->end = 0;
    b->cap = 0;
}

/* frees the memory; b is back in the init state */
void cs_buf_free_mem(cs_buf_t *b);

static inline void
cs_buf_free(cs_buf_t *b)
{
    if (b->data != NULL) /* (the common case on a receive's way out) */
        cs_buf_free_mem(b);
}

/* number of unread bytes */
static inline size_t
cs_buf_len(const cs_buf_t *b)
{
    return b->end - b->start;
}

/* the first unread byte; NULL when nothing was ever allocated */
static inline const char *
cs_buf_ptr(const cs_buf_t *b)
{
    return b->data != NULL ? b->data + b->start : NULL;
}

/*
 * Room for at least n bytes after the last one: compacts (moves the unread
 * bytes to the front) or grows geometrically. Returns where to write, or
 * NULL on ENOMEM (b unchanged). Pointers into b are invalidated.
 */
char *cs_buf_prepare(cs_buf_t *b, size_t n);

/* n bytes were written at the place cs_buf_prepare returned (n <= asked) */
void cs_buf_commit(cs_buf_t *b, size_t n);

/* drops n <= cs_buf_len(b) bytes from the front; start = end = 0 when empty */
static inline void
cs_buf_consume(cs_buf_t *b, size_t n)
{
    assert(n <= b->end - b->start);
    if (n >= b->end - b->start) {
        b->start = 0;
        b->end = 0;
    } else {
        b->start += n;
    }
}

/* copies n bytes to the end (p must not point into b): CS_OK or CS_ERROR */
int cs_buf_append(cs_buf_t *b, const char *p, size_t n);

/* empty; keeps the memory unless cap > CS_BUF_KEEP_MAX, then frees it */
void cs_buf_reset(cs_buf_t *b);

/*
 * "*l": moves the bytes up to the first LF from in to out. The LF is
 * consumed, not copied; every CR anywhere in the line is dropped (as in
 * OpenResty's ngx_http_lua_read_line). CS_OK: out is the complete line.
 * CS_AGAIN: in is exhausted and no LF yet. CS_LIMIT: the line (CRs
 * excluded) would exceed maxline bytes: out holds its first maxline bytes,
 * the rest stays in in (CRs right after the maxline-th byte may have been
 * consumed). maxline 0 = no limit.
 */
int cs_pat_line(cs_buf_t *in, cs_buf_t *out, size_t maxline);

/*
 * Byte count: moves min(want - len(out), len(in)) bytes; CS_OK when
 * len(out) >= want (want 0: CS_OK at once), else CS_AGAIN.
 */
int cs_pat_count(cs_buf_t *in, cs_buf_t *out, size_t want);

/*
 * The matcher of one receiveuntil iterator. Bytes held back are always
 * pat[pend_start..pend_end) (data bytes of a failed partial match that did
 * not fit into the last chunk) followed by pat[0..q) (the current partial
 * match), so no copy of the input is kept.
 */
typedef struct cs_until_s {
    char *pat;          /* copy of the pattern */
    size_t plen;        /* >= 1 */
    size_t *fail;       /* fail[k]: longest proper border of pat[0..k) */
    size_t q;           /* bytes of the pattern matched so far */
    size_t pend_start;  /* pending data: pat[pend_start..pend_end) */
    size_t pend_end;
    int inclusive;
    int boundary;       /* the last sized run ended at the pattern */
} cs_until_t;

/* plen >= 1; copies pat. CS_OK, or CS_ERROR (ENOMEM, or plen == 0) */
int cs_until_init(cs_until_t *u, const char *pat, size_t plen,
    int inclusive);

/* frees; u can be freed again or re-initialised */
void cs_until_free(cs_until_t *u);

/* forgets the held bytes and the boundary: next run starts afresh */
void cs_until_reset(cs_until_t *u);

/*
 * Appends the held bytes (pending data, and the partial match unless
 * cs_until_drop_match forgot it) to out and forgets them: used to build
 * `partial` when the stream ends. CS_OK, or CS_ERROR (ENOMEM; nothing
 * forgotten).
 */
int cs_until_flush(cs_until_t *u, cs_buf_t *out);

/* forgets the bytes of the partial match in progress (pending data stays):
 * OpenResty's read_until leaves them out of `partial` when the stream ends
 * (closed, reset) */
void cs_until_drop_match(cs_until_t *u);

/*
 * One step of the iterator; see the comment at the top of this file.
 * size == 0: CS_OK when the pattern is matched; out = all the data before
 * it (plus the pattern if inclusive); the matcher is ready for the next
 * occurrence. CS_LIMIT (maxline > 0): out holds maxline data bytes and
 * another one does not fit; the rest stays in in and u, and calling again
 * (with an emptied out) continues the same search.
 * size > 0: CS_OK when out holds `size` bytes (exactly, if it was empty at
 * the first call), or when the pattern is matched (out = the data since the
 * last chunk, maybe empty, plus the pattern if inclusive): then
 * cs_until_at_boundary() is true and the next call returns CS_CLOSED
 * without touching in or out ("nil with no error") and re-arms. maxline is
 * ignored.
 * CS_AGAIN: in is exhausted; possible pattern bytes are held in u.
 * CS_ERROR: ENOMEM.
 */
int cs_until_run(cs_until_t *u, cs_buf_t *in, cs_buf_t *out, size_t size,
    size_t maxline);

/*
 * Puts the held bytes back at the front of in (another reader of the same
 * stream takes over: OpenResty's ngx_http_lua_socket_tcp_read_prepare) and
 * forgets them; a boundary just hit is kept. CS_OK, or CS_ERROR (ENOMEM;
 * nothing changed).
 */
int cs_until_unread(cs_until_t *u, cs_buf_t *in);

/* whether the last cs_until_run with size > 0 hit the boundary */
int cs_until_at_boundary(const cs_until_t *u);

#endif
