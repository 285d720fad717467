/* Part of rageval_min._speedups (built with _speedups.c into one extension): the exact form
 * Python's json.dumps gives the value of a JSON object text, from the text.
 *
 * A writer that re-serialises every record it reads (MT-RAG's run_algorithmic.py writes
 * json.dumps(record) with a "metrics" key added) spends most of its time in json.dumps. When the
 * line it read is byte for byte json.dumps(json.loads(line)), the output is that line with the new
 * key spliced in before the closing brace: no re-encoding is needed. dumps_form() decides that,
 * conservatively: True only when the text is certainly in that form, False whenever it is not or
 * when this code does not know. For other lines canonical() (further below) writes the form from
 * the text, or gives no result when it does not know. The caller then runs json.dumps, so a
 * False or no result is always safe.
 *
 * json.dumps with its default arguments (ensure_ascii=True, allow_nan=True, separators ", " and
 * ": ", no indent, no sort_keys) writes:
 *   - objects as {} or {"key": value, "key": value}, arrays as [] or [value, value];
 *   - strings between double quotes, with the printable ASCII characters 0x20-0x7E as themselves
 *     except '"' and '\' (written \" and \\), \n \r \t \b \f for those five controls, and
 *     \u00XX (lower-case hex) for every other character below 0x20, for 0x7F and for every code
 *     point above 0x7F (above 0xFFFF as a surrogate pair: json.loads joins a high and a low
 *     surrogate escape into one character, and json.dumps splits it the same way again);
 *   - integers as Python prints them (so "-0" is not in the form: its value prints "0");
 *   - floats as repr(float) (PyOS_double_to_string with 'r'), NaN, Infinity, -Infinity;
 *   - true, false, null.
 * json.loads keeps the last value of a repeated key (the line would lose a member): in the form,
 * every string has exactly one spelling, so two keys are the same exactly when their texts are,
 * and a repeated key makes the text not in the form.
 * Not in the form, by this code's choice (False): any character outside ASCII (ensure_ascii
 * output is ASCII), whitespace anywhere but after ", " and ": ", nesting deeper than MAX_DEPTH,
 * an object of more than MAX_KEYS keys, an integer of more than 4300 digits (Python's default
 * limit for int <-> str), a number text longer than 400 characters.
 * tests/test_dumps_form.py compares dumps_form() with json.dumps(json.loads(text)) == text, and
 * canonical() with json.dumps(json.loads(text)), on seeded random JSON written in several ways
 * and mutated, every code point, random number texts and hand-written edge cases. CPython C API
 * only.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define MAX_DEPTH 200
#define MAX_KEYS 4096
#define MAX_INT_DIGITS 4300
#define MAX_NUMBER_TEXT 400

typedef struct {
    uint64_t hash;
    Py_ssize_t start, len;
} Key;

typedef struct {
    const unsigned char *s;
    Py_ssize_t n, i;
    Key *keys; /* the keys of every object still open, innermost last */
    Py_ssize_t nkeys, capkeys;
    int depth;
} Scan;

/* -1: not in the form (or unknown); 0: in the form; -2: a Python error is set. */
static int value_form(Scan *sc);

static int
is_lower_hex(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static int
hex_value(unsigned char c)
{
    return c <= '9' ? c - '0' : c - 'a' + 10;
}

/* PLAIN[c]: c stands for itself inside a string in the form (printable ASCII but '"' and '\'). */
static unsigned char PLAIN[256];

static void
init_plain(void)
{
    for (int c = 0x20; c <= 0x7E; c++) PLAIN[c] = c != '"' && c != '\\';
}

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL
/* A byte of v is zero (the classic test: exact for "is any byte zero"). */
#define HAS_ZERO(v) (((v) - ONES) & ~(v) & HIGHS)

/* Whether the 8 bytes at p (ASCII: the text was checked) all stand for themselves: none is
 * below 0x20, DEL, '"' or '\'. */
static int
plain8(const unsigned char *p)
{
    uint64_t x;
    memcpy(&x, p, 8);
    uint64_t low = (x - 0x2020202020202020ULL) & ~x & HIGHS; /* a byte below 0x20 (x is ASCII) */
    return !(low | HAS_ZERO(x ^ 0x2222222222222222ULL) | HAS_ZERO(x ^ 0x5C5C5C5C5C5C5C5CULL)
             | HAS_ZERO(x ^ 0x7F7F7F7F7F7F7F7FULL));
}

/* A string at sc->i (the opening quote) in the form; sc->i then follows its closing quote. */
static int
string_form(Scan *sc)
{
    const unsigned char *s = sc->s;
    Py_ssize_t i = sc->i + 1, n = sc->n;
    if (!PLAIN['a']) init_plain();
    for (;;) {
        while (i + 8 <= n && plain8(s + i)) i += 8;
        while (i < n && PLAIN[s[i]]) i++;
        if (i >= n) return -1;
        if (s[i] == '"') break;
        if (s[i] != '\\' || i + 1 >= n) return -1; /* a control or DEL written as itself */
        unsigned char e = s[i + 1];
        if (e == '"' || e == '\\' || e == 'n' || e == 'r' || e == 't' || e == 'b' || e == 'f') { i += 2; continue; }
        if (e != 'u' || i + 5 >= n) return -1;
        int v = 0;
        for (int k = 2; k < 6; k++) {
            unsigned char x = s[i + k];
            if (!is_lower_hex(x)) return -1;
            v = v * 16 + hex_value(x);
        }
        /* \u is the spelling of the controls without a short escape, of DEL and of non-ASCII. */
        if (v >= 0x20 && v < 0x7F) return -1;
        if (v == '\b' || v == '\t' || v == '\n' || v == '\f' || v == '\r') return -1;
        i += 6;
    }
    sc->i = i + 1;
    return 0;
}

static uint64_t
text_hash(const unsigned char *p, Py_ssize_t len)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (Py_ssize_t k = 0; k < len; k++) h = (h ^ p[k]) * 0x100000001B3ULL;
    return h;
}

