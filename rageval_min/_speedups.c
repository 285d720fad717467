/* Optional C kernels of rageval_min: the rouge-score tokenizer, n-gram overlaps, the
 * bit-parallel LCS length and the union LCS of rougeLsum, MT-RAG's text counts; and, in
 * _speedups_json.c (built into the same module), the json.dumps form of a record line.
 *
 * Built as rageval_min._speedups when a C compiler is available (setup.py; the build is
 * optional). rageval_min/_speedups_loader.py decides at first use whether these kernels run
 * (RAGEVAL_MIN_PURE=1 forces the pure-Python code). They compute integers only -- token
 * counts, n-gram overlaps, LCS lengths, rougeLsum hits -- and the Python code turns them into
 * scores with the same float operations as the pure path, so a score cannot differ by kernel.
 * The JSON kernels return text, their floats written by CPython's own repr
 * (PyOS_double_to_string), or decline. tests/test_speedups.py and tests/test_dumps_form.py
 * compare both paths on the conformance data and seeded random texts.
 *
 * The algorithms are the pure path's (rageval_min/rouge.py): tokens are the maximal [a-z0-9]
 * runs of text.lower() with every non-ASCII character a separator; the LCS length is the
 * Allison-Dix / Hyyro bit-parallel recurrence v' = (v + u) | (v & ~u) with u = v & mask; the
 * rougeLsum union takes, per sentence pair, the LCS that rouge-score's backtrack picks (see
 * rouge._lcs_walk for why the walk on the bit-parallel columns takes the same path). CPython C
 * API only.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <float.h>
#include <stdint.h>
#include <string.h>

/* Bump with any change of behaviour; the loader refuses a build of another version. */
#define KERNEL_VERSION 6
/* Scratch memory one call may use before it declines (returns None: the pure path runs). */
#define SCRATCH_LIMIT ((size_t)1 << 28)

typedef uint64_t word;
#define WBITS 64

static int
high_bit(word x) /* index of the highest set bit; x != 0 */
{
#if defined(__GNUC__) || defined(__clang__)
    return 63 - __builtin_clzll(x);
#else
    int k = 0;
    while (x >>= 1) k++;
    return k;
#endif
}

static int
pop_count(word x)
{
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_popcountll(x);
#else
    int k = 0;
    while (x) { x &= x - 1; k++; }
    return k;
#endif
}

/* ------------------------------------------------------------- bit-parallel LCS */

/* One column: u = v & m; v = (v + u) | (v & ~u), over w words (carries upwards). */
static void
lcs_step(word *v, const word *m, Py_ssize_t w)
{
    word carry = 0;
    for (Py_ssize_t k = 0; k < w; k++) {
        word x = v[k], u = x & m[k];
        word s = x + u;
        word c1 = s < x;
        word s2 = s + carry;
        carry = c1 | (s2 < s);
        v[k] = s2 | (x & ~u);
    }
}

static void
all_ones(word *v, Py_ssize_t rows, Py_ssize_t w)
{
    for (Py_ssize_t k = 0; k < w; k++) v[k] = ~(word)0;
    if (rows % WBITS) v[w - 1] = ((word)1 << (rows % WBITS)) - 1;
}

/* LCS length = the number of 0 bits among the rows. */
static Py_ssize_t
zero_rows(const word *v, Py_ssize_t rows, Py_ssize_t w)
{
    Py_ssize_t ones = 0;
    for (Py_ssize_t k = 0; k < w; k++) {
        word x = v[k];
        if (k == w - 1 && rows % WBITS) x &= ((word)1 << (rows % WBITS)) - 1;
        ones += pop_count(x);
    }
    return rows - ones;
}

/* Highest set bit of x & (2**i - 1) over w words, or -1. */
static Py_ssize_t
high_below(const word *x, Py_ssize_t i, int invert)
{
    if (i <= 0) return -1;
    Py_ssize_t k = (i - 1) / WBITS;
    int r = (int)((i - 1) % WBITS);
    word lim = r == WBITS - 1 ? ~(word)0 : (((word)1 << (r + 1)) - 1);
    for (; k >= 0; k--, lim = ~(word)0) {
        word y = (invert ? ~x[k] : x[k]) & lim;
        if (y) return k * WBITS + high_bit(y);
    }
    return -1;
}

/* rouge-score's backtrack (rouge._lcs_walk) of one sentence pair: `rows` reference tokens of
 * w words; colm[j] the position mask of candidate token j (NULL: no match), nc columns; cols
 * scratch of nc * w words. Sets the bit of every reference row the chosen LCS takes in mark. */
static void
lcs_walk(Py_ssize_t rows, Py_ssize_t w, const word *const *colm, Py_ssize_t nc, word *cols, word *mark)
{
    word *v = cols, *prev = NULL;
    for (Py_ssize_t j = 0; j < nc; j++, v += w) {
        if (prev) memcpy(v, prev, (size_t)w * sizeof(word));
        else all_ones(v, rows, w);
        if (colm[j]) lcs_step(v, colm[j], w);
        prev = v;
    }
    Py_ssize_t i = rows, j = nc;
    while (i > 0 && j > 0) {
        const word *col = cols + (j - 1) * w;
        Py_ssize_t k_hit = colm[j - 1] ? high_below(colm[j - 1], i, 0) : -1;
        Py_ssize_t k_zero = high_below(col, i, 1);
        if (k_hit >= 0 && k_hit >= k_zero) {
            mark[k_hit / WBITS] |= (word)1 << (k_hit % WBITS);
            i = k_hit;
        }
        else if (k_zero >= 0) {
            i = k_zero + 1;
        }
        else {
            break;
        }
        j--;
    }
}

/* The backtrack of lcs_walk for a reference sentence of at most 64 tokens: cm[j] the mask of
 * candidate token j (0: no match), cols[j] the column after it; returns the marked rows, or
 * some of them: the walk stops once no row of `pending` is left below it (the caller needs
 * only those; pass ~0 for all).
 * After a column without a match the walk is at the row that column's first 0 bit allows,
 * and the following columns without a match (the same column) leave it there: they are
 * crossed at once. */
static word
walk1_back(Py_ssize_t rows, const word *cm, Py_ssize_t nc, const word *cols, word pending)
{
    word mark = 0;
    Py_ssize_t i = rows, j = nc;
    while (i > 0 && j > 0) {
        word below = i >= WBITS ? ~(word)0 : ((word)1 << i) - 1;
        if (!(pending & below)) break; /* the rest of the walk marks none of `pending`: no news */
        word hit = cm[j - 1] & below, zero = ~cols[j - 1] & below;
        int k_zero = zero ? high_bit(zero) : -1;
        if (hit) {
            int k_hit = high_bit(hit);
            if (k_hit >= k_zero) {
                mark |= (word)1 << k_hit;
                i = k_hit;
                j--;
                continue;
            }
        }
        if (k_zero < 0) break;
        i = k_zero + 1;
        if (cm[j - 1]) { j--; continue; }
        do j--; while (j > 0 && !cm[j - 1]);
    }
    return mark;
}

/* ------------------------------------------------------------- token ids */

/* Token characters are read 8 at a time: the class buffer has 8 zero bytes of padding. */
#define PAD 8

static int little_endian;

/* The first min(len, 8) bytes of p as a word, the rest zero. */
static word
head_word(const char *p, Py_ssize_t len)
{
    word k;
    memcpy(&k, p, sizeof k);
    if (len >= 8) return k;
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return k & (((word)1 << (8 * len)) - 1);
#else
    return little_endian ? k & (((word)1 << (8 * len)) - 1) : k & ~(~(word)0 >> (8 * len));
#endif
}

static inline uint64_t
token_hash(const char *p, Py_ssize_t len)
{
    uint64_t h = head_word(p, len) * 0x9E3779B97F4A7C15ULL ^ (uint64_t)len;
    for (Py_ssize_t i = 8; i < len; i += 8) h = (h ^ head_word(p + i, len - i)) * 0x9E3779B97F4A7C15ULL;
    return h ^ (h >> 32);
}

typedef struct {
    word head; /* head_word(p, len) */
    const char *p;
    int32_t len;
    int32_t id;
    uint32_t gen; /* the slot is taken when gen is the table's */
} Slot;

typedef struct {
    Slot *slots;
    size_t mask;  /* capacity - 1 (a power of two) */
    int32_t n;    /* ids given so far */
    uint32_t gen;
} Intern;

/* Scratch tables kept between calls (the GIL serialises the calls; nothing in a call runs
 * Python code while a table is in use): a new generation number empties one without
 * touching its memory. A table grown beyond POOL_MAX entries is freed after the call. */
#define POOL_MAX ((size_t)1 << 15)

typedef struct {
    void *mem;
    size_t cap;
    uint32_t gen;
} Pool;

static Pool intern_pool, gram_pool;

/* A table of at least `want` entries of `size` bytes from pool, and its generation. */
static void *
pool_take(Pool *pool, size_t want, size_t size, uint32_t *gen)
{
    if (pool->cap < want) {
        PyMem_Free(pool->mem);
        pool->mem = PyMem_Calloc(want, size);
        pool->cap = pool->mem ? want : 0;
        pool->gen = 0;
        if (!pool->mem) { PyErr_NoMemory(); return NULL; }
    }
    if (++pool->gen == 0) { /* wrapped: clear once */
        memset(pool->mem, 0, pool->cap * size);
        pool->gen = 1;
    }
    *gen = pool->gen;
    return pool->mem;
}

static void
pool_trim(Pool *pool)
{
    if (pool->cap > POOL_MAX) {
        PyMem_Free(pool->mem);
        pool->mem = NULL;
        pool->cap = 0;
    }
}

static int
intern_init(Intern *t, Py_ssize_t tokens)
{
    size_t cap = 64;
    while (cap < (size_t)tokens * 2 + 2) cap <<= 1;
    /* Only the first cap slots of the pool's table are used: a table left large by a long
     * text would scatter a short text's few tokens over more memory than the cache holds. */
    t->slots = (Slot *)pool_take(&intern_pool, cap, sizeof(Slot), &t->gen);
    t->mask = cap - 1;
    t->n = 0;
    return t->slots ? 0 : -1;
}

/* Twice the slots when half are taken (the pool's table becomes the new one). */
static int
intern_grow(Intern *t)
{
    size_t cap = (t->mask + 1) * 2;
    Slot *old = t->slots, *slots = (Slot *)PyMem_Calloc(cap, sizeof(Slot));
    if (!slots) { PyErr_NoMemory(); return -1; }
    for (size_t k = 0; k <= t->mask; k++) {
        if (old[k].gen != t->gen) continue;
        size_t j = (size_t)token_hash(old[k].p, old[k].len) & (cap - 1);
        while (slots[j].gen == t->gen) j = (j + 1) & (cap - 1);
        slots[j] = old[k];
    }
    PyMem_Free(old);
    intern_pool.mem = slots;
    intern_pool.cap = cap;
    t->slots = slots;
    t->mask = cap - 1;
    return 0;
}

