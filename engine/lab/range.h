/* range.h — the values a tuning dimension takes, written as a range: "a:b:step", "a:b:*f",
 * "v1,v2,..." or one integer (tune's --set KEY=RANGE, a space file's strings, bench's --sizes). */
#ifndef ENGINE_RANGE_H
#define ENGINE_RANGE_H

#include <stddef.h>
#include <stdint.h>

#define RANGE_MAX_VALUES 100000

/* Parse a range: "a:b:step" (a, a+step, ... up to b), "a:b:*f" (a, a*f, a*f^2, ... up to b),
 * "v1,v2,..." or a single integer. Returns 0 with a newly allocated array, 1 when text is not
 * written as a range at all (it may be an expression), -1 with a one-line reason in why when it
 * is a broken range (step 0, a > b, factor < 2, too many values, duplicates). */
int range_parse(const char *text, int64_t **values, size_t *n, char *why, size_t whylen);

/* Append x to the list v[0..n) (grown here): 0, or -1 with "more than RANGE_MAX_VALUES values" in
 * why when the list is full. */
int range_push(int64_t **v, size_t *n, int64_t x, char *why, size_t whylen);
/* 0 when the values of v[0..n) are distinct, else -1 with "X is listed twice" in why. */
int range_check_distinct(const int64_t *v, size_t n, char *why, size_t whylen);

#endif