/* Whether the float text s[:len] of fixed notation (JSON's grammar: -?(0|[1-9][0-9]*)\.[0-9]+) is
 * what repr prints for its value, decided without converting it when it has at most 15
 * significant digits: 1 yes, 0 no, -1 unknown (then convert). A decimal of at most 15
 * significant digits (DBL_DIG) is the only one of at most 15 digits that rounds to its double,
 * so repr's shortest digits are its own; repr writes them in fixed notation when the decimal
 * point is at most 16 places after the first digit and fewer than 4 zeros precede it, with no
 * trailing zero but the one of "X.0". */
static int
fixed_float_form(const unsigned char *s, Py_ssize_t len)
{
    Py_ssize_t ip = s[0] == '-', dot = ip;
    while (s[dot] != '.') dot++;
    Py_ssize_t ni = dot - ip, fp = dot + 1, nf = len - fp;
    if (ni == 1 && s[ip] == '0') { /* below 1: the zeros after the point */
        Py_ssize_t z = 0;
        while (z < nf && s[fp + z] == '0') z++;
        if (z == nf) return nf == 1; /* 0.0 and -0.0 print so */
        if (s[len - 1] == '0') return 0;
        if (nf - z > 15) return -1;
        return z < 4; /* 0.0001 is printed so, 0.00001 as 1e-05 */
    }
    if (nf == 1 && s[fp] == '0') { /* a whole number: X.0 */
        Py_ssize_t k = ni;
        while (k > 1 && s[ip + k - 1] == '0') k--;
        if (k > 15) return -1;
        return ni <= 16; /* 1e16 prints as 1e+16 */
    }
    if (s[len - 1] == '0') return 0;
    return ni + nf > 15 ? -1 : 1;
}

/* A number at sc->i in the form (an integer as Python prints it, a float as repr prints it). */
static int
number_form(Scan *sc)
{
    const unsigned char *s = sc->s;
    Py_ssize_t start = sc->i, i = start, n = sc->n;
    if (i < n && s[i] == '-') i++;
    if (i >= n || s[i] < '0' || s[i] > '9') return -1;
    Py_ssize_t digits_start = i;
    if (s[i] == '0') i++;
    else while (i < n && s[i] >= '0' && s[i] <= '9') i++;
    Py_ssize_t int_digits = i - digits_start;
    int is_float = 0;
    if (i < n && s[i] == '.') {
        is_float = 1;
        i++;
        Py_ssize_t d = i;
        while (i < n && s[i] >= '0' && s[i] <= '9') i++;
        if (i == d) return -1;
    }
    int has_exp = i < n && (s[i] == 'e' || s[i] == 'E');
    if (has_exp) {
        is_float = 1;
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) i++;
        Py_ssize_t d = i;
        while (i < n && s[i] >= '0' && s[i] <= '9') i++;
        if (i == d) return -1;
    }
    Py_ssize_t len = i - start;
    sc->i = i;
    if (!is_float) {
        if (int_digits > MAX_INT_DIGITS) return -1;
        return (len == 2 && s[start] == '-' && s[start + 1] == '0') ? -1 : 0; /* -0 prints 0 */
    }
    if (len > MAX_NUMBER_TEXT) return -1;
    if (!has_exp) {
        int fixed = fixed_float_form(s + start, len);
        if (fixed >= 0) return fixed ? 0 : -1;
    }
    char buf[MAX_NUMBER_TEXT + 1];
    memcpy(buf, s + start, (size_t)len);
    buf[len] = '\0';
    char *end = NULL;
    double x = PyOS_string_to_double(buf, &end, NULL);
    if (x == -1.0 && PyErr_Occurred()) return -2;
    if (end != buf + len || !Py_IS_FINITE(x)) return -1; /* a float beyond the range prints Infinity */
    char *repr = PyOS_double_to_string(x, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
    if (!repr) return -2;
    int same = strlen(repr) == (size_t)len && memcmp(repr, buf, (size_t)len) == 0;
    PyMem_Free(repr);
    return same ? 0 : -1;
}

static int
literal(Scan *sc, const char *word)
{
    size_t len = strlen(word);
    if ((size_t)(sc->n - sc->i) < len || memcmp(sc->s + sc->i, word, len) != 0) return -1;
    sc->i += (Py_ssize_t)len;
    return 0;
}

/* ", " (then another item: 1) or the closing bracket (0), else -1. */
static int
next_item(Scan *sc, unsigned char close)
{
    if (sc->i < sc->n && sc->s[sc->i] == close) { sc->i++; return 0; }
    if (sc->i + 1 < sc->n && sc->s[sc->i] == ',' && sc->s[sc->i + 1] == ' ') { sc->i += 2; return 1; }
    return -1;
}

