/* expr.c — recursive-descent evaluator for expr.h's integer language. */
#include "expr.h"

#include "util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *src;
    const char *p;
    expr_lookup_fn lookup;
    void *ctx;
    char *err;
    size_t errlen;
    bool failed;
    int depth; /* of nested parentheses, conditionals and unary operators, against MAX_DEPTH */
} parser;

/* Deeper nesting than this is refused rather than left to exhaust the stack. */
#define MAX_DEPTH 200

static int64_t parse_cond(parser *ps, bool live);

static void fail(parser *ps, const char *fmt, const char *arg, size_t arglen)
{
    if (ps->failed)
        return;
    ps->failed = true;
    char what[128];
    snprintf(what, sizeof what, "%.*s", (int)(arglen < sizeof what - 1 ? arglen : sizeof what - 1), arg);
    char msg[256];
    snprintf(msg, sizeof msg, fmt, what);
    snprintf(ps->err, ps->errlen, "%s at offset %d of `%s`", msg, (int)(ps->p - ps->src), ps->src);
}

/* An operation whose result does not fit in 64 bits. Only a branch that is taken fails: "S > 0 ?
 * X / S : 0" must not fail for S = 0, and an untaken branch's values mean nothing. */
static int64_t overflow(parser *ps, bool live)
{
    if (live)
        fail(ps, "%s: the result does not fit in a 64-bit integer", "overflow", 8);
    return 0;
}

static void skip_ws(parser *ps)
{
    while (isspace((unsigned char)*ps->p))
        ps->p++;
}

static bool accept(parser *ps, const char *tok)
{
    skip_ws(ps);
    /* Compared by hand: this runs for every operator at every precedence level of every term. */
    size_t n = 0;
    while (tok[n] && ps->p[n] == tok[n])
        n++;
    if (tok[n])
        return false;
    /* "<" must not swallow the first half of "<="; likewise "=" never stands alone. */
    if (n == 1 && (tok[0] == '<' || tok[0] == '>' || tok[0] == '!') && ps->p[1] == '=')
        return false;
    if (n == 1 && (tok[0] == '&' || tok[0] == '|'))
        return false;
    ps->p += n;
    return true;
}

static void expect(parser *ps, const char *tok)
{
    if (!accept(ps, tok))
        fail(ps, "expected '%s'", tok, strlen(tok));
}

static int64_t ilog2(parser *ps, int64_t v, bool live)
{
    if (!live)
        return 0;
    if (v <= 0 || (v & (v - 1)) != 0) {
        fail(ps, "log2 of %s, which is not a power of two", "value", 5);
        return 0;
    }
    int64_t r = 0;
    while (v > 1) {
        v >>= 1;
        r++;
    }
    return r;
}

static int64_t parse_primary(parser *ps, bool live)
{
    skip_ws(ps);
    if (ps->failed)
        return 0;
    if (accept(ps, "(")) {
        int64_t v = parse_cond(ps, live);
        expect(ps, ")");
        return v;
    }
    if (isdigit((unsigned char)*ps->p)) {
        int64_t v = 0;
        const char *start = ps->p;
        while (isdigit((unsigned char)*ps->p)) {
            if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *ps->p - '0', &v)) {
                while (isdigit((unsigned char)*ps->p))
                    ps->p++;
                fail(ps, "the number %s is too large for a 64-bit integer", start, (size_t)(ps->p - start));
                return 0;
            }
            ps->p++;
        }
        return v;
    }
    if (isalpha((unsigned char)*ps->p) || *ps->p == '_') {
        const char *name = ps->p;
        while (isalnum((unsigned char)*ps->p) || *ps->p == '_')
            ps->p++;
        size_t len = (size_t)(ps->p - name);
        skip_ws(ps);
        if (*ps->p == '(') {
            static const char *fns[] = {"cdiv", "rup", "min", "max", "log2", "pow2"};
            static const int arity[] = {2, 2, 2, 2, 1, 1};
            int fi = -1;
            for (int i = 0; i < 6; i++)
                if (strlen(fns[i]) == len && strncmp(fns[i], name, len) == 0)
                    fi = i;
            if (fi < 0) {
                fail(ps, "unknown function '%s'", name, len);
                return 0;
            }
            ps->p++;
            int64_t a = parse_cond(ps, live), b = 0;
            if (arity[fi] == 2) {
                expect(ps, ",");
                b = parse_cond(ps, live);
            }
            expect(ps, ")");
            if (ps->failed || !live)
                return 0;
            switch (fi) {
            case 0:
            case 1: {
                if (b <= 0) {
                    fail(ps, "%s by a value <= 0", name, len);
                    return 0;
                }
                /* C division truncates toward zero, which is the ceiling for a < 0. */
                int64_t q = a / b + (a % b > 0), r;
                if (fi == 0)
                    return q;
                return __builtin_mul_overflow(q, b, &r) ? overflow(ps, live) : r;
            }
            case 2: return a < b ? a : b;
            case 3: return a > b ? a : b;
            case 4: return ilog2(ps, a, live);
            default: return a > 0 && (a & (a - 1)) == 0;
            }
        }
        int64_t v = 0;
        if (!ps->lookup || !ps->lookup(ps->ctx, name, len, &v)) {
            fail(ps, "unknown name '%s'", name, len);
            return 0;
        }
        return v;
    }
    if (*ps->p == '\0')
        fail(ps, "unexpected end%s", "", 0);
    else
        fail(ps, "unexpected '%s'", ps->p, 1);
    return 0;
}

