/* SPDX-License-Identifier: MIT */
/* The byte layout of a journal record (journal_rec.h).
 *
 * A record, little-endian, starting on a TN_JOURNAL_ALIGN boundary:
 *   0  u64 sum         SipHash-2-4 of bytes 8 .. 40 + len
 *   8  u32 magic       "TNJ2" ("TNJ1": version 1, read only)
 *  12  u32 len         payload bytes
 *  16  u64 gen         generation
 *  24  u64 seq         1, 2, ... inside the generation
 *  32  u64 prev_count  records of generation gen - 1
 *  40  payload:
 *        u64 last_token, i64 alive_at_ms, u32 n_rows, u32 strings_len,
 *        n_rows rows (88 bytes; 72 in version 1), then strings_len bytes
 *        of NUL-ended strings the rows point into
 *      then zeros up to the next boundary.
 * A row: u32 row_id, u32 flags (1 = held, 2 = its expiry was recorded:
 * docs/safety/revealed-end.md; 4 = retired: the row is deleted and token is
 * the retirement floor; 8 = a session's row, of the file's `sessions`),
 * u64 token, i64 ttl_ms, i64 expires_at_ms, i64 lock_delay_ms, 16 bytes
 * of secret, u32 offsets of name (a session: its id), owner, request id
 * and principal (NONE when absent); then, from version 2, u32 the row of
 * the lease's session (0 = none), u32 how a session ended (enum
 * tn_session_end), i64 when it ended.  A version-1 row is the first 72
 * bytes of a version-2 row, the rest zero: no session.
 *
 * The checksum is not a secret: it catches torn and damaged writes.  Lease
 * names and owners are printable text without NUL bytes, so a name cannot
 * spell a header (gen, seq and prev_count have zero high bytes). */
#include "store/embedded/journal_rec.h"

#include <sodium.h>
#include <string.h>

#include <tenure/err.h>

#include "common/alloc.h"

#define MAGIC_V1 0x314a4e54u /* "TNJ1" */
#define MAGIC_V2 0x324a4e54u /* "TNJ2" */
#define PAYLOAD_FIXED 24
#define ROW_BYTES_V1 72
#define ROW_BYTES_V2 88
#define NONE UINT32_MAX
#define MAX_PAYLOAD ((uint32_t)1 << 30)

#define FLAG_HELD 1u
#define FLAG_ENDED 2u
#define FLAG_RETIRED 4u
#define FLAG_SESSION 8u

static const unsigned char sum_key[crypto_shorthash_KEYBYTES] =
    "tenure-journal-1";

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static uint64_t get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

uint64_t tn_jrec_align(uint64_t n)
{
    return (n + TN_JOURNAL_ALIGN - 1) / TN_JOURNAL_ALIGN * TN_JOURNAL_ALIGN;
}

static uint64_t checksum(const unsigned char *rec, uint32_t len)
{
    unsigned char out[crypto_shorthash_BYTES];
    crypto_shorthash(out, rec + 8,
                     (unsigned long long)(TN_JOURNAL_HEADER - 8) + len,
                     sum_key);
    return get64(out);
}

void tn_jrec_header(const unsigned char *p, struct tn_jrec_hdr *h)
{
    uint32_t magic = get32(p + 8);
    h->version = magic == MAGIC_V1 ? 1 : magic == MAGIC_V2 ? 2 : 0;
    h->len = get32(p + 12);
    h->gen = get64(p + 16);
    h->seq = get64(p + 24);
    h->prev_count = get64(p + 32);
}

bool tn_jrec_at(const unsigned char *data, uint64_t size, uint64_t off,
                struct tn_jrec_hdr *h)
{
    if (off + TN_JOURNAL_HEADER > size)
        return false;
    const unsigned char *p = data + off;
    tn_jrec_header(p, h);
    if (h->version == 0 || h->len > MAX_PAYLOAD ||
        h->len > size - off - TN_JOURNAL_HEADER || h->gen == 0 || h->seq == 0)
        return false;
    return checksum(p, h->len) == get64(p);
}

static int grow_rows(struct tn_jrec_rows *r, uint64_t n)
{
    if (n <= r->cap)
        return TN_OK;
    struct tn_row *v = tn_reallocarray(r->v, n, sizeof(*v));
    if (v == NULL)
        return TN_ENOMEM;
    r->v = v;
    r->cap = n;
    return TN_OK;
}