/* Record the key just scanned (start, len, hash) unless the open object already has it. */
static int
new_key(Scan *sc, Py_ssize_t base, Py_ssize_t start, Py_ssize_t len, uint64_t hash)
{
    for (Py_ssize_t k = base; k < sc->nkeys; k++) {
        const Key *o = &sc->keys[k];
        if (o->hash == hash && o->len == len && memcmp(sc->s + o->start, sc->s + start, (size_t)len) == 0)
            return -1; /* json.loads would keep one of the two */
    }
    if (sc->nkeys - base >= MAX_KEYS) return -1;
    if (sc->nkeys == sc->capkeys) {
        Py_ssize_t cap = sc->capkeys ? sc->capkeys * 2 : 64;
        Key *grown = (Key *)PyMem_Realloc(sc->keys, (size_t)cap * sizeof(Key));
        if (!grown) { PyErr_NoMemory(); return -2; }
        sc->keys = grown;
        sc->capkeys = cap;
    }
    sc->keys[sc->nkeys].hash = hash;
    sc->keys[sc->nkeys].start = start;
    sc->keys[sc->nkeys].len = len;
    sc->nkeys++;
    return 0;
}

static int
object_form(Scan *sc)
{
    Py_ssize_t base = sc->nkeys;
    int rc = 0;
    sc->i++; /* { */
    if (sc->i < sc->n && sc->s[sc->i] == '}') { sc->i++; return 0; }
    for (;;) {
        Py_ssize_t start = sc->i;
        if (sc->i >= sc->n || sc->s[sc->i] != '"') { rc = -1; break; }
        if ((rc = string_form(sc)) != 0) break;
        if ((rc = new_key(sc, base, start, sc->i - start, text_hash(sc->s + start, sc->i - start))) != 0) break;
        if (sc->i + 1 >= sc->n || sc->s[sc->i] != ':' || sc->s[sc->i + 1] != ' ') { rc = -1; break; }
        sc->i += 2;
        if ((rc = value_form(sc)) != 0) break;
        int more = next_item(sc, '}');
        if (more <= 0) { rc = more; break; }
    }
    sc->nkeys = base;
    return rc;
}

static int
array_form(Scan *sc)
{
    sc->i++; /* [ */
    if (sc->i < sc->n && sc->s[sc->i] == ']') { sc->i++; return 0; }
    for (;;) {
        int rc = value_form(sc);
        if (rc != 0) return rc;
        int more = next_item(sc, ']');
        if (more <= 0) return more;
    }
}

static int
value_form(Scan *sc)
{
    if (sc->i >= sc->n) return -1;
    unsigned char c = sc->s[sc->i];
    int rc;
    switch (c) {
    case '{':
    case '[':
        if (++sc->depth > MAX_DEPTH) return -1;
        rc = c == '{' ? object_form(sc) : array_form(sc);
        sc->depth--;
        return rc;
    case '"': return string_form(sc);
    case 't': return literal(sc, "true");
    case 'f': return literal(sc, "false");
    case 'n': return literal(sc, "null");
    case 'N': return literal(sc, "NaN");
    case 'I': return literal(sc, "Infinity");
    case '-':
        if (sc->i + 1 < sc->n && sc->s[sc->i + 1] == 'I') return literal(sc, "-Infinity");
        return number_form(sc);
    default:
        return c >= '0' && c <= '9' ? number_form(sc) : -1;
    }
}

PyObject *
rageval_dumps_form(PyObject *self, PyObject *text)
{
    (void)self;
    if (!PyUnicode_CheckExact(text)) Py_RETURN_NONE;
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0) return NULL;
#endif
    if (!PyUnicode_IS_ASCII(text)) Py_RETURN_FALSE;
    Scan sc = {PyUnicode_1BYTE_DATA(text), PyUnicode_GET_LENGTH(text), 0, NULL, 0, 0, 0};
    if (sc.n < 2 || sc.s[0] != '{') Py_RETURN_FALSE; /* a JSON object, nothing around it */
    int rc = value_form(&sc);
    PyMem_Free(sc.keys);
    if (rc == -2) return NULL;
    if (rc == 0 && sc.i == sc.n) Py_RETURN_TRUE;
    Py_RETURN_FALSE;
}

/* ------------------------------------------------- any JSON object text, written in the form */

/* canonical(): json.dumps(json.loads(text)) made from the text itself, for a line that is not in
 * the form (written with ensure_ascii=False, with other separators or whitespace, with other
 * escapes or number spellings). It returns a result only where it knows what json.loads reads
 * (CPython's scanner: JSON's grammar, NaN, Infinity and -Infinity, a high and a low surrogate
 * escape joined, no raw control character in a string, the last of a repeated key) and what
 * json.dumps writes for it; anything else (an error json.loads would raise, a repeated key, the
 * limits of dumps_form) gives no result and the caller encodes the record itself. */
/* The end of the JSON whitespace (space, tab, newline, carriage return: json's set) at d[i]. */
static inline Py_ssize_t
json_ws_end(int kind, const void *d, Py_ssize_t i, Py_ssize_t n)
{
    while (i < n) {
        Py_UCS4 ch = PyUnicode_READ(kind, d, i);
        if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r') break;
        i++;
    }
    return i;
}

/* The end of the number json.loads reads at d[i] (-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][-+]?[0-9]+)?;
 * a fraction or an exponent without digits is not taken: json.loads stops before it), or -1;
 * *is_float says whether it has a fraction or an exponent. Inlined, so a caller passing a
 * constant kind gets a loop without the kind switch. */
static inline Py_ssize_t
json_number_end(int kind, const void *d, Py_ssize_t i, Py_ssize_t n, int *is_float)
{
#define CH(k) ((k) < n ? PyUnicode_READ(kind, d, (k)) : 0)
#define DIGIT(k) (CH(k) >= '0' && CH(k) <= '9')
    *is_float = 0;
    if (CH(i) == '-') i++;
    if (CH(i) == '0') i++;
    else if (CH(i) >= '1' && CH(i) <= '9')
        while (DIGIT(i)) i++;
    else return -1;
    if (CH(i) == '.' && DIGIT(i + 1)) {
        *is_float = 1;
        i++;
        while (DIGIT(i)) i++;
    }
    if (CH(i) == 'e' || CH(i) == 'E') {
        Py_ssize_t j = i + 1;
        if (CH(j) == '-' || CH(j) == '+') j++;
        if (DIGIT(j)) {
            *is_float = 1;
            i = j;
            while (DIGIT(i)) i++;
        }
    }
    return i;
#undef DIGIT
#undef CH
}