/* The id of the token p[:len], a new one when unseen; -1 on error. */
static int32_t
intern(Intern *t, const char *p, Py_ssize_t len)
{
    if ((size_t)t->n * 2 >= t->mask && intern_grow(t) < 0) return -1;
    if (len > INT32_MAX) { PyErr_SetString(PyExc_OverflowError, "token too long"); return -1; }
    word head = head_word(p, len);
    uint64_t h = head * 0x9E3779B97F4A7C15ULL ^ (uint64_t)len;
    for (Py_ssize_t i = 8; i < len; i += 8) h = (h ^ head_word(p + i, len - i)) * 0x9E3779B97F4A7C15ULL;
    size_t k = (size_t)(h ^ (h >> 32)) & t->mask;
    for (;;) {
        Slot *s = &t->slots[k];
        if (s->gen != t->gen) {
            s->head = head;
            s->p = p;
            s->len = (int32_t)len;
            s->id = t->n++;
            s->gen = t->gen;
            return s->id;
        }
        if (s->head == head && s->len == len && (len <= 8 || memcmp(s->p + 8, p + 8, (size_t)len - 8) == 0))
            return s->id;
        k = (k + 1) & t->mask;
    }
}

/* The id of the token p[:len], or -1 when it has none (nothing is added). */
static inline int32_t
intern_find(const Intern *t, const char *p, Py_ssize_t len)
{
    word head = head_word(p, len); /* token_hash, its first word read once */
    uint64_t h = head * 0x9E3779B97F4A7C15ULL ^ (uint64_t)len;
    for (Py_ssize_t i = 8; i < len; i += 8) h = (h ^ head_word(p + i, len - i)) * 0x9E3779B97F4A7C15ULL;
    size_t k = (size_t)(h ^ (h >> 32)) & t->mask;
    for (;;) {
        const Slot *s = &t->slots[k];
        if (s->gen != t->gen) return -1;
        if (s->head == head && s->len == len && (len <= 8 || memcmp(s->p + 8, p + 8, (size_t)len - 8) == 0))
            return s->id;
        k = (k + 1) & t->mask;
    }
}

/* ------------------------------------------------------------- the tokenizer */

/* Byte class of the reference tokenizer: the lower-case letter or digit, 1 for "\n" (a
 * sentence break, rougeLsum), or 0 (a separator; every non-ASCII code point is one). */
static unsigned char CLS[256];

static void
init_tables(void)
{
    for (int c = 0; c < 256; c++) {
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) CLS[c] = (unsigned char)c;
        else if (c >= 'A' && c <= 'Z') CLS[c] = (unsigned char)(c + 32);
        else if (c == '\n') CLS[c] = 1;
        else CLS[c] = 0;
    }
    word one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    little_endian = first == 1;
}

typedef struct {
    PyObject *lowered; /* a new reference to text.lower() when text is not ASCII */
    char *buf;         /* the class buffer: the tokens are read in place */
    int32_t *ids;
    Py_ssize_t n;      /* tokens */
    Py_ssize_t *sent;  /* start of each non-empty line (rougeLsum's sentences), then n */
    Py_ssize_t nsent;
} Toks;

static void
toks_free(Toks *t)
{
    Py_CLEAR(t->lowered);
    PyMem_Free(t->buf);
    PyMem_Free(t->ids);
    PyMem_Free(t->sent);
    t->buf = NULL;
    t->ids = NULL;
    t->sent = NULL;
}

/* What a non-ASCII code point contributes to the reference tokens: str.lower() acts on each
 * character alone (but for the final sigma, which is not ASCII either way), so a character
 * contributes the classes of its own lower(). For all but a few (KELVIN SIGN -> "k", U+0130
 * -> "i" + U+0307 in Unicode 15) that is one separator. LOWMAP caches per code point:
 * 0 unknown, 1 a separator, 2 the classes in `specials`. */
static unsigned char *LOWMAP;
#define MAX_SPECIALS 64
typedef struct { Py_UCS4 cp; unsigned char n, out[7]; } Special;
static Special specials[MAX_SPECIALS];
static int nspecials;

/* The classes of chr(ch).lower() into out (at most 7), their number, or -1 (error) or -2
 * (the mapping cannot be cached: the caller lower-cases the whole text). */
static int
lower_classes(Py_UCS4 ch, unsigned char *out)
{
    if (!LOWMAP) {
        LOWMAP = (unsigned char *)PyMem_Calloc(0x110000, 1);
        if (!LOWMAP) { PyErr_NoMemory(); return -1; }
    }
    if (LOWMAP[ch] == 1) { out[0] = 0; return 1; }
    if (LOWMAP[ch] == 2) {
        for (int k = 0; k < nspecials; k++)
            if (specials[k].cp == ch) { memcpy(out, specials[k].out, specials[k].n); return specials[k].n; }
    }
    PyObject *one = PyUnicode_FromOrdinal((int)ch), *low = one ? PyObject_CallMethod(one, "lower", NULL) : NULL;
    Py_XDECREF(one);
    if (!low) return -1;
    Py_ssize_t n = PyUnicode_GET_LENGTH(low);
    int ascii = 0;
    for (Py_ssize_t i = 0; i < n && i < 7; i++) {
        Py_UCS4 c = PyUnicode_READ_CHAR(low, i);
        out[i] = c < 128 ? CLS[c] : 0;
        ascii |= out[i] != 0;
    }
    Py_DECREF(low);
    if (!ascii) { LOWMAP[ch] = 1; out[0] = 0; return 1; }
    if (n > 7 || nspecials == MAX_SPECIALS) return -2;
    specials[nspecials].cp = ch;
    specials[nspecials].n = (unsigned char)n;
    memcpy(specials[nspecials].out, out, (size_t)n);
    nspecials++;
    LOWMAP[ch] = 2;
    return (int)n;
}

/* classify's loop over a text that is not ASCII; -2: lower-case the whole text instead. */
static Py_ssize_t
classify_wide(PyObject *s, unsigned char **buf, size_t *cap)
{
    int kind = PyUnicode_KIND(s);
    const void *d = PyUnicode_DATA(s);
    Py_ssize_t len = PyUnicode_GET_LENGTH(s), pos = 0;
    unsigned char *c = *buf, tmp[8];
    for (Py_ssize_t i = 0; i < len; i++) {
        Py_UCS4 ch = PyUnicode_READ(kind, d, i);
        if (ch < 128) { c[pos++] = CLS[ch]; continue; }
        if (LOWMAP && LOWMAP[ch] == 1) { c[pos++] = 0; continue; }
        int n = lower_classes(ch, tmp);
        if (n < 0) return n;
        if ((size_t)(pos + n + (len - i) + PAD) > *cap) { /* room for this and every later character */
            size_t more = *cap * 2 + (size_t)n + 16;
            unsigned char *grown = (unsigned char *)PyMem_Realloc(c, more);
            if (!grown) { PyErr_NoMemory(); return -1; }
            *buf = c = grown;
            *cap = more;
        }
        memcpy(c + pos, tmp, (size_t)n);
        pos += n;
    }
    return pos;
}

/* The classes of text's characters (CLS), then PAD zero bytes: ASCII text as is, other text as
 * its str.lower() would give them (a few characters lower-case into ASCII). Returns the number
 * of classes, the buffer in *out (PyMem), or -1. */
static Py_ssize_t
classify(PyObject *text, Toks *t, unsigned char **out)
{
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0) return -1;
#endif
    Py_ssize_t len = PyUnicode_GET_LENGTH(text);
    size_t cap = (size_t)len + PAD + 8;
    unsigned char *c = (unsigned char *)PyMem_Malloc(cap);
    if (!c) { PyErr_NoMemory(); return -1; }
    if (PyUnicode_IS_ASCII(text)) {
        const unsigned char *d = PyUnicode_1BYTE_DATA(text);
        for (Py_ssize_t i = 0; i < len; i++) c[i] = CLS[d[i]];
    }
    else {
        len = classify_wide(text, &c, &cap);
        if (len == -2) { /* the whole text lower-cased, as the pure path does */
            PyErr_Clear();
            t->lowered = PyObject_CallMethod(text, "lower", NULL);
            len = t->lowered ? PyUnicode_GET_LENGTH(t->lowered) : -1;
            unsigned char *grown = len < 0 ? NULL : (unsigned char *)PyMem_Realloc(c, (size_t)len + PAD);
            if (grown) {
                c = grown;
                for (Py_ssize_t i = 0; i < len; i++) {
                    Py_UCS4 ch = PyUnicode_READ_CHAR(t->lowered, i);
                    c[i] = ch < 128 ? CLS[ch] : 0;
                }
            }
            else if (len >= 0) { PyErr_NoMemory(); len = -1; }
        }
        if (len < 0) { PyMem_Free(c); return -1; }
    }
    memset(c + len, 0, PAD);
    *out = c;
    return len;
}

/* The class bytes are read 8 at a time (a word in memory order; every class byte is below
 * 0x7B, so adding 0x7E or 0x7F to each carries into no other byte). */
#define BYTES_01 ((word)0x0101010101010101ULL)
#define BYTES_80 ((word)0x8080808080808080ULL)

/* The high bit of every token byte (a letter or digit: >= 2) of x. */
static word
token_bytes(word x)
{
    return (x + 0x7E * BYTES_01) & BYTES_80;
}

/* The high bit of every "\n" byte (1) of x. */
static word
newline_bytes(word x)
{
    return (x + 0x7F * BYTES_01) & ~(x + 0x7E * BYTES_01) & BYTES_80;
}

/* The offset in memory of the first byte of x with its high bit set (m != 0). */
static int
first_byte(word m)
{
#if defined(__GNUC__) || defined(__clang__)
    return (little_endian ? __builtin_ctzll(m) : __builtin_clzll(m)) >> 3;
#else
    int k = 0;
    if (little_endian) while (!(m & 0x80)) { m >>= 8; k++; }
    else while (!(m >> 63)) { m <<= 8; k++; }
    return k;
#endif
}

/* m without its bytes from offset k on (0 <= k < 8). */
static word
first_bytes(word m, int k)
{
    if (!k) return 0;
    return little_endian ? m & (((word)1 << (8 * k)) - 1) : m & ~(~(word)0 >> (8 * k));
}

/* Tokenize text into t (token ids from ids, sentences at "\n"); with add == 0 a token without
 * an id gets -1 and ids is left as it is. The class buffer is read a word at a time: the
 * separators before a token (and whether a line break is among them), then the token's end
 * (the padding stops the last one). */
static int
tokenize_ids(PyObject *text, Intern *ids, Toks *t, int add)
{
    unsigned char *c;
    Py_ssize_t len = classify(text, t, &c);
    if (len < 0) return -1;
    t->buf = (char *)c;
    Py_ssize_t cap = len / 2 + 2;
    t->ids = (int32_t *)PyMem_Malloc((size_t)cap * sizeof(int32_t));
    t->sent = (Py_ssize_t *)PyMem_Malloc((size_t)(cap + 1) * sizeof(Py_ssize_t));
    if (!t->ids || !t->sent) { PyErr_NoMemory(); return -1; }
    Py_ssize_t n = 0, nsent = 0, line_start = 0;
    Py_ssize_t i = 0;
    while (i < len) { /* c[i..i+7] is in the buffer: len + PAD bytes */
        word x, m;
        memcpy(&x, c + i, sizeof x);
        m = token_bytes(x);
        int k = m ? first_byte(m) : 8;
        if (k && (m ? first_bytes(newline_bytes(x), k) : newline_bytes(x))) {
            if (n > line_start) t->sent[nsent++] = line_start; /* a line break: a sentence ends */
            line_start = n;
        }
        if (!m) {
            i += 8;
            continue;
        }
        Py_ssize_t start = i + k, end = start;
        for (;;) {
            memcpy(&x, c + end, sizeof x);
            m = token_bytes(x) ^ BYTES_80;
            if (m) break;
            end += 8;
        }
        end += first_byte(m);
        int32_t id = add ? intern(ids, (const char *)c + start, end - start)
                         : intern_find(ids, (const char *)c + start, end - start);
        if (id < 0 && add) return -1;
        t->ids[n++] = id;
        i = end;
    }
    if (n > line_start) t->sent[nsent++] = line_start;
    t->sent[nsent] = n;
    t->n = n;
    t->nsent = nsent;
    return 0;
}

