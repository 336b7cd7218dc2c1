/* layout.c — see layout.h. */
#include "layout.h"

#include <stdio.h>
#include <string.h>

static int64_t max1(int64_t v) { return v > 1 ? v : 1; }

void layout_packed(layout_t *l, int ta, int tb, int64_t M, int64_t N, int64_t K, int64_t batch)
{
    memset(l, 0, sizeof *l);
    l->ta = ta;
    l->tb = tb;
    /* BLAS's rule: at least 1, also where a row is empty (K = 0). */
    l->lda = max1(layout_a_cols(l, M, K));
    l->ldb = max1(layout_b_cols(l, N, K));
    l->ldc = max1(N);
    l->batch = batch;
    l->sa = M * K;
    l->sb = K * N;
    l->sc = M * N;
}

int layout_with(layout_t *l, int ta, int tb, int64_t M, int64_t N, int64_t K, int64_t batch, const int64_t ld[3],
                const bool plus[3], const int64_t stride[3], err_t *err)
{
    layout_packed(l, ta, tb, M, N, K, batch > 0 ? batch : 1);
    int64_t *lds[3] = {&l->lda, &l->ldb, &l->ldc}, *st[3] = {&l->sa, &l->sb, &l->sc};
    int64_t rows[3] = {layout_a_rows(l, M, K), layout_b_rows(l, N, K), M};
    for (int i = 0; i < 3; i++) {
        if (ld[i])
            *lds[i] = plus[i] ? *lds[i] + ld[i] : ld[i];
        /* Products packed one after the other, with the rows as far apart as ld says. */
        *st[i] = stride[i] >= 0 ? stride[i] : rows[i] * *lds[i];
    }
    return layout_check(l, M, N, K, err);
}

int layout_is_packed(const layout_t *l, int64_t M, int64_t N, int64_t K)
{
    layout_t p;
    layout_packed(&p, l->ta, l->tb, M, N, K, l->batch);
    /* A single product's strides are never used. */
    return p.lda == l->lda && p.ldb == l->ldb && p.ldc == l->ldc &&
           (l->batch == 1 || (p.sa == l->sa && p.sb == l->sb && p.sc == l->sc));
}

static int check_ld(const char *field, int64_t ld, int64_t len, const char *what, err_t *err)
{
    if (ld < max1(len))
        return err_set(err, ERR_INPUT, "layout", 0, 0,
                       "%s: %lld is below the row length of %s as stored (%lld): rows would overlap", field,
                       (long long)ld, what, (long long)max1(len));
    if (ld >= LAYOUT_MAX_LD)
        return err_set(err, ERR_INPUT, "layout", 0, 0, "%s: %lld is not below 2^31 (the kernels take 32-bit leading dimensions)",
                       field, (long long)ld);
    return 0;
}

int layout_check(const layout_t *l, int64_t M, int64_t N, int64_t K, err_t *err)
{
    if (M < 0 || N < 0 || K < 0)
        return err_set(err, ERR_INPUT, "layout", 0, 0, "shape %lldx%lldx%lld: sizes must not be negative",
                       (long long)M, (long long)N, (long long)K);
    if ((l->ta != 0 && l->ta != 1) || (l->tb != 0 && l->tb != 1))
        return err_set(err, ERR_INPUT, "layout", 0, 0, "op: transposes are 0 (N) or 1 (T), not %d and %d", l->ta,
                       l->tb);
    if (check_ld("lda", l->lda, layout_a_cols(l, M, K), l->ta ? "A (K x M, op T)" : "A (M x K, op N)", err) ||
        check_ld("ldb", l->ldb, layout_b_cols(l, N, K), l->tb ? "B (N x K, op T)" : "B (K x N, op N)", err) ||
        check_ld("ldc", l->ldc, N, "C (M x N)", err))
        return -1;
    if (l->batch < 1)
        return err_set(err, ERR_INPUT, "layout", 0, 0, "batch: %lld is below 1", (long long)l->batch);
    if (l->batch == 1)
        return 0;
    if (l->sa < 0 || l->sb < 0)
        return err_set(err, ERR_INPUT, "layout", 0, 0, "%s: %lld is negative (0 repeats one matrix for every product)",
                       l->sa < 0 ? "stride-a" : "stride-b", (long long)(l->sa < 0 ? l->sa : l->sb));
    int64_t c_span = M && N ? (M - 1) * l->ldc + N : 0;
    if (l->sc < c_span)
        return err_set(err, ERR_INPUT, "layout", 0, 0,
                       "stride-c: %lld is below the span of one C ((M-1)*ldc + N = %lld): products would write over each other",
                       (long long)l->sc, (long long)c_span);
    return 0;
}

/* Elements from a batch's first element to one past its last. */
static int64_t span(int64_t rows, int64_t cols, int64_t ld, int64_t batch, int64_t stride)
{
    if (rows == 0 || cols == 0)
        return 0;
    return (batch - 1) * stride + (rows - 1) * ld + cols;
}

int64_t layout_span_a(const layout_t *l, int64_t M, int64_t K)
{
    return span(layout_a_rows(l, M, K), layout_a_cols(l, M, K), l->lda, l->batch, l->sa);
}

int64_t layout_span_b(const layout_t *l, int64_t N, int64_t K)
{
    return span(layout_b_rows(l, N, K), layout_b_cols(l, N, K), l->ldb, l->batch, l->sb);
}

int64_t layout_span_c(const layout_t *l, int64_t M, int64_t N) { return span(M, N, l->ldc, l->batch, l->sc); }

const char *layout_op_name(const layout_t *l)
{
    static const char *const names[4] = {"NN", "NT", "TN", "TT"};
    return names[(l->ta ? 2 : 0) + (l->tb ? 1 : 0)];
}

int layout_op_parse(const char *s, int *ta, int *tb)
{
    if (!s || strlen(s) != 2 || (s[0] != 'N' && s[0] != 'T') || (s[1] != 'N' && s[1] != 'T'))
        return -1;
    *ta = s[0] == 'T';
    *tb = s[1] == 'T';
    return 0;
}

int layout_align_of(uint64_t addr, size_t elem, int64_t ld, int64_t stride)
{
    int a = (int)(16 / elem);
    while (a > 1 && (addr % ((uint64_t)a * elem) != 0 || ld % a != 0 || stride % a != 0))
        a /= 2;
    return a;
}

void layout_align_ld(const layout_t *l, size_t elem, layout_align *al)
{
    /* A single product never adds its stride. */
    al->a = layout_align_of(0, elem, l->lda, l->batch > 1 ? l->sa : 0);
    al->b = layout_align_of(0, elem, l->ldb, l->batch > 1 ? l->sb : 0);
    al->c = layout_align_of(0, elem, l->ldc, l->batch > 1 ? l->sc : 0);
}

const char *layout_text(const layout_t *l, int64_t M, int64_t N, int64_t K, char *buf, size_t len)
{
    if (!l->ta && !l->tb && l->batch == 1 && layout_is_packed(l, M, N, K))
        return "";
    int n = snprintf(buf, len, " op %s lda=%lld ldb=%lld ldc=%lld", layout_op_name(l), (long long)l->lda,
                     (long long)l->ldb, (long long)l->ldc);
    if (l->batch > 1 && n > 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, " batch=%lld sa=%lld sb=%lld sc=%lld", (long long)l->batch,
                 (long long)l->sa, (long long)l->sb, (long long)l->sc);
    return buf;
}