typedef struct {
    int kind;
    const void *d;
    Py_ssize_t n, i;
    unsigned char *out;   /* the text in the form (ASCII), out[:len] */
    Py_ssize_t len, cap;
    Key *keys;            /* the keys of the objects still open: spans of out */
    Py_ssize_t nkeys, capkeys;
    int depth;
} Canon;

#define AT(c, k) PyUnicode_READ((c)->kind, (c)->d, (k))

static int canon_value(Canon *c);

static int
canon_room(Canon *c, Py_ssize_t more)
{
    if (c->len + more <= c->cap) return 0;
    Py_ssize_t cap = c->cap * 2 + more + 64;
    unsigned char *grown = (unsigned char *)PyMem_Realloc(c->out, (size_t)cap);
    if (!grown) { PyErr_NoMemory(); return -2; }
    c->out = grown;
    c->cap = cap;
    return 0;
}

static int
canon_put(Canon *c, const char *p, Py_ssize_t k)
{
    if (canon_room(c, k) < 0) return -2;
    memcpy(c->out + c->len, p, (size_t)k);
    c->len += k;
    return 0;
}

static void
canon_ws(Canon *c)
{
    c->i = json_ws_end(c->kind, c->d, c->i, c->n);
}

static void
put_u(unsigned char *o, Py_UCS4 v)
{
    static const unsigned char hex[] = "0123456789abcdef";
    o[0] = '\\', o[1] = 'u';
    o[2] = hex[(v >> 12) & 15], o[3] = hex[(v >> 8) & 15], o[4] = hex[(v >> 4) & 15], o[5] = hex[v & 15];
}

/* One character of a string as json.dumps writes it (ensure_ascii). */
static int
canon_char(Canon *c, Py_UCS4 ch)
{
    if (canon_room(c, 12) < 0) return -2;
    unsigned char *o = c->out + c->len;
    const char *short_escape = ch == '"' ? "\\\"" : ch == '\\' ? "\\\\" : ch == '\n' ? "\\n" : ch == '\r' ? "\\r"
                               : ch == '\t' ? "\\t" : ch == '\b' ? "\\b" : ch == '\f' ? "\\f" : NULL;
    if (short_escape) { memcpy(o, short_escape, 2); c->len += 2; return 0; }
    if (ch >= 0x20 && ch <= 0x7E) { o[0] = (unsigned char)ch; c->len += 1; return 0; }
    if (ch >= 0x10000) { /* a surrogate pair */
        put_u(o, 0xD800 | ((ch - 0x10000) >> 10));
        put_u(o + 6, 0xDC00 | ((ch - 0x10000) & 0x3FF));
        c->len += 12;
        return 0;
    }
    put_u(o, ch);
    c->len += 6;
    return 0;
}

static int
canon_hex4(Canon *c, Py_ssize_t at, Py_UCS4 *v)
{
    if (at + 4 > c->n) return -1;
    Py_UCS4 x = 0;
    for (int k = 0; k < 4; k++) {
        Py_UCS4 h = AT(c, at + k);
        int nibble = h >= '0' && h <= '9' ? (int)(h - '0') : h >= 'a' && h <= 'f' ? (int)(h - 'a' + 10)
                     : h >= 'A' && h <= 'F' ? (int)(h - 'A' + 10) : -1;
        if (nibble < 0) return -1;
        x = x * 16 + (Py_UCS4)nibble;
    }
    *v = x;
    return 0;
}

/* The escape at c->i (its backslash): its character into *cp. */
static int
canon_escape(Canon *c, Py_UCS4 *cp)
{
    if (c->i + 1 >= c->n) return -1;
    Py_UCS4 e = AT(c, c->i + 1);
    c->i += 2;
    switch (e) {
    case '"': case '\\': case '/': *cp = e; return 0;
    case 'b': *cp = '\b'; return 0;
    case 'f': *cp = '\f'; return 0;
    case 'n': *cp = '\n'; return 0;
    case 'r': *cp = '\r'; return 0;
    case 't': *cp = '\t'; return 0;
    case 'u': break;
    default: return -1;
    }
    if (canon_hex4(c, c->i, cp) < 0) return -1;
    c->i += 4;
    /* json.loads joins a high surrogate escape and a low one that follows at once */
    if (*cp >= 0xD800 && *cp <= 0xDBFF && c->i + 6 < c->n && AT(c, c->i) == '\\' && AT(c, c->i + 1) == 'u') {
        Py_UCS4 low;
        if (canon_hex4(c, c->i + 2, &low) < 0) return -1; /* json.loads raises there */
        if (low >= 0xDC00 && low <= 0xDFFF) {
            *cp = 0x10000 + (((*cp - 0xD800) << 10) | (low - 0xDC00));
            c->i += 6;
        }
    }
    return 0;
}