/* ------------------------------------------------------------- the scores' counts */

static int
same_ids(const int32_t *x, const int32_t *y, int n)
{
    for (int k = 0; k < n; k++)
        if (x[k] != y[k]) return 0;
    return 1;
}

/* sum(min(target count, prediction count)) over the tokens (ids < nids) of two id sequences. */
static int
unigram_overlap(const int32_t *a, Py_ssize_t na, const int32_t *b, Py_ssize_t nb, int32_t nids, Py_ssize_t *out)
{
    Py_ssize_t *cnt = (Py_ssize_t *)PyMem_Calloc((size_t)nids + 1, sizeof(Py_ssize_t));
    if (!cnt) { PyErr_NoMemory(); return -1; }
    Py_ssize_t total = 0;
    for (Py_ssize_t i = 0; i < na; i++) cnt[a[i]]++;
    for (Py_ssize_t j = 0; j < nb; j++)
        if (cnt[b[j]] > 0) { cnt[b[j]]--; total++; }
    PyMem_Free(cnt);
    *out = total;
    return 0;
}

/* sum(min(target count, prediction count)) over the n-grams of the two id sequences: the
 * target's n-grams are counted, then each of the prediction's takes one while any is left. */
static int
ngram_overlap(const int32_t *a, Py_ssize_t na, const int32_t *b, Py_ssize_t nb, int n, Py_ssize_t *out)
{
    typedef struct { const int32_t *key; Py_ssize_t count; uint32_t gen; } G;
    Py_ssize_t ga = na - n + 1, gb = nb - n + 1, total = 0;
    uint32_t gen;
    *out = 0;
    if (ga <= 0 || gb <= 0) return 0;
    size_t cap = 1024;
    while (cap < (size_t)ga * 2) cap <<= 1;
    if (gram_pool.cap > cap) cap = gram_pool.cap;
    G *tab = (G *)pool_take(&gram_pool, cap, sizeof(G), &gen);
    if (!tab) return -1;
    for (int side = 0; side < 2; side++) {
        const int32_t *s = side ? b : a;
        Py_ssize_t g = side ? gb : ga;
        for (Py_ssize_t i = 0; i < g; i++) {
            uint64_t h = 0x9E3779B97F4A7C15ULL;
            for (int k = 0; k < n; k++) h = (h ^ (uint32_t)s[i + k]) * 0x100000001B3ULL;
            size_t slot = (size_t)(h ^ (h >> 31)) & (cap - 1);
            while (tab[slot].gen == gen && !same_ids(tab[slot].key, s + i, n)) slot = (slot + 1) & (cap - 1);
            G *e = &tab[slot];
            if (!side) {
                if (e->gen != gen) { e->gen = gen; e->key = s + i; e->count = 0; }
                e->count++;
            }
            else if (e->gen == gen && e->count > 0) {
                e->count--;
                total++;
            }
        }
    }
    pool_trim(&gram_pool);
    *out = total;
    return 0;
}

/* LCS length of two id sequences (nids distinct ids); the shorter one holds the masks.
 * Returns 0 with *out set, 1 when the scratch would exceed SCRATCH_LIMIT, -1 on error. */
static int
lcs_ids(const int32_t *a, Py_ssize_t na, const int32_t *b, Py_ssize_t nb, int32_t nids, Py_ssize_t *out)
{
    *out = 0;
    if (!na || !nb) return 0;
    if (na > nb) {
        const int32_t *s = a; a = b; b = s;
        Py_ssize_t m = na; na = nb; nb = m;
    }
    Py_ssize_t w = (na + WBITS - 1) / WBITS;
    int32_t *slot = (int32_t *)PyMem_Malloc((size_t)nids * sizeof(int32_t));
    if (!slot) { PyErr_NoMemory(); return -1; }
    for (int32_t k = 0; k < nids; k++) slot[k] = -1;
    int32_t distinct = 0;
    for (Py_ssize_t i = 0; i < na; i++)
        if (slot[a[i]] < 0) slot[a[i]] = distinct++;
    if ((size_t)(distinct + 1) * (size_t)w * sizeof(word) > SCRATCH_LIMIT) { PyMem_Free(slot); return 1; }
    word *masks = (word *)PyMem_Calloc((size_t)(distinct + 1) * (size_t)w, sizeof(word));
    if (!masks) { PyMem_Free(slot); PyErr_NoMemory(); return -1; }
    for (Py_ssize_t i = 0; i < na; i++) masks[(size_t)slot[a[i]] * w + i / WBITS] |= (word)1 << (i % WBITS);
    word *v = masks + (size_t)distinct * w;
    all_ones(v, na, w);
    for (Py_ssize_t j = 0; j < nb; j++) {
        int32_t s = slot[b[j]];
        if (s >= 0) lcs_step(v, masks + (size_t)s * w, w);
    }
    *out = zero_rows(v, na, w);
    PyMem_Free(masks);
    PyMem_Free(slot);
    return 0;
}

/* rougeLsum's hits: for each reference sentence, the union of its LCS (as rouge-score picks it)
 * with every candidate sentence; a token gives min(candidate count, union count) hits.
 * Returns 0, 1 (scratch too large: decline) or -1. */
/* The union rows of one reference sentence r of a <= 64 tokens with every candidate sentence:
 * M (zero, one word per id) holds the sentence's position masks meanwhile; cols and cm are
 * scratch of the longest candidate sentence. */
static word
union_small(const int32_t *r, Py_ssize_t a, const Toks *can, word *M, word *cols, word *cm)
{
    word full = a == WBITS ? ~(word)0 : ((word)1 << a) - 1, mark = 0;
    for (Py_ssize_t i = 0; i < a; i++) M[r[i]] |= (word)1 << i;
    for (Py_ssize_t c = 0; c < can->nsent; c++) {
        const int32_t *q = can->ids + can->sent[c];
        Py_ssize_t b = can->sent[c + 1] - can->sent[c];
        word v = full, any = 0;
        for (Py_ssize_t j = 0; j < b; j++) {
            cm[j] = M[q[j]];
            any |= cm[j];
        }
        /* the walk marks some of the rows in `any`: none new when all of them are marked (then
         * neither the columns nor the walk are needed) */
        if (!(any & ~mark)) continue;
        for (Py_ssize_t j = 0; j < b; j++) {
            word u = v & cm[j];
            v = (v + u) | (v & ~u);
            cols[j] = v;
        }
        if ((v & full) != full) mark |= walk1_back(a, cm, b, cols, any & ~mark);
    }
    for (Py_ssize_t i = 0; i < a; i++) M[r[i]] = 0;
    return mark;
}

/* The union rows of one reference sentence r of a > 64 tokens (w words) with every candidate
 * sentence: slot (all -1, one per id) and masks are scratch; mark receives the rows. */
static void
union_large(const int32_t *r, Py_ssize_t a, const Toks *can, int32_t *slot, word *masks, const word **colm, word *mark)
{
    Py_ssize_t w = (a + WBITS - 1) / WBITS;
    int32_t distinct = 0;
    for (Py_ssize_t i = 0; i < a; i++)
        if (slot[r[i]] < 0) slot[r[i]] = distinct++;
    memset(masks, 0, (size_t)distinct * (size_t)w * sizeof(word));
    word *cols = masks + (size_t)distinct * w;
    for (Py_ssize_t i = 0; i < a; i++) masks[(size_t)slot[r[i]] * w + i / WBITS] |= (word)1 << (i % WBITS);
    for (Py_ssize_t c = 0; c < can->nsent; c++) {
        const int32_t *q = can->ids + can->sent[c];
        Py_ssize_t b = can->sent[c + 1] - can->sent[c];
        int any = 0;
        for (Py_ssize_t j = 0; j < b; j++) {
            int32_t sl = slot[q[j]];
            colm[j] = sl >= 0 ? masks + (size_t)sl * w : NULL;
            any |= sl >= 0;
        }
        if (any) lcs_walk(a, w, colm, b, cols, mark);
    }
    for (Py_ssize_t i = 0; i < a; i++) slot[r[i]] = -1;
}

static Py_ssize_t
longest_sentence(const Toks *t)
{
    Py_ssize_t longest = 0;
    for (Py_ssize_t s = 0; s < t->nsent; s++)
        if (t->sent[s + 1] - t->sent[s] > longest) longest = t->sent[s + 1] - t->sent[s];
    return longest;
}

/* rougeLsum's hits: for each reference sentence, the union of its LCS (as rouge-score picks it)
 * with every candidate sentence; a token gives min(candidate count, union count) hits.
 * Returns 0, 1 (scratch too large: decline) or -1. */
static int
lsum_hits(const Toks *ref, const Toks *can, int32_t nids, Py_ssize_t *out)
{
    Py_ssize_t longest_r = longest_sentence(ref), longest_c = longest_sentence(can);
    Py_ssize_t wmax = (longest_r + WBITS - 1) / WBITS;
    /* masks (<= longest_r rows of wmax), cols (longest_c of wmax), mark (wmax); cm (longest_c) */
    size_t words = (size_t)wmax * (size_t)(longest_r + longest_c + 1) + (size_t)longest_c + (size_t)nids;
    if (words * sizeof(word) > SCRATCH_LIMIT) return 1;
    word *scratch = (word *)PyMem_Calloc(words, sizeof(word));
    int32_t *slot = (int32_t *)PyMem_Malloc((size_t)nids * sizeof(int32_t));
    Py_ssize_t *counts = (Py_ssize_t *)PyMem_Calloc((size_t)nids * 2, sizeof(Py_ssize_t));
    const word **colm = (const word **)PyMem_Malloc((size_t)(longest_c + 1) * sizeof(word *));
    if (!scratch || !slot || !counts || !colm) {
        PyMem_Free(scratch); PyMem_Free(slot); PyMem_Free(counts); PyMem_Free(colm);
        PyErr_NoMemory();
        return -1;
    }
    word *M = scratch, *cm = M + nids, *mark = cm + longest_c, *masks = mark + wmax;
    Py_ssize_t *ucount = counts, *ccount = counts + nids;
    for (Py_ssize_t i = 0; i < can->n; i++) ccount[can->ids[i]]++;
    for (int32_t k = 0; k < nids; k++) slot[k] = -1;
    for (Py_ssize_t s = 0; s < ref->nsent; s++) {
        const int32_t *r = ref->ids + ref->sent[s];
        Py_ssize_t a = ref->sent[s + 1] - ref->sent[s];
        if (a <= WBITS) {
            word u = union_small(r, a, can, M, masks, cm);
            for (Py_ssize_t i = 0; u; i++, u >>= 1)
                if (u & 1) ucount[r[i]]++;
            continue;
        }
        memset(mark, 0, (size_t)wmax * sizeof(word));
        union_large(r, a, can, slot, masks, colm, mark);
        for (Py_ssize_t i = 0; i < a; i++)
            if (mark[i / WBITS] >> (i % WBITS) & 1) ucount[r[i]]++;
    }
    Py_ssize_t hits = 0;
    for (int32_t k = 0; k < nids; k++) hits += ucount[k] < ccount[k] ? ucount[k] : ccount[k];
    *out = hits;
    PyMem_Free(scratch); PyMem_Free(slot); PyMem_Free(counts); PyMem_Free(colm);
    return 0;
}