static int64_t parse_unary(parser *ps, bool live)
{
    if (++ps->depth > MAX_DEPTH) {
        fail(ps, "the expression nests deeper than %s levels", "200", 3);
        return 0;
    }
    int64_t v;
    if (accept(ps, "-")) {
        v = parse_unary(ps, live);
        v = v == INT64_MIN ? overflow(ps, live) : -v;
    } else if (accept(ps, "+")) {
        v = parse_unary(ps, live);
    } else if (accept(ps, "!")) {
        v = !parse_unary(ps, live);
    } else {
        v = parse_primary(ps, live);
    }
    ps->depth--;
    return v;
}

static int64_t parse_mul(parser *ps, bool live)
{
    int64_t v = parse_unary(ps, live);
    for (;;) {
        if (accept(ps, "*")) {
            int64_t r = parse_unary(ps, live);
            if (__builtin_mul_overflow(v, r, &v))
                v = overflow(ps, live);
        } else if (accept(ps, "/") || accept(ps, "%")) {
            char op = ps->p[-1];
            int64_t r = parse_unary(ps, live);
            if (!live) {
                v = 0;
            } else if (r == 0) {
                fail(ps, "%s by zero", op == '/' ? "division" : "remainder", op == '/' ? 8 : 9);
                return 0;
            } else if (v == INT64_MIN && r == -1) {
                v = overflow(ps, live);
            } else {
                v = op == '/' ? v / r : v % r;
            }
        } else {
            return v;
        }
    }
}

static int64_t parse_add(parser *ps, bool live)
{
    int64_t v = parse_mul(ps, live);
    for (;;) {
        if (accept(ps, "+")) {
            if (__builtin_add_overflow(v, parse_mul(ps, live), &v))
                v = overflow(ps, live);
        } else if (accept(ps, "-")) {
            if (__builtin_sub_overflow(v, parse_mul(ps, live), &v))
                v = overflow(ps, live);
        } else {
            return v;
        }
    }
}

static int64_t parse_rel(parser *ps, bool live)
{
    int64_t v = parse_add(ps, live);
    for (;;) {
        if (accept(ps, "<="))
            v = v <= parse_add(ps, live);
        else if (accept(ps, ">="))
            v = v >= parse_add(ps, live);
        else if (accept(ps, "<"))
            v = v < parse_add(ps, live);
        else if (accept(ps, ">"))
            v = v > parse_add(ps, live);
        else
            return v;
    }
}

static int64_t parse_eq(parser *ps, bool live)
{
    int64_t v = parse_rel(ps, live);
    for (;;) {
        if (accept(ps, "=="))
            v = v == parse_rel(ps, live);
        else if (accept(ps, "!="))
            v = v != parse_rel(ps, live);
        else
            return v;
    }
}

static int64_t parse_and(parser *ps, bool live)
{
    int64_t v = parse_eq(ps, live);
    while (accept(ps, "&&")) {
        bool need = live && v;
        int64_t r = parse_eq(ps, need);
        v = live ? (v && r) : 0;
    }
    return v;
}