/* A string at c->i (its opening quote), written in the form. */
static int
canon_string(Canon *c)
{
    if (canon_put(c, "\"", 1) < 0) return -2;
    c->i++;
    if (!PLAIN['a']) init_plain();
    for (;;) {
        if (c->kind == PyUnicode_1BYTE_KIND) { /* a run of characters written as themselves */
            const Py_UCS1 *s = (const Py_UCS1 *)c->d;
            Py_ssize_t start = c->i;
            while (c->i < c->n && PLAIN[s[c->i]]) c->i++;
            if (c->i > start && canon_put(c, (const char *)s + start, c->i - start) < 0) return -2;
        }
        else {
            Py_ssize_t start = c->i;
            while (c->i < c->n && AT(c, c->i) < 0x80 && PLAIN[AT(c, c->i)]) c->i++;
            if (canon_room(c, c->i - start) < 0) return -2;
            for (Py_ssize_t k = start; k < c->i; k++) c->out[c->len++] = (unsigned char)AT(c, k);
        }
        if (c->i >= c->n) return -1;
        Py_UCS4 ch = AT(c, c->i);
        if (ch == '"') break;
        if (ch == '\\') {
            if (canon_escape(c, &ch) < 0) return -1;
        }
        else {
            if (ch < 0x20) return -1; /* json.loads refuses a raw control character */
            c->i++;
        }
        if (canon_char(c, ch) < 0) return -2;
    }
    c->i++;
    return canon_put(c, "\"", 1);
}

/* A number at c->i: an integer as Python prints it, a float as repr prints it. */
static int
canon_number(Canon *c)
{
    char buf[MAX_NUMBER_TEXT + 1];
    int is_float;
    Py_ssize_t start = c->i, end = json_number_end(c->kind, c->d, start, c->n, &is_float), k = end - start;
    if (end < 0 || k >= MAX_NUMBER_TEXT) return -1; /* not a number; too long to check */
    for (Py_ssize_t j = 0; j < k; j++) buf[j] = (char)AT(c, start + j);
    buf[k] = '\0';
    c->i = end;
    if (!is_float) {
        if (k - (buf[0] == '-') > MAX_INT_DIGITS) return -1;
        return k == 2 && buf[0] == '-' && buf[1] == '0' ? canon_put(c, "0", 1) : canon_put(c, buf, k);
    }
    char *stop = NULL;
    double x = PyOS_string_to_double(buf, &stop, NULL);
    if (x == -1.0 && PyErr_Occurred()) return -2;
    if (stop != buf + k) return -1;
    if (!Py_IS_FINITE(x)) return canon_put(c, x > 0 ? "Infinity" : "-Infinity", x > 0 ? 8 : 9);
    char *repr = PyOS_double_to_string(x, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
    if (!repr) return -2;
    int rc = canon_put(c, repr, (Py_ssize_t)strlen(repr));
    PyMem_Free(repr);
    return rc;
}

static int
canon_word(Canon *c, const char *word)
{
    Py_ssize_t len = (Py_ssize_t)strlen(word);
    if (c->n - c->i < len) return -1;
    for (Py_ssize_t k = 0; k < len; k++)
        if (AT(c, c->i + k) != (Py_UCS4)(unsigned char)word[k]) return -1;
    c->i += len;
    return canon_put(c, word, len);
}

/* ", " then another item (1), the closing bracket (0), or -1. */
static int
canon_next(Canon *c, Py_UCS4 close)
{
    canon_ws(c);
    if (c->i >= c->n) return -1;
    Py_UCS4 ch = AT(c, c->i++);
    if (ch == close) return 0;
    if (ch != ',') return -1;
    canon_ws(c);
    return canon_put(c, ", ", 2) < 0 ? -2 : 1;
}

/* Record the key out[start:len] of the open object (from base), -1 when it has it already. */
static int
canon_key(Canon *c, Py_ssize_t base, Py_ssize_t start)
{
    Scan sc = {c->out, c->len, 0, c->keys, c->nkeys, c->capkeys, 0};
    int rc = new_key(&sc, base, start, c->len - start, text_hash(c->out + start, c->len - start));
    c->keys = sc.keys, c->nkeys = sc.nkeys, c->capkeys = sc.capkeys;
    return rc;
}

static int
canon_object(Canon *c)
{
    Py_ssize_t base = c->nkeys;
    int rc;
    c->i++;
    if (canon_put(c, "{", 1) < 0) return -2;
    canon_ws(c);
    if (c->i < c->n && AT(c, c->i) == '}') { c->i++; return canon_put(c, "}", 1); }
    for (;;) {
        Py_ssize_t start = c->len;
        if (c->i >= c->n || AT(c, c->i) != '"') { rc = -1; break; }
        if ((rc = canon_string(c)) != 0 || (rc = canon_key(c, base, start)) != 0) break;
        canon_ws(c);
        if (c->i >= c->n || AT(c, c->i) != ':') { rc = -1; break; }
        c->i++;
        canon_ws(c);
        if ((rc = canon_put(c, ": ", 2)) != 0 || (rc = canon_value(c)) != 0) break;
        if ((rc = canon_next(c, '}')) <= 0) break;
    }
    c->nkeys = base;
    return rc == 0 ? canon_put(c, "}", 1) : rc;
}

static int
canon_array(Canon *c)
{
    int rc;
    c->i++;
    if (canon_put(c, "[", 1) < 0) return -2;
    canon_ws(c);
    if (c->i < c->n && AT(c, c->i) == ']') { c->i++; return canon_put(c, "]", 1); }
    do {
        if ((rc = canon_value(c)) != 0) return rc;
    } while ((rc = canon_next(c, ']')) == 1);
    return rc == 0 ? canon_put(c, "]", 1) : rc;
}

static int
canon_value(Canon *c)
{
    if (c->i >= c->n) return -1;
    Py_UCS4 ch = AT(c, c->i);
    int rc;
    switch (ch) {
    case '{':
    case '[':
        if (++c->depth > MAX_DEPTH) return -1;
        rc = ch == '{' ? canon_object(c) : canon_array(c);
        c->depth--;
        return rc;
    case '"': return canon_string(c);
    case 't': return canon_word(c, "true");
    case 'f': return canon_word(c, "false");
    case 'n': return canon_word(c, "null");
    case 'N': return canon_word(c, "NaN");
    case 'I': return canon_word(c, "Infinity");
    case '-':
        if (c->i + 1 < c->n && AT(c, c->i + 1) == 'I') return canon_word(c, "-Infinity");
        return canon_number(c);
    default:
        return ch >= '0' && ch <= '9' ? canon_number(c) : -1;
    }
}

/* json.dumps(json.loads(text)) for a JSON object text into *out (PyMem; *len its length): 0,
 * -1 (no result) or -2 (a Python error is set). */
static int
canonical(PyObject *text, unsigned char **out, Py_ssize_t *len)
{
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0) return -2;
#endif
    Canon c = {PyUnicode_KIND(text), PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text), 0, NULL, 0, 0, NULL, 0, 0, 0};
    canon_ws(&c);
    int rc = c.i < c.n && AT(&c, c.i) == '{' ? canon_value(&c) : -1;
    if (rc == 0) canon_ws(&c);
    if (rc == 0 && c.i != c.n) rc = -1;
    PyMem_Free(c.keys);
    if (rc != 0) { PyMem_Free(c.out); return rc; }
    *out = c.out;
    *len = c.len;
    return 0;
}