/* One rouge type's counts into k (the n-gram overlap, the LCS length or the rougeLsum hits):
 * 0, 1 (declined: scratch too large) or -1 (error set). */
static int
type_count(long n, const Toks *t, const Toks *p, int32_t nids, Py_ssize_t *k)
{
    *k = 0;
    if (n == 1) return unigram_overlap(t->ids, t->n, p->ids, p->n, nids, k);
    if (n >= 2) return ngram_overlap(t->ids, t->n, p->ids, p->n, (int)n, k);
    if (n == -1) return lcs_ids(t->ids, t->n, p->ids, p->n, nids, k);
    if (!t->nsent || !p->nsent) return 0;
    return lsum_hits(t, p, nids, k);
}

/* (precision, recall, fmeasure) of one type's count k into out[0..2], with the operations of the
 * pure path (rouge_scorer._score_ngrams, _score_lcs and _score_lsum, and scoring._fmeasure):
 * each ratio is one division of two ints below 2**53, which is what Python's int / int computes
 * (max(count, 1) below for rougeN), and the F-measure is (2 * p * r) / (p + r) in that order
 * (no multiply-add for a compiler to contract). An LCS type with an empty text is Score(0, 0,
 * 0): three int zeros. */
static int
put_scores(long n, Py_ssize_t k, Py_ssize_t nt, Py_ssize_t np, PyObject **out)
{
    double precision, recall;
    if (n > 0) {
        Py_ssize_t dp = np - n + 1, dt = nt - n + 1;
        precision = (double)k / (double)(dp > 1 ? dp : 1);
        recall = (double)k / (double)(dt > 1 ? dt : 1);
    }
    else if (nt && np) {
        precision = (double)k / (double)np;
        recall = (double)k / (double)nt;
    }
    else {
        for (int i = 0; i < 3; i++)
            if (!(out[i] = PyLong_FromLong(0))) return -1;
        return 0;
    }
    double total = precision + recall;
    double f = total > 0 ? 2.0 * precision * recall / total : 0.0;
    out[0] = PyFloat_FromDouble(precision);
    out[1] = PyFloat_FromDouble(recall);
    out[2] = PyFloat_FromDouble(f);
    return out[0] && out[1] && out[2] ? 0 : -1;
}

PyDoc_STRVAR(rouge_scores_doc,
"rouge_scores(target, prediction, parsed) -> flat tuple of scores, or None\n\n"
"rouge.score() with the reference tokenizer, no stemmer and the built-in LCS: precision, recall\n"
"and fmeasure of each (name, n) of parsed in turn, 3 * len(parsed) values (n = 1..9: rougeN;\n"
"-1: rougeL; -2: rougeLsum), by the pure path's float operations. None when a text is not\n"
"exactly a str, the scratch memory would be too large or the compiler evaluates doubles in a\n"
"wider precision (x87), where a score could differ in its last bit.");

static PyObject *
rouge_scores(PyObject *self, PyObject *args)
{
    PyObject *target, *prediction, *parsed;
    if (!PyArg_ParseTuple(args, "OOO!:rouge_scores", &target, &prediction, &PyTuple_Type, &parsed)) return NULL;
    if (!PyUnicode_CheckExact(target) || !PyUnicode_CheckExact(prediction)) Py_RETURN_NONE;
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD != 0
    /* double expressions evaluated in a wider precision (x87): the scores could differ in the
     * last bit from Python's, which rounds every operation to a double; decline */
    Py_RETURN_NONE;
#endif
    Py_ssize_t nt = PyTuple_GET_SIZE(parsed);
    Toks t = {0}, p = {0};
    Intern ids = {0};
    PyObject *result = NULL;
    if (intern_init(&ids, (PyUnicode_GET_LENGTH(target) + PyUnicode_GET_LENGTH(prediction)) / 8) < 0) goto done;
    if (tokenize_ids(target, &ids, &t, 1) < 0 || tokenize_ids(prediction, &ids, &p, 1) < 0) goto done;
    result = PyTuple_New(3 * nt);
    if (!result) goto done;
    for (Py_ssize_t i = 0; i < nt; i++) {
        PyObject *item = PyTuple_GET_ITEM(parsed, i);
        long n = PyTuple_Check(item) && PyTuple_GET_SIZE(item) == 2 ? PyLong_AsLong(PyTuple_GET_ITEM(item, 1)) : 0;
        if (n == 0 || n < -2) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "parsed: (name, n) with n in 1..9, -1 or -2");
            Py_CLEAR(result);
            goto done;
        }
        Py_ssize_t k;
        int rc = type_count(n, &t, &p, ids.n, &k);
        PyObject *three[3] = {NULL, NULL, NULL};
        if (rc == 0) rc = put_scores(n, k, t.n, p.n, three);
        for (int j = 0; j < 3; j++)
            if (three[j]) PyTuple_SET_ITEM(result, 3 * i + j, three[j]);
        if (rc != 0) {
            Py_CLEAR(result);
            if (rc > 0) { Py_INCREF(Py_None); result = Py_None; }
            goto done;
        }
    }
done:
    toks_free(&t);
    toks_free(&p);
    pool_trim(&intern_pool);
    return result;
}

/* ------------------------------------------------------------- any hashable tokens */

/* The distinct-token slots of seq (a fast sequence) in a new dict {token: slot}; the slot of
 * each position in *pos (PyMem). Returns the dict or NULL. */
static PyObject *
token_slots(PyObject *seq, int32_t **pos)
{
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    PyObject *d = PyDict_New();
    *pos = (int32_t *)PyMem_Malloc((size_t)(n + 1) * sizeof(int32_t));
    if (!d || !*pos) { Py_XDECREF(d); PyMem_Free(*pos); *pos = NULL; PyErr_NoMemory(); return NULL; }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *k = PyLong_FromSsize_t(PyDict_GET_SIZE(d));
        PyObject *got = k ? PyDict_SetDefault(d, items[i], k) : NULL;
        Py_XDECREF(k);
        if (!got) { Py_DECREF(d); PyMem_Free(*pos); *pos = NULL; return NULL; }
        (*pos)[i] = (int32_t)PyLong_AsLong(got);
    }
    return d;
}

/* The position masks of seq: a dict {token: slot}, masks[slot * w ...] (PyMem). */
typedef struct {
    PyObject *slots;
    word *masks;
    Py_ssize_t rows, w;
} Masks;

static void
masks_free(Masks *m)
{
    Py_CLEAR(m->slots);
    PyMem_Free(m->masks);
    m->masks = NULL;
}

static int
masks_build(PyObject *seq, Masks *m)
{
    int32_t *pos = NULL;
    m->rows = PySequence_Fast_GET_SIZE(seq);
    m->w = (m->rows + WBITS - 1) / WBITS;
    m->slots = token_slots(seq, &pos);
    if (!m->slots) return -1;
    size_t nwords = (size_t)(PyDict_GET_SIZE(m->slots) + 1) * (size_t)m->w;
    m->masks = (word *)PyMem_Calloc(nwords ? nwords : 1, sizeof(word));
    if (!m->masks) { PyMem_Free(pos); PyErr_NoMemory(); return -1; }
    for (Py_ssize_t i = 0; i < m->rows; i++) m->masks[(size_t)pos[i] * m->w + i / WBITS] |= (word)1 << (i % WBITS);
    PyMem_Free(pos);
    return 0;
}

/* The mask of token tok, NULL with no error when seq has no such token, NULL with an error. */
static const word *
mask_of(const Masks *m, PyObject *tok)
{
    PyObject *s = PyDict_GetItemWithError(m->slots, tok);
    if (!s) return NULL;
    return m->masks + (size_t)PyLong_AsSsize_t(s) * m->w;
}

/* LCS length of the masks' sequence and the fast sequence other. */
static Py_ssize_t
lcs_on_masks(const Masks *m, PyObject *other, word *v)
{
    Py_ssize_t n = PySequence_Fast_GET_SIZE(other);
    PyObject **items = PySequence_Fast_ITEMS(other);
    all_ones(v, m->rows, m->w);
    for (Py_ssize_t j = 0; j < n; j++) {
        const word *mk = mask_of(m, items[j]);
        if (mk) lcs_step(v, mk, m->w);
        else if (PyErr_Occurred()) return -1;
    }
    return zero_rows(v, m->rows, m->w);
}

PyDoc_STRVAR(lcs_lengths_doc,
"lcs_lengths(seq, others) -> list of int\n\n"
"rouge.lcs_lengths: the LCS length of seq with each sequence of others (hashable tokens,\n"
"compared like dict keys).");

static PyObject *
lcs_lengths(PyObject *self, PyObject *args)
{
    PyObject *seq_in, *others_in;
    if (!PyArg_ParseTuple(args, "OO:lcs_lengths", &seq_in, &others_in)) return NULL;
    PyObject *seq = PySequence_Fast(seq_in, "seq must be a sequence");
    if (!seq) return NULL;
    PyObject *it = PyObject_GetIter(others_in), *out = PyList_New(0), *other = NULL;
    Masks m = {0};
    word *v = NULL;
    if (!it || !out) goto fail;
    if (PySequence_Fast_GET_SIZE(seq)) {
        if (masks_build(seq, &m) < 0) goto fail;
        v = (word *)PyMem_Malloc((size_t)m.w * sizeof(word));
        if (!v) { PyErr_NoMemory(); goto fail; }
    }
    while ((other = PyIter_Next(it))) {
        Py_ssize_t k = 0;
        if (m.slots) {
            PyObject *fast = PySequence_Fast(other, "each of others must be a sequence");
            if (!fast) goto fail;
            k = lcs_on_masks(&m, fast, v);
            Py_DECREF(fast);
            if (k < 0) goto fail;
        }
        PyObject *kk = PyLong_FromSsize_t(k);
        if (!kk || PyList_Append(out, kk) < 0) { Py_XDECREF(kk); goto fail; }
        Py_DECREF(kk);
        Py_CLEAR(other);
    }
    if (PyErr_Occurred()) goto fail;
    Py_DECREF(it);
    Py_DECREF(seq);
    masks_free(&m);
    PyMem_Free(v);
    return out;
fail:
    Py_XDECREF(other);
    Py_XDECREF(it);
    Py_XDECREF(out);
    Py_DECREF(seq);
    masks_free(&m);
    PyMem_Free(v);
    return NULL;
}

PyDoc_STRVAR(lcs_indices_doc,
"lcs_indices(ref, can) -> list of int\n\n"
"rouge.lcs_indices: the sorted indices into ref of the LCS rouge-score's backtrack picks.");

