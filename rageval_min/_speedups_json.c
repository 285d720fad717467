/* Part of rageval_min._speedups (built with _speedups.c into one extension): whether a JSON
 * text is already in the exact form Python's json.dumps gives its value.
 *
 * A writer that re-serialises every record it reads (MT-RAG's run_algorithmic.py writes
 * json.dumps(record) with a "metrics" key added) spends most of its time in json.dumps. When the
 * line it read is byte for byte json.dumps(json.loads(line)), the output is that line with the new
 * key spliced in before the closing brace: no re-encoding is needed. dumps_form() decides the
 * first part, conservatively: True only when the text is certainly in that form, False whenever
 * it is not or when this code does not know (the caller then runs json.dumps, so False is always
 * safe).
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
 * tests/test_dumps_form.py compares dumps_form() with json.dumps(json.loads(text)) == text on
 * seeded random JSON and on hand-written edge cases. CPython C API only.
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

/* dumps_splice(text, tail): text[:-1] + (", " unless text is "{}") + tail[1:] when text is in the
 * form (rageval_dumps_form) and tail is a str "{...}" of ASCII; None otherwise. */
PyObject *
rageval_dumps_splice(PyObject *self, PyObject *args)
{
    PyObject *text, *tail;
    if (!PyArg_ParseTuple(args, "UU:dumps_splice", &text, &tail)) return NULL;
    PyObject *ok = rageval_dumps_form(self, text);
    if (ok != Py_True) {
        if (!ok) return NULL;
        Py_DECREF(ok);
        Py_RETURN_NONE;
    }
    Py_DECREF(ok);
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(tail) < 0) return NULL;
#endif
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), m = PyUnicode_GET_LENGTH(tail);
    if (!PyUnicode_IS_ASCII(tail) || m < 2 || PyUnicode_1BYTE_DATA(tail)[0] != '{') Py_RETURN_NONE;
    Py_ssize_t sep = n > 2 ? 2 : 0;
    PyObject *out = PyUnicode_New(n - 1 + sep + m - 1, 127);
    if (!out) return NULL;
    Py_UCS1 *o = PyUnicode_1BYTE_DATA(out);
    memcpy(o, PyUnicode_1BYTE_DATA(text), (size_t)(n - 1));
    if (sep) memcpy(o + n - 1, ", ", 2);
    memcpy(o + n - 1 + sep, PyUnicode_1BYTE_DATA(tail) + 1, (size_t)(m - 1));
    return out;
}