/* dumps_canonical(text): json.dumps(json.loads(text)) for a JSON object text, or None. */
PyObject *
rageval_dumps_canonical(PyObject *self, PyObject *text)
{
    (void)self;
    if (!PyUnicode_CheckExact(text)) Py_RETURN_NONE;
    unsigned char *buf;
    Py_ssize_t len;
    int rc = canonical(text, &buf, &len);
    if (rc == -2) return NULL;
    if (rc == -1) Py_RETURN_NONE;
    PyObject *out = PyUnicode_New(len, 127);
    if (out) memcpy(PyUnicode_1BYTE_DATA(out), buf, (size_t)len);
    PyMem_Free(buf);
    return out;
}

/* dumps_splice(text, tail): D[:-1] + (", " unless D is "{}") + tail[1:] where D is text when it
 * is in the form (rageval_dumps_form) and dumps_canonical(text) otherwise; None when there is no
 * D or tail is not an ASCII str starting with "{". */
PyObject *
rageval_dumps_splice(PyObject *self, PyObject *args)
{
    PyObject *text, *tail;
    if (!PyArg_ParseTuple(args, "UU:dumps_splice", &text, &tail)) return NULL;
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(tail) < 0) return NULL;
#endif
    Py_ssize_t m = PyUnicode_GET_LENGTH(tail);
    if (!PyUnicode_IS_ASCII(tail) || m < 2 || PyUnicode_1BYTE_DATA(tail)[0] != '{') Py_RETURN_NONE;
    PyObject *ok = rageval_dumps_form(self, text);
    if (!ok) return NULL;
    Py_DECREF(ok);
    unsigned char *buf = NULL;
    const unsigned char *src;
    Py_ssize_t n;
    if (ok == Py_True) {
        src = PyUnicode_1BYTE_DATA(text);
        n = PyUnicode_GET_LENGTH(text);
    }
    else {
        int rc = canonical(text, &buf, &n);
        if (rc == -2) return NULL;
        if (rc == -1) Py_RETURN_NONE;
        src = buf;
    }
    Py_ssize_t sep = n > 2 ? 2 : 0;
    PyObject *out = PyUnicode_New(n - 1 + sep + m - 1, 127);
    if (out) {
        Py_UCS1 *o = PyUnicode_1BYTE_DATA(out);
        memcpy(o, src, (size_t)(n - 1));
        if (sep) memcpy(o + n - 1, ", ", 2);
        memcpy(o + n - 1 + sep, PyUnicode_1BYTE_DATA(tail) + 1, (size_t)(m - 1));
    }
    PyMem_Free(buf);
    return out;
}

/* ------------------------------------------------------------- float repr */

/* repr(x) of a float x in [2**-13, 1), as CPython writes it (PyOS_double_to_string with 'r',
 * that is David Gay's dtoa in mode 0): the shortest decimal that reads back as x, and of the
 * shortest ones the nearest to x, a tie going to the even last digit; in that range repr uses
 * positional notation, "0." and the digits.
 *
 * x = m * 2**-q exactly (m the 53-bit significand, q in 53..66). A decimal D * 10**-n reads
 * back as x when it lies within half a unit in the last place of x: |D * 10**-n - x| <
 * 2**-(q+1) (equality, where strtod's tie rule would decide, cannot happen here: the ends of
 * that interval have q + 1 binary places, a decimal of n <= 21 places fewer). Scaled by
 * 2**(q+1) * 10**n this is |D * P - A| < 10**n with A = 2 * m * 10**n and P = 2**(q+1), all
 * integers below 2**124: for n = 1, 2, ... the nearest D is A / P rounded (a shift), and the
 * first n whose nearest D passes is the shortest (a D ending in 0 would have passed at n - 1,
 * so D has no trailing zero). The nearest candidate passes whenever any does because the two
 * half-units are equal: not so for a power of two (m = 2**52, whose lower neighbour is nearer),
 * left to repr, as is any x outside the range. Returns the length written to out (at most 24
 * bytes), or 0 when the caller must use repr. tests/test_float_repr.py compares it with repr on
 * every k / d for d up to 1,500, on random doubles of every exponent, on ties and on the
 * neighbours of the range's ends and of the powers of ten. */