static int64_t parse_or(parser *ps, bool live)
{
    int64_t v = parse_and(ps, live);
    while (accept(ps, "||")) {
        bool need = live && !v;
        int64_t r = parse_and(ps, need);
        v = live ? (v || r) : 0;
    }
    return v;
}

static int64_t parse_cond(parser *ps, bool live)
{
    if (++ps->depth > MAX_DEPTH) {
        fail(ps, "the expression nests deeper than %s levels", "200", 3);
        return 0;
    }
    int64_t c = parse_or(ps, live), v = c;
    if (accept(ps, "?")) {
        int64_t a = parse_cond(ps, live && c);
        expect(ps, ":");
        int64_t b = parse_cond(ps, live && !c);
        v = c ? a : b;
    }
    ps->depth--;
    return v;
}

int expr_eval(const char *src, expr_lookup_fn lookup, void *ctx, int64_t *out, char *errbuf,
              size_t errlen)
{
    char dummy[8];
    parser ps = {src, src, lookup, ctx, errbuf ? errbuf : dummy, errbuf ? errlen : sizeof dummy, false, 0};
    int64_t v = parse_cond(&ps, true);
    skip_ws(&ps);
    if (!ps.failed && *ps.p != '\0')
        fail(&ps, "unexpected '%s'", ps.p, 1);
    if (ps.failed)
        return -1;
    *out = v;
    return 0;
}

void expr_idents(const char *src, expr_ident_fn fn, void *ctx)
{
    const char *p = src;
    while (*p) {
        if (isalpha((unsigned char)*p) || *p == '_') {
            const char *s = p;
            while (isalnum((unsigned char)*p) || *p == '_')
                p++;
            const char *q = p;
            while (isspace((unsigned char)*q))
                q++;
            if (*q != '(')
                fn(ctx, s, (size_t)(p - s));
        } else if (isdigit((unsigned char)*p)) {
            while (isalnum((unsigned char)*p))
                p++;
        } else {
            p++;
        }
    }
}

/* ---- compiled form: the same grammar into a tree, evaluated without parsing ----------------- */

enum { N_NUM, N_ID, N_NEG, N_NOT, N_MUL, N_DIV, N_MOD, N_ADD, N_SUB, N_LE, N_GE, N_LT, N_GT, N_EQ, N_NE, N_AND, N_OR,
       N_COND, N_CDIV, N_RUP, N_MIN, N_MAX, N_LOG2, N_POW2 };

typedef struct {
    int op;
    int a, b, c;      /* operands: node indexes, -1 when none */
    int64_t v;        /* N_NUM */
    const char *name; /* N_ID: into the program's copy of the source */
    size_t len;
} enode;

struct expr_prog {
    char *src;
    enode *n;
    size_t nn, cap;
    int root;
};

typedef struct {
    expr_prog *pr;
    const char *p;
    bool failed;
    bool nomem; /* failed for want of host memory, not of syntax */
    int depth;
} compiler;

static int c_cond(compiler *c);

static int node(compiler *c, int op, int a, int b, int x)
{
    if (c->pr->nn == c->pr->cap) {
        /* cap grows only with the array: compiling goes on after a failure (c->failed) */
        size_t cap = c->pr->cap ? 2 * c->pr->cap : 16;
        enode *n = try_realloc(c->pr->n, cap * sizeof *n);
        if (!n) {
            c->failed = c->nomem = true;
            return -1;
        }
        c->pr->n = n;
        c->pr->cap = cap;
    }
    c->pr->n[c->pr->nn] = (enode){op, a, b, x, 0, NULL, 0};
    return (int)c->pr->nn++;
}

/* accept() on the compiler's position (the interpreter's rules for "<" against "<=" and so on). */
static bool c_accept(compiler *c, const char *tok)
{
    parser ps = {c->p, c->p, NULL, NULL, NULL, 0, false, 0};
    if (!accept(&ps, tok))
        return false;
    c->p = ps.p;
    return true;
}

static void c_ws(compiler *c)
{
    while (isspace((unsigned char)*c->p))
        c->p++;
}

