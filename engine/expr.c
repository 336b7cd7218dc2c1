/* expr.c — recursive-descent evaluator for expr.h's integer language. */
#include "expr.h"

#include <ctype.h>
#include <stdio.h>
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
    size_t n = strlen(tok);
    if (strncmp(ps->p, tok, n) != 0)
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