static int
short_repr(double x, char *out)
{
#if defined(__SIZEOF_INT128__)
    typedef unsigned __int128 u128;
    if (!(x >= 1.0 / 8192.0 && x < 1.0)) return 0;
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    uint64_t m = bits & ((UINT64_C(1) << 52) - 1);
    if (m == 0) return 0;
    m |= UINT64_C(1) << 52;
    int q = 1075 - (int)((bits >> 52) & 0x7FF); /* x = m * 2**(exponent - 1075) */
    u128 a = (u128)m << 1, p = (u128)1 << (q + 1), half = (u128)1 << q, ten = 1;
    for (int n = 1; n <= 21; n++) {
        a *= 10;
        ten *= 10;
        u128 d = a >> (q + 1), r = a & (p - 1), dist = r;
        if (r > half || (r == half && (d & 1))) {
            d += 1;
            dist = p - r;
        }
        if (dist >= ten) continue;
        if (d == 0 || d >> 64) return 0;
        char digits[24];
        int k = 0;
        for (uint64_t v = (uint64_t)d; v; v /= 10) digits[k++] = (char)('0' + v % 10);
        if (k > n) return 0;
        int pos = 0;
        out[pos++] = '0';
        out[pos++] = '.';
        for (int z = k; z < n; z++) out[pos++] = '0';
        while (k) out[pos++] = digits[--k];
        return pos;
    }
    return 0;
#else
    (void)x;
    (void)out;
    return 0;
#endif
}

/* join_reprs(parts, values): parts[0] + repr(values[0]) + parts[1] + ... + parts[n], for n
 * values that are each exactly a float or an int and n + 1 ASCII parts (what "%r" formatting
 * of the values into the parts' template gives); None for anything else. */
PyObject *
rageval_join_reprs(PyObject *self, PyObject *args)
{
    PyObject *parts, *values;
    if (!PyArg_ParseTuple(args, "O!O!:join_reprs", &PyTuple_Type, &parts, &PyTuple_Type, &values)) return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(values), size = 0;
    if (PyTuple_GET_SIZE(parts) != n + 1) Py_RETURN_NONE;
    for (Py_ssize_t i = 0; i <= n; i++) {
        PyObject *s = PyTuple_GET_ITEM(parts, i);
        if (!PyUnicode_CheckExact(s)) Py_RETURN_NONE;
#if PY_VERSION_HEX < 0x030C0000
        if (PyUnicode_READY(s) < 0) return NULL;
#endif
        if (!PyUnicode_IS_ASCII(s)) Py_RETURN_NONE;
        size += PyUnicode_GET_LENGTH(s);
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = PyTuple_GET_ITEM(values, i);
        if (!PyFloat_CheckExact(v) && !PyLong_CheckExact(v)) Py_RETURN_NONE;
    }
    size += 32 * n; /* a float's repr is at most 24 characters; a longer int's repr declines */
    char *buf = (char *)PyMem_Malloc((size_t)size), *o = buf;
    if (!buf) return PyErr_NoMemory();
    for (Py_ssize_t i = 0;; i++) {
        PyObject *s = PyTuple_GET_ITEM(parts, i);
        memcpy(o, PyUnicode_1BYTE_DATA(s), (size_t)PyUnicode_GET_LENGTH(s));
        o += PyUnicode_GET_LENGTH(s);
        if (i == n) break;
        PyObject *v = PyTuple_GET_ITEM(values, i);
        int k = PyFloat_CheckExact(v) ? short_repr(PyFloat_AS_DOUBLE(v), o) : 0;
        if (k) {
            o += k;
            continue;
        }
        PyObject *r = PyObject_Repr(v);
        if (!r) {
            PyMem_Free(buf);
            return NULL;
        }
        Py_ssize_t len = PyUnicode_GET_LENGTH(r);
        if (len > 32 || !PyUnicode_IS_ASCII(r)) {
            Py_DECREF(r);
            PyMem_Free(buf);
            Py_RETURN_NONE;
        }
        memcpy(o, PyUnicode_1BYTE_DATA(r), (size_t)len);
        o += len;
        Py_DECREF(r);
    }
    PyObject *out = PyUnicode_New(o - buf, 127);
    if (out) memcpy(PyUnicode_1BYTE_DATA(out), buf, (size_t)(o - buf));
    PyMem_Free(buf);
    return out;
}

/* ------------------------------------------------------------- flat objects */

/* The value of the number text s[i:end] as json's scanner makes it: an int (what PyLong_FromString
 * gives; at most 18 digits here, so a C long long) or a float (PyOS_string_to_double on the text,
 * as json does with the default parse_float). NULL with an error set, or without one when the
 * text is longer than this code takes. */
static PyObject *
number_value(const Py_UCS1 *s, Py_ssize_t i, Py_ssize_t end, int is_float)
{
    char buf[64];
    Py_ssize_t len = end - i;
    if (len >= (Py_ssize_t)sizeof buf || (!is_float && len > 18)) return NULL;
    if (!is_float) {
        long long v = 0;
        int neg = s[i] == '-';
        for (Py_ssize_t k = i + neg; k < end; k++) v = v * 10 + (s[k] - '0');
        return PyLong_FromLongLong(neg ? -v : v);
    }
    memcpy(buf, s + i, (size_t)len);
    buf[len] = 0;
    double v = PyOS_string_to_double(buf, NULL, NULL);
    if (v == -1.0 && PyErr_Occurred()) return NULL;
    return PyFloat_FromDouble(v);
}

/* The index of the closing quote of the JSON string at s[i] (a quote); -1 when the string holds
 * a backslash (escapes are left to json) or a control character (json's strict scanner rejects
 * it), or does not end. */