static int c_primary(compiler *c)
{
    c_ws(c);
    if (c->failed)
        return -1;
    if (c_accept(c, "(")) {
        int v = c_cond(c);
        if (!c_accept(c, ")"))
            c->failed = true;
        return v;
    }
    if (isdigit((unsigned char)*c->p)) {
        int64_t v = 0;
        while (isdigit((unsigned char)*c->p)) {
            if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *c->p - '0', &v)) {
                c->failed = true;
                return -1;
            }
            c->p++;
        }
        int i = node(c, N_NUM, -1, -1, -1);
        if (i >= 0)
            c->pr->n[i].v = v;
        return i;
    }
    if (isalpha((unsigned char)*c->p) || *c->p == '_') {
        const char *name = c->p;
        while (isalnum((unsigned char)*c->p) || *c->p == '_')
            c->p++;
        size_t len = (size_t)(c->p - name);
        c_ws(c);
        if (*c->p == '(') {
            static const char *fns[] = {"cdiv", "rup", "min", "max", "log2", "pow2"};
            static const int ops[] = {N_CDIV, N_RUP, N_MIN, N_MAX, N_LOG2, N_POW2};
            int fi = -1;
            for (int i = 0; i < 6; i++)
                if (strlen(fns[i]) == len && strncmp(fns[i], name, len) == 0)
                    fi = i;
            if (fi < 0) {
                c->failed = true;
                return -1;
            }
            c->p++;
            int a = c_cond(c), b = -1;
            if (fi < 4) {
                if (!c_accept(c, ","))
                    c->failed = true;
                b = c_cond(c);
            }
            if (!c_accept(c, ")"))
                c->failed = true;
            return node(c, ops[fi], a, b, -1);
        }
        int i = node(c, N_ID, -1, -1, -1);
        if (i >= 0) {
            c->pr->n[i].name = name;
            c->pr->n[i].len = len;
        }
        return i;
    }
    c->failed = true;
    return -1;
}

static int c_unary(compiler *c)
{
    if (++c->depth > MAX_DEPTH) {
        c->failed = true;
        return -1;
    }
    int v;
    if (c_accept(c, "-"))
        v = node(c, N_NEG, c_unary(c), -1, -1);
    else if (c_accept(c, "+"))
        v = c_unary(c);
    else if (c_accept(c, "!"))
        v = node(c, N_NOT, c_unary(c), -1, -1);
    else
        v = c_primary(c);
    c->depth--;
    return v;
}

/* One left-associative level: toks[i] makes ops[i] over operands of the next level. */
static int c_level(compiler *c, int (*next)(compiler *), const char *const *toks, const int *ops, int n)
{
    int v = next(c);
    for (;;) {
        int i = 0;
        while (i < n && !c_accept(c, toks[i]))
            i++;
        if (i == n || c->failed)
            return v;
        v = node(c, ops[i], v, next(c), -1);
    }
}

static int c_mul(compiler *c)
{
    static const char *const t[] = {"*", "/", "%"};
    static const int o[] = {N_MUL, N_DIV, N_MOD};
    return c_level(c, c_unary, t, o, 3);
}
static int c_add(compiler *c)
{
    static const char *const t[] = {"+", "-"};
    static const int o[] = {N_ADD, N_SUB};
    return c_level(c, c_mul, t, o, 2);
}
static int c_rel(compiler *c)
{
    static const char *const t[] = {"<=", ">=", "<", ">"};
    static const int o[] = {N_LE, N_GE, N_LT, N_GT};
    return c_level(c, c_add, t, o, 4);
}
static int c_eq(compiler *c)
{
    static const char *const t[] = {"==", "!="};
    static const int o[] = {N_EQ, N_NE};
    return c_level(c, c_rel, t, o, 2);
}
static int c_and(compiler *c)
{
    static const char *const t[] = {"&&"};
    static const int o[] = {N_AND};
    return c_level(c, c_eq, t, o, 1);
}
static int c_or(compiler *c)
{
    static const char *const t[] = {"||"};
    static const int o[] = {N_OR};
    return c_level(c, c_and, t, o, 1);
}

static int c_cond(compiler *c)
{
    if (++c->depth > MAX_DEPTH) {
        c->failed = true;
        return -1;
    }
    int v = c_or(c);
    if (c_accept(c, "?")) {
        int a = c_cond(c);
        if (!c_accept(c, ":"))
            c->failed = true;
        int b = c_cond(c);
        v = node(c, N_COND, v, a, b);
    }
    c->depth--;
    return v;
}