static PyObject *
lcs_indices(PyObject *self, PyObject *args)
{
    PyObject *ref_in, *can_in, *out = NULL;
    if (!PyArg_ParseTuple(args, "OO:lcs_indices", &ref_in, &can_in)) return NULL;
    PyObject *ref = PySequence_Fast(ref_in, "ref must be a sequence");
    PyObject *can = ref ? PySequence_Fast(can_in, "can must be a sequence") : NULL;
    Masks m = {0};
    const word **colm = NULL;
    word *cols = NULL;
    if (!can) goto done;
    Py_ssize_t nc = PySequence_Fast_GET_SIZE(can);
    if (!PySequence_Fast_GET_SIZE(ref) || !nc) { out = PyList_New(0); goto done; }
    if (masks_build(ref, &m) < 0) goto done;
    colm = (const word **)PyMem_Malloc((size_t)nc * sizeof(word *));
    cols = (word *)PyMem_Calloc((size_t)(nc + 1) * (size_t)m.w, sizeof(word));
    if (!colm || !cols) { PyErr_NoMemory(); goto done; }
    PyObject **items = PySequence_Fast_ITEMS(can);
    for (Py_ssize_t j = 0; j < nc; j++) {
        colm[j] = mask_of(&m, items[j]);
        if (!colm[j] && PyErr_Occurred()) goto done;
    }
    word *mark = cols + (size_t)nc * m.w;
    lcs_walk(m.rows, m.w, colm, nc, cols, mark);
    out = PyList_New(0);
    for (Py_ssize_t i = 0; out && i < m.rows; i++) {
        if (!(mark[i / WBITS] >> (i % WBITS) & 1)) continue;
        PyObject *k = PyLong_FromSsize_t(i);
        if (!k || PyList_Append(out, k) < 0) Py_CLEAR(out);
        Py_XDECREF(k);
    }
done:
    Py_XDECREF(ref);
    Py_XDECREF(can);
    masks_free(&m);
    PyMem_Free(colm);
    PyMem_Free(cols);
    return out;
}

/* The LCS of the prediction's position masks (rows) with the ids of t (-1: no match); drops the
 * -1 ids from t->ids. */
static Py_ssize_t
lcs_rows(const word *masks, Py_ssize_t rows, Py_ssize_t w, Toks *t, word *v)
{
    /* The ids with a row first, without a branch per id (whether a target token is one of the
     * prediction's is unpredictable): t->ids keeps only those, in order. */
    Py_ssize_t m = 0;
    for (Py_ssize_t j = 0; j < t->n; j++) {
        int32_t id = t->ids[j];
        t->ids[m] = id;
        m += id >= 0;
    }
    all_ones(v, rows, w);
    for (Py_ssize_t j = 0; j < m; j++) lcs_step(v, masks + (size_t)t->ids[j] * w, w);
    return zero_rows(v, rows, w);
}

/* lcs_texts' masks of the prediction: the ids are 0..n-1 in the order of first use. */
static word *
prediction_masks(const Toks *p, int32_t nids, Py_ssize_t w)
{
    if ((size_t)(nids + 1) * (size_t)w * sizeof(word) > SCRATCH_LIMIT) return NULL;
    word *masks = (word *)PyMem_Calloc((size_t)(nids + 1) * (size_t)w, sizeof(word));
    if (!masks) { PyErr_NoMemory(); return NULL; }
    for (Py_ssize_t i = 0; i < p->n; i++) masks[(size_t)p->ids[i] * w + i / WBITS] |= (word)1 << (i % WBITS);
    return masks;
}

PyDoc_STRVAR(lcs_texts_doc,
"lcs_texts(prediction, targets) -> (n_prediction, [(lcs, n_target), ...]), or None\n\n"
"rouge.tokenize (reference tokenizer) of prediction and of each target, then the LCS length of\n"
"the prediction's tokens with each target's (rouge.lcs_lengths). None when a text is not\n"
"exactly a str or the scratch memory would be too large.");

static PyObject *
lcs_texts(PyObject *self, PyObject *args)
{
    PyObject *prediction, *targets, *out = NULL, *list = NULL;
    if (!PyArg_ParseTuple(args, "UO!:lcs_texts", &prediction, &PyList_Type, &targets)) return NULL;
    Py_ssize_t nt = PyList_GET_SIZE(targets);
    if (!PyUnicode_CheckExact(prediction)) Py_RETURN_NONE;
    for (Py_ssize_t k = 0; k < nt; k++)
        if (!PyUnicode_CheckExact(PyList_GET_ITEM(targets, k))) Py_RETURN_NONE;
    Toks p = {0};
    Intern ids = {0};
    word *masks = NULL, *v = NULL;
    if (intern_init(&ids, PyUnicode_GET_LENGTH(prediction) / 4) < 0) goto done;
    if (tokenize_ids(prediction, &ids, &p, 1) < 0) goto done;
    Py_ssize_t w = (p.n + WBITS - 1) / WBITS;
    masks = prediction_masks(&p, ids.n, w);
    if (!masks) { if (!PyErr_Occurred()) { Py_INCREF(Py_None); out = Py_None; } goto done; }
    v = (word *)PyMem_Malloc((size_t)(w + 1) * sizeof(word));
    list = PyList_New(nt);
    if (!v || !list) { if (!v) PyErr_NoMemory(); goto done; }
    for (Py_ssize_t k = 0; k < nt; k++) {
        Toks t = {0};
        if (tokenize_ids(PyList_GET_ITEM(targets, k), &ids, &t, 0) < 0) { toks_free(&t); goto done; }
        Py_ssize_t lcs = p.n && t.n ? lcs_rows(masks, p.n, w, &t, v) : 0;
        PyObject *item = Py_BuildValue("(nn)", lcs, t.n);
        toks_free(&t);
        if (!item) goto done;
        PyList_SET_ITEM(list, k, item);
    }
    out = Py_BuildValue("(nO)", p.n, list);
done:
    Py_XDECREF(list);
    toks_free(&p);
    pool_trim(&intern_pool);
    PyMem_Free(masks);
    PyMem_Free(v);
    return out;
}

/* ------------------------------------------------------------- MT-RAG's texts */

/* ASCII classes of MT-RAG's normalisations: SQ_* for SQuAD's normalize_answer (string.punctuation
 * is deleted), and whether re's [^\w\s] (Unicode) matches. */
enum { SQ_DELETE, SQ_SPACE, SQ_WORD, SQ_OTHER };
static unsigned char SQ[128];
/* What squad_ids_latin1 needs of an ASCII character, in one lookup: the low byte is the
 * character lower-cased, then the bits below. */
static uint16_t SQUAD[128];
#define SQUAD_WORD 0x100
#define SQUAD_DELETED 0x200
#define SQUAD_OTHER 0x400
/* mtrag._clean of each byte: what an ASCII character becomes, or 0xFF when deleted (and for
 * every byte above 0x7F: these tables serve ASCII text only). */
static unsigned char CLEAN[256];
/* What cleaned_of needs of an ASCII character, in one lookup: the low byte is what CLEAN makes
 * of it, then the bits below (CLEANED_DELETED alone for a deleted one). */
static uint16_t CLEANED[256];
#define CLEANED_WORD 0x100     /* a token's character (the CLS of what CLEAN makes of it above 1) */
#define CLEANED_ENDS_LEAD 0x200 /* not one of " \t\n\r\f": ends the stripped start */
#define CLEANED_NOT_SPACE 0x400 /* not " ": goes into sq once the start is stripped */
#define CLEANED_DELETED 0x800
#define CLEANED_WIDE 0x1000 /* above 0x7F: clean_wide_step */

static int
is_word(Py_UCS4 ch) /* re's \w for str patterns */
{
    return Py_UNICODE_ISALNUM(ch) || ch == '_';
}

static void
init_mtrag_tables(void)
{
    const char *punct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"; /* string.punctuation */
    for (int c = 0; c < 128; c++) {
        if (strchr(punct, c) && c) SQ[c] = SQ_DELETE;
        else if (Py_UNICODE_ISSPACE(c)) SQ[c] = SQ_SPACE;
        else if (is_word((Py_UCS4)c)) SQ[c] = SQ_WORD;
        else SQ[c] = SQ_OTHER;
        if (c == '\n') CLEAN[c] = ' ';
        else if (c == '\r') CLEAN[c] = '\n';
        else if (Py_UNICODE_ISSPACE(c) || is_word((Py_UCS4)c)) CLEAN[c] = (unsigned char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
        else CLEAN[c] = 0xFF;
    }
    for (int c = 128; c < 256; c++) CLEAN[c] = 0xFF;
    for (int c = 0; c < 128; c++)
        SQUAD[c] = (uint16_t)((c >= 'A' && c <= 'Z' ? c + 32 : c) | (SQ[c] == SQ_WORD ? SQUAD_WORD : 0)
                              | (SQ[c] == SQ_DELETE ? SQUAD_DELETED : 0) | (SQ[c] == SQ_OTHER ? SQUAD_OTHER : 0));
    for (int c = 0; c < 128; c++) {
        unsigned m = CLEAN[c]; /* " \t\n\r\f" (what clean_for_extractiveness strips) do not end the start */
        int leading = m == ' ' || m == '\t' || m == '\n' || m == '\r' || m == '\f';
        CLEANED[c] = m == 0xFF ? CLEANED_DELETED
                     : (uint16_t)(m | (CLS[m] > 1 ? CLEANED_WORD : 0) | (leading ? 0 : CLEANED_ENDS_LEAD)
                                  | (m != ' ' ? CLEANED_NOT_SPACE : 0));
    }
    for (int c = 128; c < 256; c++) CLEANED[c] = CLEANED_WIDE;
}

static Py_ssize_t
put_utf8(unsigned char *b, Py_UCS4 ch)
{
    if (ch < 0x80) { b[0] = (unsigned char)ch; return 1; }
    if (ch < 0x800) { b[0] = (unsigned char)(0xC0 | (ch >> 6)); b[1] = (unsigned char)(0x80 | (ch & 0x3F)); return 2; }
    if (ch < 0x10000) {
        b[0] = (unsigned char)(0xE0 | (ch >> 12));
        b[1] = (unsigned char)(0x80 | ((ch >> 6) & 0x3F));
        b[2] = (unsigned char)(0x80 | (ch & 0x3F));
        return 3;
    }
    b[0] = (unsigned char)(0xF0 | (ch >> 18));
    b[1] = (unsigned char)(0x80 | ((ch >> 12) & 0x3F));
    b[2] = (unsigned char)(0x80 | ((ch >> 6) & 0x3F));
    b[3] = (unsigned char)(0x80 | (ch & 0x3F));
    return 4;
}

/* The UTF-8 of text.lower() with string.punctuation deleted and every run of whitespace one
 * 0 byte (then PAD zero bytes), into *out. Returns its length, -2 when a character left is
 * neither a word character nor whitespace (then \b(a|an|the)\b needs the regex: the caller
 * takes the pure path), or -1 on error. */
static Py_ssize_t
squad_bytes(PyObject *text, Toks *t, unsigned char **out)
{
    PyObject *s = text;
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0) return -1;
#endif
    int ascii = PyUnicode_IS_ASCII(text);
    if (!ascii) {
        t->lowered = PyObject_CallMethod(text, "lower", NULL);
        if (!t->lowered) return -1;
        s = t->lowered;
    }
    Py_ssize_t len = PyUnicode_GET_LENGTH(s), pos = 0;
    int kind = PyUnicode_KIND(s);
    const void *d = PyUnicode_DATA(s);
    unsigned char *b = (unsigned char *)PyMem_Malloc((size_t)len * 4 + PAD + 1);
    if (!b) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t i = 0; i < len; i++) {
        Py_UCS4 ch = PyUnicode_READ(kind, d, i);
        int cls = ch < 128 ? SQ[ch] : Py_UNICODE_ISSPACE(ch) ? SQ_SPACE : is_word(ch) ? SQ_WORD : SQ_OTHER;
        if (cls == SQ_DELETE) continue;
        if (cls == SQ_OTHER) { PyMem_Free(b); return -2; }
        if (cls == SQ_SPACE) {
            if (pos && b[pos - 1]) b[pos++] = 0;
            continue;
        }
        if (ascii && ch >= 'A' && ch <= 'Z') ch += 32;
        pos += put_utf8(b + pos, ch);
    }
    memset(b + pos, 0, PAD + 1);
    *out = b;
    return pos;
}