static Py_ssize_t
plain_string_end(const Py_UCS1 *s, Py_ssize_t i, Py_ssize_t n)
{
    for (Py_ssize_t k = i + 1; k < n; k++) {
        Py_UCS1 ch = s[k];
        if (ch == '"') return k;
        if (ch == '\\' || ch < 0x20) return -1;
    }
    return -1;
}

/* json_ws_end and json_number_end on one-byte text (the kind a constant: no switch) */
#define skip_ws(s, i, n) json_ws_end(PyUnicode_1BYTE_KIND, (s), (i), (n))
#define number_end(s, i, n, f) json_number_end(PyUnicode_1BYTE_KIND, (s), (i), (n), (f))

/* The keys of the last object read, by position: a key of the same text at the same place is the
 * same str object again (rows of one file repeat their keys; no new string, its hash kept). */
#define KEY_SLOTS 64
static PyObject *key_slots[KEY_SLOTS];

static PyObject *
key_at(PyObject *text, const Py_UCS1 *s, Py_ssize_t start, Py_ssize_t end, int place)
{
    Py_ssize_t len = end - start;
    if (place < KEY_SLOTS) {
        PyObject *k = key_slots[place];
        if (k && PyUnicode_GET_LENGTH(k) == len && memcmp(PyUnicode_1BYTE_DATA(k), s + start, (size_t)len) == 0) {
            Py_INCREF(k);
            return k;
        }
    }
    PyObject *k = PyUnicode_Substring(text, start, end);
    if (k && place < KEY_SLOTS && PyUnicode_KIND(k) == PyUnicode_1BYTE_KIND) {
        Py_XSETREF(key_slots[place], k);
        Py_INCREF(k);
    }
    return k;
}

/* The value at s[j] (after a key's colon) into *value and its end into *vend: 1, 0 (not one this
 * code reads: the caller declines) or -1 (an error). */
static int
flat_value(PyObject *text, const Py_UCS1 *s, Py_ssize_t j, Py_ssize_t n, PyObject **value, Py_ssize_t *vend)
{
    Py_UCS1 ch = s[j];
    if (ch == '"') {
        Py_ssize_t e = plain_string_end(s, j, n);
        if (e < 0) return 0;
        *value = PyUnicode_Substring(text, j + 1, e);
        *vend = e + 1;
        return *value ? 1 : -1;
    }
    if (ch == '-' || (ch >= '0' && ch <= '9')) {
        int is_float;
        Py_ssize_t e = number_end(s, j, n, &is_float);
        if (e < 0) return 0;
        *value = number_value(s, j, e, is_float);
        *vend = e;
        return *value ? 1 : (PyErr_Occurred() ? -1 : 0);
    }
    static const char *const words[3] = {"true", "false", "null"};
    PyObject *const objects[3] = {Py_True, Py_False, Py_None};
    for (int w = 0; w < 3; w++) {
        size_t len = strlen(words[w]);
        if (j + (Py_ssize_t)len <= n && memcmp(s + j, words[w], len) == 0) {
            *value = objects[w];
            Py_INCREF(*value);
            *vend = j + (Py_ssize_t)len;
            return 1;
        }
    }
    return 0;
}

/* flat_object(text): json.loads(text) for a JSON object text of one-byte characters (ASCII and
 * Latin-1) whose keys are strings without escapes and whose values are such strings, numbers of
 * json's grammar (ints of at most 18 digits), true, false or null; None for any other text (the
 * caller then runs json, which also reports the errors). The dict is built as json's scanner
 * builds it: each key set in turn, so a repeated key keeps its first place and its last value.
 * tests/test_flat_object.py compares it with json.loads on random and mutated texts. */
PyObject *
rageval_flat_object(PyObject *self, PyObject *text)
{
    if (!PyUnicode_CheckExact(text)) Py_RETURN_NONE;
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0) return NULL;
#endif
    if (PyUnicode_KIND(text) != PyUnicode_1BYTE_KIND) Py_RETURN_NONE;
    const Py_UCS1 *s = PyUnicode_1BYTE_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), i = skip_ws(s, 0, n);
    if (i >= n || s[i] != '{') Py_RETURN_NONE;
    PyObject *out = PyDict_New();
    if (!out) return NULL;
    i = skip_ws(s, i + 1, n);
    if (i < n && s[i] == '}') goto close;
    for (int place = 0;; place++) {
        if (i >= n || s[i] != '"') goto decline;
        Py_ssize_t kend = plain_string_end(s, i, n);
        if (kend < 0) goto decline;
        Py_ssize_t j = skip_ws(s, kend + 1, n), vend = 0;
        if (j >= n || s[j] != ':') goto decline;
        j = skip_ws(s, j + 1, n);
        if (j >= n) goto decline;
        PyObject *value = NULL;
        int got = flat_value(text, s, j, n, &value, &vend);
        if (got < 0) goto error;
        if (got == 0) goto decline;
        PyObject *key = key_at(text, s, i + 1, kend, place);
        int rc = key ? PyDict_SetItem(out, key, value) : -1;
        Py_XDECREF(key);
        Py_DECREF(value);
        if (rc < 0) goto error;
        i = skip_ws(s, vend, n);
        if (i >= n) goto decline;
        if (s[i] == '}') break;
        if (s[i] != ',') goto decline;
        i = skip_ws(s, i + 1, n);
    }
close:
    if (skip_ws(s, i + 1, n) != n) goto decline;
    return out;
decline:
    Py_DECREF(out);
    Py_RETURN_NONE;
error:
    Py_DECREF(out);
    return NULL;
}