void expr_prog_free(expr_prog *p)
{
    if (!p)
        return;
    free(p->src);
    free(p->n);
    free(p);
}

expr_prog *expr_compile(const char *src, bool *nomem)
{
    *nomem = false;
    expr_prog *pr = try_calloc(1, sizeof *pr);
    size_t len = strlen(src);
    if (!pr || !(pr->src = try_malloc(len + 1))) {
        free(pr);
        *nomem = true;
        return NULL;
    }
    memcpy(pr->src, src, len + 1);
    compiler c = {pr, pr->src, false, false, 0};
    pr->root = c_cond(&c);
    c_ws(&c);
    if (c.failed || *c.p != '\0' || pr->root < 0) {
        *nomem = c.nomem;
        expr_prog_free(pr);
        return NULL;
    }
    return pr;
}

typedef struct {
    const expr_prog *pr;
    expr_lookup_fn lookup;
    void *ctx;
    bool failed;
} runner;

/* Mirrors the interpreter: untaken branches still look names up, and only taken ones fail on
 * arithmetic. Any failure stops the run (the interpreter then gives the message). */
static int64_t run(runner *r, int i, bool live)
{
    const enode *e = &r->pr->n[i];
    int64_t a, b, v;
    switch (e->op) {
    case N_NUM:
        return e->v;
    case N_ID:
        if (!r->lookup || !r->lookup(r->ctx, e->name, e->len, &v))
            r->failed = true;
        return r->failed ? 0 : v;
    case N_NEG:
        a = run(r, e->a, live);
        if (a == INT64_MIN) {
            r->failed = r->failed || live;
            return 0;
        }
        return -a;
    case N_NOT:
        return !run(r, e->a, live);
    case N_AND:
        a = run(r, e->a, live);
        b = run(r, e->b, live && a);
        return live ? (a && b) : 0;
    case N_OR:
        a = run(r, e->a, live);
        b = run(r, e->b, live && !a);
        return live ? (a || b) : 0;
    case N_COND:
        v = run(r, e->a, live);
        a = run(r, e->b, live && v);
        b = run(r, e->c, live && !v);
        return v ? a : b;
    default:
        break;
    }
    a = run(r, e->a, live);
    b = e->b >= 0 ? run(r, e->b, live) : 0;
    switch (e->op) {
    case N_MUL:
        if (__builtin_mul_overflow(a, b, &v)) {
            r->failed = r->failed || live;
            return 0;
        }
        return v;
    case N_DIV:
    case N_MOD:
        if (!live)
            return 0;
        if (b == 0 || (a == INT64_MIN && b == -1)) {
            r->failed = true;
            return 0;
        }
        return e->op == N_DIV ? a / b : a % b;
    case N_ADD:
    case N_SUB:
        if (e->op == N_ADD ? __builtin_add_overflow(a, b, &v) : __builtin_sub_overflow(a, b, &v)) {
            r->failed = r->failed || live;
            return 0;
        }
        return v;
    case N_LE: return a <= b;
    case N_GE: return a >= b;
    case N_LT: return a < b;
    case N_GT: return a > b;
    case N_EQ: return a == b;
    case N_NE: return a != b;
    case N_MIN: return live ? (a < b ? a : b) : 0;
    case N_MAX: return live ? (a > b ? a : b) : 0;
    case N_POW2: return live ? a > 0 && (a & (a - 1)) == 0 : 0;
    case N_LOG2:
        if (!live)
            return 0;
        if (a <= 0 || (a & (a - 1)) != 0) {
            r->failed = true;
            return 0;
        }
        for (v = 0; a > 1; a >>= 1)
            v++;
        return v;
    case N_CDIV:
    case N_RUP: {
        if (!live)
            return 0;
        if (b <= 0) {
            r->failed = true;
            return 0;
        }
        int64_t q = a / b + (a % b > 0);
        if (e->op == N_CDIV)
            return q;
        if (__builtin_mul_overflow(q, b, &v)) {
            r->failed = true;
            return 0;
        }
        return v;
    }
    default:
        r->failed = true;
        return 0;
    }
}

int expr_run(const expr_prog *p, expr_lookup_fn lookup, void *ctx, int64_t *out)
{
    runner r = {p, lookup, ctx, false};
    int64_t v = run(&r, p->root, true);
    if (r.failed)
        return -1;
    *out = v;
    return 0;
}