/* For the characters 0x80-0xFF: their str.lower() (a single character of that range) and its
 * SQ_* class, or SQ_OTHER when lower() is not one character (then the pure path runs). Made at
 * the first use, from str.lower itself. */
static Py_UCS4 LOW1[256];
static unsigned char SQ1[256];
static int low1_ready;

static int
init_low1(void)
{
    for (int c = 128; c < 256; c++) {
        PyObject *one = PyUnicode_FromOrdinal(c), *low = one ? PyObject_CallMethod(one, "lower", NULL) : NULL;
        Py_XDECREF(one);
        if (!low) return -1;
        SQ1[c] = SQ_OTHER;
        if (PyUnicode_GET_LENGTH(low) == 1) {
            Py_UCS4 l = PyUnicode_READ_CHAR(low, 0);
            LOW1[c] = l;
            SQ1[c] = l < 128 ? SQ[l] : Py_UNICODE_ISSPACE(l) ? SQ_SPACE : is_word(l) ? SQ_WORD : SQ_OTHER;
        }
        Py_DECREF(low);
    }
    low1_ready = 1;
    return 0;
}

/* The id of the SQuAD word w[:wl] into *id (with add == 0 a word without one gets -1): 1, or
 * 0 for the articles a, an and the (dropped), or -1 on error. */
static int
squad_word(Intern *ids, const char *w, Py_ssize_t wl, int add, int32_t *id)
{
    if ((wl == 1 && w[0] == 'a') || (wl == 2 && !memcmp(w, "an", 2)) || (wl == 3 && !memcmp(w, "the", 3)))
        return 0;
    *id = add ? intern(ids, w, wl) : intern_find(ids, w, wl);
    return *id < 0 && add ? -1 : 1;
}

/* The ids of the words of b (word k is b[bounds[2k]:bounds[2k + 1]]) into t, the articles a, an
 * and the dropped; with add == 0 a word without an id gets -1. */
static int
squad_word_ids(const unsigned char *b, const int32_t *bounds, Py_ssize_t nwords, Intern *ids, Toks *t, int add)
{
    t->ids = (int32_t *)PyMem_Malloc(((size_t)nwords + 1) * sizeof(int32_t));
    if (!t->ids) { PyErr_NoMemory(); return -1; }
    Py_ssize_t n = 0;
    for (Py_ssize_t k = 0; k < nwords; k++) {
        int32_t id;
        int kept = squad_word(ids, (const char *)b + bounds[2 * k], bounds[2 * k + 1] - bounds[2 * k], add, &id);
        if (kept < 0) return -1;
        if (kept) t->ids[n++] = id;
    }
    t->n = n;
    return 0;
}

/* squad_ids for a text of one byte per character: the words found in one pass without a branch
 * on the ASCII characters (str.lower() acts on each of these characters alone). */
static int
squad_ids_latin1(PyObject *text, Intern *ids, Toks *t, int add)
{
    if (!low1_ready && init_low1() < 0) return -1;
    Py_ssize_t len = PyUnicode_GET_LENGTH(text), pos = 0, nb = 0;
    const Py_UCS1 *src = PyUnicode_1BYTE_DATA(text);
    if (len > INT32_MAX / 4) return 1;
    unsigned char *b = (unsigned char *)PyMem_Malloc((size_t)len * 2 + PAD + 1);
    int32_t *bounds = (int32_t *)PyMem_Malloc(((size_t)len + 2) * sizeof(int32_t));
    t->buf = (char *)b; /* t owns b: an interned word points into it */
    if (!b || !bounds) { PyMem_Free(bounds); PyErr_NoMemory(); return -1; }
    unsigned inword = 0;
    for (Py_ssize_t i = 0; i < len; i++) {
        unsigned char ch = src[i];
        if (ch < 128) {
            unsigned e = SQUAD[ch];
            if (e & (SQUAD_DELETED | SQUAD_OTHER)) { /* rare: punctuation, controls */
                if (e & SQUAD_OTHER) { PyMem_Free(bounds); return 1; }
                continue;
            }
            unsigned w = (e >> 8) & 1;
            bounds[nb] = (int32_t)pos;
            nb += w ^ inword;
            inword = w;
            b[pos] = (unsigned char)e;
            pos += w;
            continue;
        }
        unsigned char k = SQ1[ch];
        if (k == SQ_OTHER) { PyMem_Free(bounds); return 1; }
        unsigned w = k == SQ_WORD;
        if (w != inword) { bounds[nb++] = (int32_t)pos; inword = w; }
        if (w) pos += put_utf8(b + pos, LOW1[ch]);
    }
    if (inword) bounds[nb++] = (int32_t)pos;
    memset(b + pos, 0, PAD + 1);
    int rc = squad_word_ids(b, bounds, nb / 2, ids, t, add);
    PyMem_Free(bounds);
    return rc;
}

/* mtrag._answer_tokens(text) as ids into t (the words a, an and the dropped); with add == 0 a
 * word without an id gets -1. Returns 0, 1 (the pure path must run) or -1. */
static int
squad_ids(PyObject *text, Intern *ids, Toks *t, int add)
{
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0) return -1;
#endif
    if (PyUnicode_KIND(text) == PyUnicode_1BYTE_KIND) return squad_ids_latin1(text, ids, t, add);
    unsigned char *c;
    Py_ssize_t len = squad_bytes(text, t, &c);
    if (len == -2) return 1;
    if (len < 0) return -1;
    t->buf = (char *)c;
    t->ids = (int32_t *)PyMem_Malloc((size_t)(len / 2 + 2) * sizeof(int32_t));
    if (!t->ids) { PyErr_NoMemory(); return -1; }
    Py_ssize_t n = 0, i = 0;
    while (i < len) {
        if (!c[i]) { i++; continue; }
        Py_ssize_t start = i;
        while (c[i]) i++;
        int32_t id;
        int kept = squad_word(ids, (const char *)c + start, i - start, add, &id);
        if (kept < 0) return -1;
        if (kept) t->ids[n++] = id;
    }
    t->n = n;
    return 0;
}

static int
all_exact_str(PyObject *list)
{
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(list); k++)
        if (!PyUnicode_CheckExact(PyList_GET_ITEM(list, k))) return 0;
    return 1;
}

/* (common, n_target) of the prediction's counts (cnt, nids) and one target's words. */
static PyObject *
answer_overlap(const Toks *t, const Py_ssize_t *cnt, Py_ssize_t *work, int32_t nids)
{
    Py_ssize_t common = 0;
    memcpy(work, cnt, (size_t)nids * sizeof(Py_ssize_t));
    for (Py_ssize_t j = 0; j < t->n; j++) {
        int32_t id = t->ids[j];
        if (id >= 0 && work[id] > 0) { work[id]--; common++; }
    }
    return Py_BuildValue("(nn)", common, t->n);
}

PyDoc_STRVAR(answer_overlaps_doc,
"answer_overlaps(prediction, targets) -> [(common, n_target), ...], or None\n\n"
"MT-RAG's Recall counts: with p and t the words of mtrag._answer_tokens (SQuAD's\n"
"normalize_answer, split), common = sum(min(count in p, count in t)) and n_target = len(t),\n"
"per target. None when a text is not exactly a str or has a character that is neither a word\n"
"character nor whitespace (the articles then need the regex: the pure path runs).");

static PyObject *
answer_overlaps(PyObject *self, PyObject *args)
{
    PyObject *prediction, *targets, *list = NULL, *out = NULL;
    if (!PyArg_ParseTuple(args, "UO!:answer_overlaps", &prediction, &PyList_Type, &targets)) return NULL;
    if (!PyUnicode_CheckExact(prediction) || !all_exact_str(targets)) Py_RETURN_NONE;
    Toks p = {0};
    Intern ids = {0};
    Py_ssize_t *cnt = NULL;
    int rc;
    if (intern_init(&ids, PyUnicode_GET_LENGTH(prediction) / 4) < 0) goto done;
    if ((rc = squad_ids(prediction, &ids, &p, 1)) != 0) { if (rc > 0) out = Py_None, Py_INCREF(out); goto done; }
    cnt = (Py_ssize_t *)PyMem_Calloc((size_t)ids.n * 2 + 1, sizeof(Py_ssize_t));
    list = PyList_New(PyList_GET_SIZE(targets));
    if (!cnt || !list) { if (!cnt) PyErr_NoMemory(); goto done; }
    for (Py_ssize_t i = 0; i < p.n; i++) cnt[p.ids[i]]++;
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(targets); k++) {
        Toks t = {0};
        rc = squad_ids(PyList_GET_ITEM(targets, k), &ids, &t, 0);
        PyObject *item = rc == 0 ? answer_overlap(&t, cnt, cnt + ids.n, ids.n) : NULL;
        toks_free(&t);
        if (rc > 0) { out = Py_None; Py_INCREF(out); goto done; }
        if (!item) goto done;
        PyList_SET_ITEM(list, k, item);
    }
    out = list;
    list = NULL;
done:
    Py_XDECREF(list);
    toks_free(&p);
    pool_trim(&intern_pool);
    PyMem_Free(cnt);
    return out;
}

PyDoc_STRVAR(clean_extractive_doc,
"clean_extractive(text) -> str, or None\n\n"
"mtrag._clean(text): \"\\n\" -> \" \", every character matching re's [^\\w\\s] deleted, lower(),\n"
"\"\\r\" -> \"\\n\" (clean_for_extractiveness without its lstrip). None when text is not exactly a str.");

/* mtrag._clean per non-ASCII code point (CLEANMAP, lazily, one byte each): 0 unknown, 1 deleted
 * ([^\w\s]), 2 kept and lower() is its simple lower-case mapping, 3 kept but lower() is longer
 * or depends on the neighbours (capital sigma): the text is then lower-cased whole. */
static unsigned char *CLEANMAP;

static int
clean_class(Py_UCS4 ch)
{
    if (CLEANMAP[ch]) return CLEANMAP[ch];
    int cls = 1;
    if (Py_UNICODE_ISSPACE(ch) || is_word(ch)) {
        PyObject *one = PyUnicode_FromOrdinal((int)ch), *low = one ? PyObject_CallMethod(one, "lower", NULL) : NULL;
        Py_XDECREF(one);
        if (!low) return -1;
        int simple = PyUnicode_GET_LENGTH(low) == 1 && PyUnicode_READ_CHAR(low, 0) == Py_UNICODE_TOLOWER(ch);
        Py_DECREF(low);
        cls = simple && ch != 0x3A3 ? 2 : 3;
    }
    CLEANMAP[ch] = (unsigned char)cls;
    return cls;
}

/* The kept characters of text into buf, lower-cased unless *whole is set (a class-3 character:
 * the caller lower-cases the result). Returns their number or -1. */
static Py_ssize_t
clean_chars(PyObject *text, Py_UCS4 *buf, int *whole)
{
    Py_ssize_t len = PyUnicode_GET_LENGTH(text), n = 0;
    int kind = PyUnicode_KIND(text);
    const void *d = PyUnicode_DATA(text);
    *whole = 0;
    for (Py_ssize_t i = 0; i < len; i++) {
        Py_UCS4 ch = PyUnicode_READ(kind, d, i);
        if (ch < 128) { /* "\r" -> "\n" comes after lower() in the reference: lower() keeps both */
            if (CLEAN[ch] == 0xFF) continue;
            buf[n++] = *whole ? (ch == '\n' ? ' ' : ch == '\r' ? '\n' : ch) : CLEAN[ch];
            continue;
        }
        int cls = clean_class(ch);
        if (cls < 0) return -1;
        if (cls == 1) continue;
        if (cls == 3 && !*whole) { /* undo the lower-casing done so far: start again, lower() at the end */
            *whole = 1;
            i = -1;
            n = 0;
            continue;
        }
        buf[n++] = *whole ? ch : Py_UNICODE_TOLOWER(ch);
    }
    return n;
}