/* Row q (row_bytes long) into row; TN_EIO if it points outside slen. */
static int decode_row(const unsigned char *q, size_t row_bytes, uint64_t slen,
                      struct tn_row *row)
{
    uint32_t off[4];
    for (int k = 0; k < 4; k++) {
        off[k] = get32(q + 56 + 4 * k);
        if (off[k] != NONE && off[k] >= slen)
            return TN_EIO;
    }
    memset(row, 0, sizeof(*row));
    row->row_id = get32(q);
    if (row->row_id == 0 || off[0] == NONE || off[1] == NONE)
        return TN_EIO;
    uint32_t flags = get32(q + 4);
    row->held = (flags & FLAG_HELD) != 0;
    row->ended = row->held && (flags & FLAG_ENDED) != 0;
    row->retired = (flags & FLAG_RETIRED) != 0;
    row->session = (flags & FLAG_SESSION) != 0;
    row->token = get64(q + 8);
    row->ttl_ms = (int64_t)get64(q + 16);
    row->expires_at_ms = (int64_t)get64(q + 24);
    row->lock_delay_ms = (int64_t)get64(q + 32);
    memcpy(row->secret, q + 40, TN_SECRET_BYTES);
    row->name_off = off[0];
    row->owner_off = off[1];
    row->rid_off = off[2] == NONE ? SIZE_MAX : off[2];
    row->principal_off = off[3] == NONE ? SIZE_MAX : off[3];
    if (row_bytes < ROW_BYTES_V2)
        return TN_OK;
    row->session_row = get32(q + 72);
    uint32_t end = get32(q + 76);
    if (end > 3)
        return TN_EIO;
    row->end = (uint8_t)end;
    row->ended_at_ms = (int64_t)get64(q + 80);
    return TN_OK;
}

int tn_jrec_decode(const unsigned char *p, uint32_t len, uint32_t version,
                   struct tn_jrec_rows *r, struct tn_batch *b,
                   int64_t *alive_at_ms)
{
    size_t row_bytes = version == 1 ? ROW_BYTES_V1 : ROW_BYTES_V2;
    if (len < PAYLOAD_FIXED)
        return TN_EIO;
    uint64_t n = get32(p + 16), slen = get32(p + 20);
    if ((uint64_t)PAYLOAD_FIXED + n * row_bytes + slen != len)
        return TN_EIO;
    const unsigned char *s = p + PAYLOAD_FIXED + n * row_bytes;
    if (slen > 0 && s[slen - 1] != '\0')
        return TN_EIO;
    if (grow_rows(r, n) < 0)
        return TN_ENOMEM;
    memset(b, 0, sizeof(*b));
    b->last_token = get64(p);
    *alive_at_ms = (int64_t)get64(p + 8);
    b->rows = r->v;
    b->n_rows = n;
    b->strings.data = (char *)(uintptr_t)s;
    b->strings.len = slen;
    for (uint64_t i = 0; i < n; i++) {
        const unsigned char *q = p + PAYLOAD_FIXED + i * row_bytes;
        if (decode_row(q, row_bytes, slen, &r->v[i]) < 0)
            return TN_EIO;
    }
    return TN_OK;
}

static uint32_t off32(size_t off)
{
    return off == SIZE_MAX ? NONE : (uint32_t)off;
}

static void encode_row(unsigned char *w, const struct tn_row *r)
{
    put32(w, r->row_id);
    put32(w + 4, (r->held ? FLAG_HELD : 0u) |
                     (r->held && r->ended ? FLAG_ENDED : 0u) |
                     (r->retired ? FLAG_RETIRED : 0u) |
                     (r->session ? FLAG_SESSION : 0u));
    put64(w + 8, r->token);
    put64(w + 16, (uint64_t)r->ttl_ms);
    put64(w + 24, (uint64_t)r->expires_at_ms);
    put64(w + 32, (uint64_t)r->lock_delay_ms);
    memcpy(w + 40, r->secret, TN_SECRET_BYTES);
    put32(w + 56, off32(r->name_off));
    put32(w + 60, off32(r->owner_off));
    put32(w + 64, off32(r->rid_off));
    put32(w + 68, off32(r->principal_off));
    put32(w + 72, r->session_row);
    put32(w + 76, r->end);
    put64(w + 80, (uint64_t)r->ended_at_ms);
}

uint64_t tn_jrec_encode(unsigned char **buf, size_t *cap,
                        const struct tn_jrec_hdr *h, const struct tn_batch *b,
                        int64_t alive_at_ms)
{
    uint64_t len =
        PAYLOAD_FIXED + (uint64_t)b->n_rows * ROW_BYTES_V2 + b->strings.len;
    if (len > MAX_PAYLOAD || b->strings.len >= NONE)
        return 0;
    uint64_t total = tn_jrec_align(TN_JOURNAL_HEADER + len);
    if (total > *cap) {
        unsigned char *w = tn_malloc(total);
        if (w == NULL)
            return 0;
        tn_free(*buf);
        *buf = w;
        *cap = total;
    }
    unsigned char *p = *buf, *q = p + TN_JOURNAL_HEADER;
    put32(p + 8, MAGIC_V2);
    put32(p + 12, (uint32_t)len);
    put64(p + 16, h->gen);
    put64(p + 24, h->seq);
    put64(p + 32, h->prev_count);
    put64(q, b->last_token);
    put64(q + 8, (uint64_t)alive_at_ms);
    put32(q + 16, (uint32_t)b->n_rows);
    put32(q + 20, (uint32_t)b->strings.len);
    for (size_t i = 0; i < b->n_rows; i++)
        encode_row(q + PAYLOAD_FIXED + i * ROW_BYTES_V2, &b->rows[i]);
    unsigned char *s = q + PAYLOAD_FIXED + b->n_rows * ROW_BYTES_V2;
    if (b->strings.len > 0)
        memcpy(s, b->strings.data, b->strings.len);
    memset(s + b->strings.len, 0, total - TN_JOURNAL_HEADER - len);
    put64(p, checksum(p, (uint32_t)len));
    return total;
}
