/* range.c — see range.h. */
#include "range.h"

#include "util.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool all_digits(const char *s, const char *end)
{
    if (s < end && (*s == '-' || *s == '+'))
        s++;
    if (s >= end)
        return false;
    for (; s < end; s++)
        if (!isdigit((unsigned char)*s))
            return false;
    return true;
}

static int parse_num(const char *s, const char *end, int64_t *v)
{
    char buf[32];
    size_t n = (size_t)(end - s);
    while (n && isspace((unsigned char)*s)) {
        s++;
        n--;
    }
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    if (n == 0 || n >= sizeof buf || !all_digits(s, s + n))
        return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return parse_i64(buf, v);
}

int range_push(int64_t **v, size_t *n, int64_t x, char *why, size_t whylen)
{
    if (*n >= RANGE_MAX_VALUES)
        return snprintf(why, whylen, "more than %d values", RANGE_MAX_VALUES), -1;
    if (*n % 64 == 0)
        *v = xrealloc(*v, (*n + 64) * sizeof **v);
    (*v)[(*n)++] = x;
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* A value listed twice, found by sorting a copy (lists can be long: no quadratic scan). */
int range_check_distinct(const int64_t *v, size_t n, char *why, size_t whylen)
{
    int64_t *c = xmalloc((n ? n : 1) * sizeof *c);
    memcpy(c, v, n * sizeof *c);
    qsort(c, n, sizeof *c, cmp_i64);
    int rc = 0;
    for (size_t i = 1; i < n && !rc; i++)
        if (c[i] == c[i - 1]) {
            snprintf(why, whylen, "%lld is listed twice", (long long)c[i]);
            rc = -1;
        }
    free(c);
    return rc;
}

int range_parse(const char *text, int64_t **values, size_t *n, char *why, size_t whylen)
{
    *values = NULL;
    *n = 0;
    const char *end = text + strlen(text);
    const char *c1 = strchr(text, ':');
    int rc = 0;
    if (c1) {
        const char *c2 = strchr(c1 + 1, ':');
        int64_t a, b, step = 1;
        bool geometric = false;
        if (parse_num(text, c1, &a) || parse_num(c1 + 1, c2 ? c2 : end, &b))
            return 1;
        if (c2) {
            const char *s = c2 + 1;
            while (isspace((unsigned char)*s))
                s++;
            geometric = *s == '*';
            if (parse_num(geometric ? s + 1 : s, end, &step))
                return 1;
        }
        if (a > b)
            return snprintf(why, whylen, "the range starts above its end (%lld > %lld)", (long long)a, (long long)b), -1;
        if (geometric && (step < 2 || a < 1))
            return snprintf(why, whylen, "a geometric range a:b:*f needs a >= 1 and f >= 2"), -1;
        if (!geometric && step < 1)
            return snprintf(why, whylen, "the step must be at least 1"), -1;
        /* Count first: a:b:step is known to hold (b - a) / step + 1 values (computed without
         * overflow), a geometric range at most 63. */
        if (!geometric && (uint64_t)b - (uint64_t)a >= (uint64_t)step * RANGE_MAX_VALUES)
            return snprintf(why, whylen, "more than %d values", RANGE_MAX_VALUES), -1;
        for (int64_t x = a; x <= b && !rc; x = geometric ? x * step : x + step) {
            rc = range_push(values, n, x, why, whylen);
            if ((geometric && x > INT64_MAX / step) || (!geometric && x > INT64_MAX - step))
                break;
        }
    } else {
        for (const char *s = text; s <= end && !rc;) {
            const char *comma = strchr(s, ',');
            const char *e = comma ? comma : end;
            int64_t x;
            if (parse_num(s, e, &x)) {
                free(*values);
                *values = NULL;
                *n = 0;
                return 1;
            }
            rc = range_push(values, n, x, why, whylen);
            s = e + 1;
        }
        if (!rc)
            rc = range_check_distinct(*values, *n, why, whylen);
    }
    if (rc) {
        free(*values);
        *values = NULL;
        *n = 0;
    }
    return rc;
}