static PyObject *
clean_extractive(PyObject *self, PyObject *text)
{
    if (!PyUnicode_CheckExact(text)) Py_RETURN_NONE;
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0) return NULL;
#endif
    Py_ssize_t len = PyUnicode_GET_LENGTH(text);
    if (PyUnicode_IS_ASCII(text)) { /* no lower() subtleties: the ASCII table alone, kept ASCII */
        const Py_UCS1 *src = PyUnicode_1BYTE_DATA(text);
        Py_UCS1 *tmp = (Py_UCS1 *)PyMem_Malloc((size_t)len + 1);
        if (!tmp) return PyErr_NoMemory();
        Py_ssize_t n = 0;
        for (Py_ssize_t i = 0; i < len; i++) {
            Py_UCS1 c = CLEAN[src[i]];
            if (c != 0xFF) tmp[n++] = c;
        }
        PyObject *out = PyUnicode_New(n, 127);
        if (out) memcpy(PyUnicode_1BYTE_DATA(out), tmp, (size_t)n);
        PyMem_Free(tmp);
        return out;
    }
    if (!CLEANMAP && !(CLEANMAP = (unsigned char *)PyMem_Calloc(0x110000, 1))) return PyErr_NoMemory();
    Py_UCS4 *buf = (Py_UCS4 *)PyMem_Malloc(((size_t)len + 1) * sizeof(Py_UCS4));
    if (!buf) return PyErr_NoMemory();
    int whole;
    Py_ssize_t n = clean_chars(text, buf, &whole);
    PyObject *kept = n < 0 ? NULL : PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, buf, n);
    PyMem_Free(buf);
    if (!kept || !whole) return kept;
    PyObject *low = PyObject_CallMethod(kept, "lower", NULL);
    Py_DECREF(kept);
    return low;
}

/* One text of Extractiveness_RougeL, cleaned in one pass (mtrag.clean_for_extractiveness without
 * making the string): sq receives the UTF-8 of the cleaned text with its leading " \t\n\r\f"
 * stripped and every " " deleted (the substring test), and bounds the start and end in sq of
 * each reference token of the cleaned text (a maximal run of [a-z0-9] after lower(): its
 * characters are consecutive in sq, as only spaces and the stripped start are left out of
 * it), found on the way without a branch on the characters (spaces are unpredictable, and a
 * mispredicted branch per token costs more than the token). */
typedef struct {
    unsigned char *sq;
    int32_t *bounds;          /* token k is sq[bounds[2k]:bounds[2k + 1]] */
    Py_ssize_t ns, nb;
    unsigned started, inword; /* lstrip done; the last kept character is a token's */
} Cleaned;

/* The step for an ASCII character. */
static inline void
clean_ascii_step(Cleaned *o, unsigned char ch)
{
    unsigned e = CLEANED[ch];
    if (e & CLEANED_DELETED) return;
    unsigned w = (e >> 8) & 1;
    o->started |= (e >> 9) & 1;
    o->sq[o->ns] = (unsigned char)e;
    o->bounds[o->nb] = (int32_t)o->ns;
    o->nb += w ^ o->inword;
    o->inword = w;
    o->ns += o->started & (e >> 10);
}

/* The step for a character above 0x7F: 0, -2 (the pure path) or -1. */
static int
clean_wide_step(Cleaned *o, Py_UCS4 ch)
{
    unsigned char tmp[8];
    int kept = clean_class(ch);
    if (kept < 0) return -1;
    if (kept == 1) return 0;
    if (kept == 3) return -2;
    Py_UCS4 low = Py_UNICODE_TOLOWER(ch);
    if (low < 128) { /* KELVIN SIGN: "k" */
        clean_ascii_step(o, (unsigned char)low);
        return 0;
    }
    int n = lower_classes(low, tmp);
    if (n == -1) return -1;
    if (n != 1 || tmp[0] != 0) { PyErr_Clear(); return -2; } /* not one separator */
    if (o->inword) { o->bounds[o->nb++] = (int32_t)o->ns; o->inword = 0; }
    o->started = 1;
    o->ns += put_utf8(o->sq + o->ns, low);
    return 0;
}

/* Clean text into o (its buffers allocated here): 0, -2 (the pure path) or -1. */
static int
cleaned_of(PyObject *text, Cleaned *o)
{
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0) return -1;
#endif
    Py_ssize_t len = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *d = PyUnicode_DATA(text);
    if (len > INT32_MAX / 8) return -2;
    o->sq = (unsigned char *)PyMem_Malloc((size_t)len * 4 + PAD + 1);
    o->bounds = (int32_t *)PyMem_Malloc(((size_t)len + 2) * sizeof(int32_t));
    if (!o->sq || !o->bounds) { PyErr_NoMemory(); return -1; }
    if (kind == PyUnicode_1BYTE_KIND) {
        /* clean_ascii_step with plain locals (the counters stay in registers), the stripped
         * start first: in it no character is a token's and none goes into sq. */
        const Py_UCS1 *src = (const Py_UCS1 *)d;
        unsigned char *sq = o->sq;
        int32_t *bounds = o->bounds;
        Py_ssize_t i = 0, ns = 0;
        uint32_t nb = 0; /* not the width of ns: the compiler then keeps the two in plain registers */
        unsigned inword = 0;
        for (; i < len && !o->started; i++) {
            unsigned e = CLEANED[src[i]];
            if (e & CLEANED_ENDS_LEAD) break; /* kept and not " \t\n\r\f": the start ends here */
            if (!(e & CLEANED_WIDE)) continue; /* deleted, or stripped */
            int rc = clean_wide_step(o, src[i]); /* sets o->started when it keeps the character */
            if (rc < 0) return rc;
        }
        ns = o->ns, nb = (uint32_t)o->nb, inword = o->inword;
        for (; i < len; i++) {
            unsigned e = CLEANED[src[i]];
            if (e & (CLEANED_DELETED | CLEANED_WIDE)) { /* rare: punctuation, non-ASCII */
                if (e & CLEANED_DELETED) continue;
                o->ns = ns, o->nb = nb, o->started = 1, o->inword = inword;
                int rc = clean_wide_step(o, src[i]);
                if (rc < 0) return rc;
                ns = o->ns, nb = (uint32_t)o->nb, inword = o->inword;
                continue;
            }
            unsigned w = (e >> 8) & 1;
            sq[ns] = (unsigned char)e;
            bounds[nb] = (int32_t)ns;
            nb += w ^ inword;
            inword = w;
            ns += (e >> 10) & 1;
        }
        o->ns = ns, o->nb = nb, o->inword = inword;
    }
    else {
        for (Py_ssize_t i = 0; i < len; i++) {
            Py_UCS4 ch = PyUnicode_READ(kind, d, i);
            if (ch < 128) { clean_ascii_step(o, (unsigned char)ch); continue; }
            int rc = clean_wide_step(o, ch);
            if (rc < 0) return rc;
        }
    }
    if (o->inword) o->bounds[o->nb++] = (int32_t)o->ns;
    memset(o->sq + o->ns, 0, PAD);
    return 0;
}

static void
cleaned_free(Cleaned *o)
{
    PyMem_Free(o->sq);
    PyMem_Free(o->bounds);
    memset(o, 0, sizeof *o);
}

/* The ids of o's tokens into t->ids (t->n of them); with add == 0 an unknown token gets -1. */
static int
cleaned_ids(const Cleaned *o, Intern *ids, Toks *t, int add)
{
    Py_ssize_t n = o->nb / 2;
    t->ids = (int32_t *)PyMem_Malloc(((size_t)n + 1) * sizeof(int32_t));
    if (!t->ids) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t k = 0; k < n; k++) {
        const char *p = (const char *)o->sq + o->bounds[2 * k];
        Py_ssize_t len = o->bounds[2 * k + 1] - o->bounds[2 * k];
        int32_t id = add ? intern(ids, p, len) : intern_find(ids, p, len);
        if (id < 0 && add) return -1;
        t->ids[k] = id;
    }
    t->n = n;
    return 0;
}

/* Whether needle[:nn] occurs in hay[:hn] (the empty needle does); bytes of UTF-8 text, where a
 * match can only start at a character boundary, so this is str's `in`. */
static int
has_bytes(const unsigned char *hay, Py_ssize_t hn, const unsigned char *needle, Py_ssize_t nn)
{
    if (nn == 0) return 1;
    if (nn > hn) return 0;
    const unsigned char *p = hay, *last = hay + hn - nn;
    while (p <= last) {
        p = (const unsigned char *)memchr(p, needle[0], (size_t)(last - p + 1));
        if (!p) return 0;
        if (memcmp(p + 1, needle + 1, (size_t)nn - 1) == 0) return 1;
        p++;
    }
    return 0;
}

PyDoc_STRVAR(extractive_counts_doc,
"extractive_counts(prediction, passages) -> (n_prediction, [None or (lcs, n_passage), ...]), or None\n\n"
"MT-RAG's Extractiveness_RougeL counts: with c = mtrag.clean_for_extractiveness, None for a\n"
"passage when c(passage).replace(' ', '') in c(prediction).replace(' ', '') (its score is 1),\n"
"else the LCS length of the reference tokens of c(prediction) and c(passage) and the passage's\n"
"token count (rouge.lcs_texts on the cleaned texts); n_prediction is c(prediction)'s token count.\n"
"None when a text is not exactly a str or has a character that needs the pure path.");

/* (lcs, n) of one passage q against the prediction's masks, or Py_None when it is a substring. */
static PyObject *
passage_counts(const Cleaned *p, const Toks *pt, const word *masks, word *v, Cleaned *q, Intern *ids)
{
    if (has_bytes(p->sq, p->ns, q->sq, q->ns)) Py_RETURN_NONE;
    Toks t = {0};
    if (cleaned_ids(q, ids, &t, 0) < 0) { toks_free(&t); return NULL; }
    Py_ssize_t w = (pt->n + WBITS - 1) / WBITS;
    Py_ssize_t lcs = pt->n && t.n ? lcs_rows(masks, pt->n, w, &t, v) : 0, n = t.n;
    toks_free(&t);
    return Py_BuildValue("(nn)", lcs, n);
}

