/* expr.h — the small integer expression language that templates use for constraints, shape
 * switches, grid and block sizes, shared memory and traffic estimates.
 *
 * Values are 64-bit signed integers. Grammar, loosest binding first:
 *   cond ? a : b     ||     &&     == !=     < <= > >=     + -     * / %     unary - ! +
 * Primaries: decimal literals, identifiers (looked up through a callback), parentheses, and the
 * functions cdiv(a,b) (ceiling division), rup(a,m) (round a up to a multiple of m), min(a,b),
 * max(a,b), log2(a) (exact powers of two only) and pow2(a) (a is a power of two).
 * `&&`, `||` and `?:` evaluate lazily, so `S > 1 ? N / S : 0` never divides by zero. Identifiers
 * in an untaken branch are still looked up, so a typo in a template is always reported. */
#ifndef ENGINE_EXPR_H
#define ENGINE_EXPR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Look up name[0..len) and store its value; return false when the name is unknown. */
typedef bool (*expr_lookup_fn)(void *ctx, const char *name, size_t len, int64_t *value);

/* Evaluate src. Returns 0 and sets *out, or returns -1 with a one-line reason in errbuf. */
int expr_eval(const char *src, expr_lookup_fn lookup, void *ctx, int64_t *out, char *errbuf,
              size_t errlen);

/* The same expression parsed once and evaluated many times (template plans evaluate the same
 * few dozen expressions at every shape the selection model weighs). expr_compile returns NULL when
 * src does not parse (or nests too deep), *nomem false, or when the host had no memory for the
 * program (try_* memory), *nomem true; expr_run gives exactly expr_eval's value, and returns -1
 * without a message on any error (an unknown name, division by zero, overflow in a taken branch):
 * the caller then runs expr_eval for the message, so errors read the same either way. */
typedef struct expr_prog expr_prog;
expr_prog *expr_compile(const char *src, bool *nomem);
int expr_run(const expr_prog *p, expr_lookup_fn lookup, void *ctx, int64_t *out);
void expr_prog_free(expr_prog *p);

/* Call fn once for each identifier in src (functions excluded), in order of appearance, with
 * duplicates. Used to name the parameters a broken rule mentions. */
typedef void (*expr_ident_fn)(void *ctx, const char *name, size_t len);
void expr_idents(const char *src, expr_ident_fn fn, void *ctx);

#endif