static PyObject *
extractive_counts(PyObject *self, PyObject *args)
{
    PyObject *prediction, *passages, *out = NULL, *list = NULL;
    if (!PyArg_ParseTuple(args, "UO!:extractive_counts", &prediction, &PyList_Type, &passages)) return NULL;
    if (!PyUnicode_CheckExact(prediction) || !all_exact_str(passages)) Py_RETURN_NONE;
    if (!CLEANMAP && !(CLEANMAP = (unsigned char *)PyMem_Calloc(0x110000, 1))) return PyErr_NoMemory();
    Cleaned p = {0}, q = {0};
    Toks pt = {0};
    Intern ids = {0};
    word *masks = NULL, *v = NULL;
    int rc = cleaned_of(prediction, &p);
    if (rc < 0 || intern_init(&ids, p.nb / 2) < 0 || cleaned_ids(&p, &ids, &pt, 1) < 0) goto done;
    Py_ssize_t w = (pt.n + WBITS - 1) / WBITS, np = PyList_GET_SIZE(passages);
    masks = prediction_masks(&pt, ids.n, w);
    if (!masks) goto done;
    v = (word *)PyMem_Malloc((size_t)(w + 1) * sizeof(word));
    list = PyList_New(np);
    if (!v || !list) { if (!v) PyErr_NoMemory(); goto done; }
    for (Py_ssize_t k = 0; k < np; k++) {
        rc = cleaned_of(PyList_GET_ITEM(passages, k), &q);
        PyObject *item = rc < 0 ? NULL : passage_counts(&p, &pt, masks, v, &q, &ids);
        cleaned_free(&q);
        if (!item) goto done;
        PyList_SET_ITEM(list, k, item);
    }
    out = Py_BuildValue("(nO)", pt.n, list);
done:
    if (!out && !PyErr_Occurred()) { Py_INCREF(Py_None); out = Py_None; } /* -2, or scratch too large */
    Py_XDECREF(list);
    cleaned_free(&p);
    cleaned_free(&q);
    toks_free(&pt);
    pool_trim(&intern_pool);
    PyMem_Free(masks);
    PyMem_Free(v);
    return out;
}

PyDoc_STRVAR(drop_spaces_doc,
"drop_spaces(text) -> str, or None\n\n"
"text.replace(\" \", \"\"): every U+0020 deleted (MT-RAG's space-free substring check). None when\n"
"text is not exactly a str.");

#define COUNT_SPACES(T)                                               \
    do {                                                              \
        const T *src = (const T *)d;                                  \
        for (Py_ssize_t i = 0; i < len; i++) spaces += src[i] == ' '; \
    } while (0)
#define DROP_SPACES(T)                                                \
    do {                                                              \
        const T *src = (const T *)d;                                  \
        T *dst = (T *)PyUnicode_DATA(out);                            \
        for (Py_ssize_t i = 0; i < len; i++)                          \
            if (src[i] != ' ') *dst++ = src[i];                       \
    } while (0)

static PyObject *
drop_spaces(PyObject *self, PyObject *text)
{
    if (!PyUnicode_CheckExact(text)) Py_RETURN_NONE;
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0) return NULL;
#endif
    Py_ssize_t len = PyUnicode_GET_LENGTH(text), spaces = 0;
    int kind = PyUnicode_KIND(text);
    const void *d = PyUnicode_DATA(text);
    if (kind == PyUnicode_1BYTE_KIND)
        COUNT_SPACES(Py_UCS1);
    else if (kind == PyUnicode_2BYTE_KIND)
        COUNT_SPACES(Py_UCS2);
    else
        COUNT_SPACES(Py_UCS4);
    if (!spaces) {
        Py_INCREF(text);
        return text;
    }
    /* Only spaces go: every other character stays, the widest among them too, so the result
     * in the input's representation is the canonical one str.replace makes. */
    PyObject *out = PyUnicode_New(len - spaces, PyUnicode_MAX_CHAR_VALUE(text));
    if (!out) return NULL;
    if (kind == PyUnicode_1BYTE_KIND)
        DROP_SPACES(Py_UCS1);
    else if (kind == PyUnicode_2BYTE_KIND)
        DROP_SPACES(Py_UCS2);
    else
        DROP_SPACES(Py_UCS4);
    return out;
}

PyDoc_STRVAR(brackets_doc,
"brackets(text) -> int, or None\n\n"
"text.count('[') + text.count('{') in one pass (the JSON readers' bound on the nesting depth).\n"
"None when text is not exactly a str.");

#define COUNT_BRACKETS(T)                                                        \
    do {                                                                         \
        const T *src = (const T *)d;                                             \
        for (Py_ssize_t i = 0; i < len; i++) n += (src[i] == '[') + (src[i] == '{'); \
    } while (0)

static PyObject *
brackets(PyObject *self, PyObject *text)
{
    if (!PyUnicode_CheckExact(text)) Py_RETURN_NONE;
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0) return NULL;
#endif
    Py_ssize_t len = PyUnicode_GET_LENGTH(text), n = 0;
    int kind = PyUnicode_KIND(text);
    const void *d = PyUnicode_DATA(text);
    if (kind == PyUnicode_1BYTE_KIND) { /* brackets are few: memchr skips the text between them */
        const Py_UCS1 *p, *end = (const Py_UCS1 *)d + len;
        for (p = (const Py_UCS1 *)d; (p = (const Py_UCS1 *)memchr(p, '[', (size_t)(end - p))) != NULL; p++) n++;
        for (p = (const Py_UCS1 *)d; (p = (const Py_UCS1 *)memchr(p, '{', (size_t)(end - p))) != NULL; p++) n++;
    }
    else if (kind == PyUnicode_2BYTE_KIND)
        COUNT_BRACKETS(Py_UCS2);
    else
        COUNT_BRACKETS(Py_UCS4);
    return PyLong_FromSsize_t(n);
}

PyDoc_STRVAR(escape_hit_doc,
"escape_hit(text) -> bool, or None\n\n"
"\"\\\\ud\" in text or \"\\\\uD\" in text (the JSON readers' pre-check for a lone-surrogate\n"
"escape), looking only at backslashes. None when text is not exactly a str.");

static PyObject *
escape_hit(PyObject *self, PyObject *text)
{
    if (!PyUnicode_CheckExact(text)) Py_RETURN_NONE;
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0) return NULL;
#endif
    Py_ssize_t len = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *d = PyUnicode_DATA(text);
    if (kind == PyUnicode_1BYTE_KIND) {
        const Py_UCS1 *p = (const Py_UCS1 *)d, *end = p + len;
        while (end - p >= 3 && (p = (const Py_UCS1 *)memchr(p, '\\', (size_t)(end - p - 2))) != NULL) {
            if (p[1] == 'u' && (p[2] == 'd' || p[2] == 'D')) Py_RETURN_TRUE;
            p++;
        }
        Py_RETURN_FALSE;
    }
    for (Py_ssize_t i = 0; i + 2 < len; i++) {
        if (PyUnicode_READ(kind, d, i) != '\\' || PyUnicode_READ(kind, d, i + 1) != 'u') continue;
        Py_UCS4 c = PyUnicode_READ(kind, d, i + 2);
        if (c == 'd' || c == 'D') Py_RETURN_TRUE;
    }
    Py_RETURN_FALSE;
}

PyDoc_STRVAR(ref_tokens_doc,
"ref_tokens(text) -> list of str, or None\n\n"
"rouge.tokenize(text): the maximal [a-z0-9] runs of text.lower(), every non-ASCII character\n"
"a separator. None when text is not exactly a str.");

static PyObject *
ref_tokens(PyObject *self, PyObject *text)
{
    if (!PyUnicode_CheckExact(text)) Py_RETURN_NONE;
    Toks t = {0};
    unsigned char *c = NULL;
    Py_ssize_t len = classify(text, &t, &c);
    PyObject *out = len < 0 ? NULL : PyList_New(0);
    Py_ssize_t i = 0;
    while (out && i < len) {
        if (c[i] <= 1) { i++; continue; }
        Py_ssize_t start = i;
        while (c[i] > 1) i++; /* the padding stops it */
        PyObject *tok = PyUnicode_New(i - start, 127);
        if (tok) memcpy(PyUnicode_1BYTE_DATA(tok), c + start, (size_t)(i - start));
        if (!tok || PyList_Append(out, tok) < 0) Py_CLEAR(out);
        Py_XDECREF(tok);
    }
    PyMem_Free(c);
    toks_free(&t);
    return out;
}

/* _speedups_json.c */
PyObject *rageval_dumps_form(PyObject *self, PyObject *text);
PyObject *rageval_dumps_splice(PyObject *self, PyObject *args);
PyObject *rageval_dumps_canonical(PyObject *self, PyObject *text);
PyObject *rageval_join_reprs(PyObject *self, PyObject *args);
PyObject *rageval_flat_object(PyObject *self, PyObject *text);

PyDoc_STRVAR(dumps_form_doc,
"dumps_form(text) -> bool, or None\n\n"
"True only when text is a JSON object exactly as json.dumps (default arguments) writes\n"
"json.loads(text): False when it is not or when this cannot tell (see _speedups_json.c). None\n"
"when text is not exactly a str.");

PyDoc_STRVAR(dumps_splice_doc,
"dumps_splice(text, tail) -> str, or None\n\n"
"D[:-1] + ', ' + tail[1:] (no ', ' when D is '{}'), where D is json.dumps(json.loads(text)): text\n"
"itself when dumps_form(text), else dumps_canonical(text); None when there is no D or tail is\n"
"not an ASCII str starting with '{' (json.dumps of the new items).");

PyDoc_STRVAR(join_reprs_doc,
"join_reprs(parts, values) -> str, or None\n\n"
"parts[0] + repr(values[0]) + parts[1] + ... + parts[n]: '%r' formatting of n values, each exactly\n"
"a float or an int, between n + 1 ASCII strings, with repr's digits made faster for floats in\n"
"[2**-13, 1) (see _speedups_json.c); None for other values or parts.");

PyDoc_STRVAR(flat_object_doc,
"flat_object(text) -> dict, or None\n\n"
"json.loads(text) for a JSON object whose keys and values are strings without escapes, numbers\n"
"(ints of at most 18 digits), true, false or null; None for any other text (see _speedups_json.c).");

PyDoc_STRVAR(dumps_canonical_doc,
"dumps_canonical(text) -> str, or None\n\n"
"json.dumps(json.loads(text)) (default arguments) for a JSON object text, made from the text;\n"
"None when json.loads would fail or read a repeated key, beyond dumps_form's limits, or when\n"
"text is not exactly a str (see _speedups_json.c).");

static PyMethodDef methods[] = {
    {"rouge_scores", rouge_scores, METH_VARARGS, rouge_scores_doc},
    {"lcs_lengths", lcs_lengths, METH_VARARGS, lcs_lengths_doc},
    {"lcs_indices", lcs_indices, METH_VARARGS, lcs_indices_doc},
    {"ref_tokens", ref_tokens, METH_O, ref_tokens_doc},
    {"lcs_texts", lcs_texts, METH_VARARGS, lcs_texts_doc},
    {"answer_overlaps", answer_overlaps, METH_VARARGS, answer_overlaps_doc},
    {"clean_extractive", clean_extractive, METH_O, clean_extractive_doc},
    {"drop_spaces", drop_spaces, METH_O, drop_spaces_doc},
    {"escape_hit", escape_hit, METH_O, escape_hit_doc},
    {"brackets", brackets, METH_O, brackets_doc},
    {"dumps_form", rageval_dumps_form, METH_O, dumps_form_doc},
    {"dumps_splice", rageval_dumps_splice, METH_VARARGS, dumps_splice_doc},
    {"dumps_canonical", rageval_dumps_canonical, METH_O, dumps_canonical_doc},
    {"join_reprs", rageval_join_reprs, METH_VARARGS, join_reprs_doc},
    {"flat_object", rageval_flat_object, METH_O, flat_object_doc},
    {"extractive_counts", extractive_counts, METH_VARARGS, extractive_counts_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_speedups",
    "Optional C kernels of rageval_min (see rageval_min/_speedups_loader.py).", -1, methods,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    init_tables();
    init_mtrag_tables();
    PyObject *m = PyModule_Create(&module);
    if (m && PyModule_AddIntConstant(m, "KERNEL_VERSION", KERNEL_VERSION) < 0) Py_CLEAR(m);
    return m;
}
