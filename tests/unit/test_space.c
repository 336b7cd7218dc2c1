/* test_space.c — tuning spaces: spaces from --set and from a space file over the toy template
 * (tests/templates/toy.cu), what each feasibility check removes (checked against the rules
 * recomputed here), derived dimensions and their order, neighbours, and --shard parts of
 * `engine tune --dry-run` (the shard lives in tune.c). Ranges: test_range.c. */
#include "helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <limits.h>
#include <sys/wait.h>

#include "space.h"
#include "template.h"
#include "util.h"

#define TOY "tests/configs/tune/toy.json"
#define SMEM_H100 232448

/* ---- helpers ---- */

static int load(space_t *s, const char *config, char **sets, size_t nsets, err_t *err)
{
    err_clear(err);
    int rc = space_load(s, config, sets, nsets, NULL, 90, false, err);
    if (rc)
        err_print(stderr, err);
    return rc;
}

/* A space that must fail to load, with `text` in the message. */
static void load_fails(const char *config, char **sets, size_t nsets, const char *text)
{
    space_t s;
    err_t err;
    err_clear(&err);
    int rc = space_load(&s, config, sets, nsets, NULL, 90, false, &err);
    if (rc == 0 || !strstr(err.text, text))
        fprintf(stderr, "expected an error with \"%s\", got rc %d: %s\n", text, rc, err.text);
    assert_int_not_equal(rc, 0);
    assert_int_equal(err.code, EXIT_INPUT);
    assert_non_null(strstr(err.text, text));
}

static int param(const space_t *s, const char *name)
{
    int p = template_param_index(&s->base.tpl, name);
    assert_true(p >= 0);
    return p;
}

/* ---- loading ---- */

static void test_load_from_sets(void **state)
{
    (void)state;
    use_repo_templates();
    char *sets[] = {"BX=8:64:*2", "BY=1,2,4", "UNROLL=4"};
    space_t s;
    err_t err;
    assert_int_equal(load(&s, TOY, sets, 3, &err), 0);
    assert_string_equal(s.base.name, "toy");
    assert_int_equal(s.ndims, 3);
    assert_int_equal(s.nfree, 3);
    assert_int_equal(space_size(&s), 4 * 3 * 1);
    assert_string_equal(s.dims[0].name, "BX");
    assert_int_equal(s.dims[0].param, param(&s, "BX"));
    assert_int_equal(s.dims[0].nvalues, 4);
    assert_int_equal(s.dims[2].values[0], 4);
    assert_non_null(strstr(s.dims[1].origin, "--set BY=1,2,4"));
    assert_null(s.path); /* a config, not a space file */
    space_free(&s);

    /* A later --set of the same parameter replaces the dimension. */
    char *again[] = {"BX=8,16", "BX=32,64,128"};
    assert_int_equal(load(&s, TOY, again, 2, &err), 0);
    assert_int_equal(s.ndims, 1);
    assert_int_equal(s.dims[0].nvalues, 3);
    assert_int_equal(s.dims[0].values[2], 128);
    space_free(&s);

    /* No --set: the base config alone, one point. */
    assert_int_equal(load(&s, TOY, NULL, 0, &err), 0);
    assert_int_equal(s.ndims, 0);
    assert_int_equal(space_size(&s), 1);
    space_free(&s);
}

static void test_load_errors(void **state)
{
    (void)state;
    use_repo_templates();
    load_fails(TOY, (char *[]){"FOO=1,2"}, 1, "template toy has no parameter \"FOO\" (it takes BX, BY, UNROLL, MODE)");
    load_fails(TOY, (char *[]){"BX=64:8"}, 1, "BX: the range starts above its end");
    load_fails(TOY, (char *[]){"BX=8,8"}, 1, "BX: 8 is listed twice");
    load_fails(TOY, (char *[]){"BX=1:9:0"}, 1, "BX: the step must be at least 1");
    load_fails(TOY, (char *[]){"BX=1+"}, 1, "is neither a range");
    load_fails(TOY, (char *[]){"BX=NOPE*2"}, 1, "is neither a range");
    /* A derived dimension may not mention itself, alone or beside others, nor go round in a cycle. */
    load_fails(TOY, (char *[]){"BX=8,16", "BY=BY*2"}, 2, "BY = BY*2 refers to itself");
    load_fails(TOY, (char *[]){"BX=8,16", "BY=BY*2", "UNROLL=BX/8"}, 3, "refers to itself");
    load_fails(TOY, (char *[]){"BX=BY*1", "BY=BX*1"}, 2, "in a cycle");
    load_fails("tests/no-such-space.json", NULL, 0, "cannot read config or space file");
    load_fails("tests/configs", NULL, 0, "not a directory");
}

/* ---- enumeration ---- */

/* A space file next to nothing: it names toy.json by absolute path. */
static char *toy_space_file(const char *space, const char *constraints)
{
    char abs[PATH_MAX];
    assert_non_null(realpath(TOY, abs));
    char *text = xasprintf("{\"config\": \"%s\", \"space\": %s, \"constraints\": %s, \"shapes\": [\"256x256x256\"]}", abs,
                           space, constraints);
    char *path = temp_config(text);
    free(text);
    assert_non_null(path);
    return path;
}

/* Every point of BX x BY x UNROLL (last fastest) classified by the checks recomputed here, in the
 * order space.h gives: the template's values, its constraints, the space's rule, the device. */
static const int64_t k_bx[] = {8, 16, 32, 64}, k_by[] = {1, 2, 4, 8, 16, 32}, k_unroll[] = {1, 2, 4, 8, 16};

static prune_kind expected(uint64_t idx, int *rule, int64_t *bx, int64_t *by, int64_t *unroll, int64_t big_m)
{
    *unroll = k_unroll[idx % 5];
    *by = k_by[(idx / 5) % 6];
    *bx = k_bx[idx / 30];
    *rule = -1;
    if (*unroll == 16)
        return PRUNE_VALUE;
    if (*bx * *by > 1024)
        return *rule = 0, PRUNE_TEMPLATE;
    if (*bx * *by % 32 != 0)
        return *rule = 1, PRUNE_TEMPLATE;
    if (!(*bx >= *by))
        return *rule = 0, PRUNE_SPACE;
    if ((big_m + *by - 1) / *by > 65535) /* gridDim.y = cdiv(M, BY) */
        return PRUNE_DEVICE;
    return PRUNE_NONE;
}

static void test_enumerate_counts(void **state)
{
    (void)state;
    use_repo_templates();
    char *file = toy_space_file("{\"BX\": \"8:64:*2\", \"BY\": [1, 2, 4, 8, 16, 32], \"UNROLL\": \"1:16:*2\"}",
                                "[{\"rule\": \"BX >= BY\", \"why\": \"wide blocks\"}]");
    space_t s;
    err_t err;
    assert_int_equal(load(&s, file, NULL, 0, &err), 0);
    assert_string_equal(s.path, file);
    assert_int_equal(s.nrules, 1);
    assert_int_equal(s.nshapes, 1);
    assert_int_equal(s.shapes[0].m, 256);
    assert_int_equal(space_size(&s), 120);

    /* A small shape and one whose M needs 65536 blocks along y when BY = 1. */
    const int64_t big_m = 65536;
    shape_t shapes[2] = {{64, 64, 64}, {big_m, 64, 1}};
    space_device dev = {90, SMEM_H100};
    space_point *pts = NULL;
    size_t n = 0;
    space_counts c;
    err_clear(&err);
    assert_int_equal(space_enumerate(&s, &dev, shapes, 2, 1000, &pts, &n, &c, &err), 0);
    assert_int_equal(n, 120);
    assert_int_equal(c.total, 120);

    const int pu = param(&s, "UNROLL"), pbx = param(&s, "BX"), pby = param(&s, "BY");
    uint64_t want_value = 0, want_tpl[2] = {0, 0}, want_space = 0, want_device = 0, want_feasible = 0;
    for (size_t i = 0; i < n; i++) {
        int rule;
        int64_t bx, by, unroll;
        prune_kind k = expected(i, &rule, &bx, &by, &unroll, big_m);
        const space_point *p = &pts[i];
        assert_int_equal(p->index, i);
        if (p->pruned != k)
            fprintf(stderr, "point %zu (BX=%lld BY=%lld UNROLL=%lld): pruned %d, expected %d (%s)\n", i, (long long)bx,
                    (long long)by, (long long)unroll, p->pruned, k, p->reason ? p->reason : "");
        assert_int_equal(p->pruned, k);
        switch (k) {
        case PRUNE_NONE:
            want_feasible++;
            assert_null(p->reason);
            assert_non_null(p->values);
            assert_int_equal(p->values[pbx], bx);
            assert_int_equal(p->values[pby], by);
            assert_int_equal(p->values[pu], unroll);
            assert_int_equal(p->values[param(&s, "MODE")], 0); /* left out: the base config's */
            break;
        case PRUNE_VALUE:
            want_value++;
            assert_int_equal(p->rule, pu);
            assert_non_null(strstr(p->reason, "UNROLL = 16 is outside what the template allows"));
            break;
        case PRUNE_TEMPLATE:
            want_tpl[rule]++;
            assert_int_equal(p->rule, rule);
            assert_non_null(strstr(p->reason, rule == 0 ? "BX * BY <= 1024" : "BX * BY % 32 == 0"));
            break;
        case PRUNE_SPACE:
            want_space++;
            assert_int_equal(p->rule, 0);
            assert_string_equal(p->reason, "space constraint \"BX >= BY\": wide blocks");
            break;
        case PRUNE_DEVICE:
            want_device++;
            assert_non_null(strstr(p->reason, "65535"));
            break;
        default:
            fail();
        }
        if (k != PRUNE_NONE)
            assert_null(p->values);
        /* Removed points keep no values; space_values recomputes them. */
        int64_t vals[8];
        assert_int_equal(space_values(&s, i, vals), 0);
        assert_int_equal(vals[pbx], bx);
        assert_int_equal(vals[pby], by);
        assert_int_equal(vals[pu], unroll);
    }
    /* Every check removed something, so each count is exercised. */
    assert_true(want_value && want_tpl[0] && want_tpl[1] && want_space && want_device && want_feasible);
    assert_int_equal(c.by_value[pu], want_value);
    assert_int_equal(c.by_value[pbx] + c.by_value[pby], 0);
    assert_int_equal(c.by_template[0], want_tpl[0]);
    assert_int_equal(c.by_template[1], want_tpl[1]);
    assert_int_equal(c.by_space[0], want_space);
    assert_int_equal(c.by_device, want_device);
    assert_int_equal(c.by_expr, 0);
    assert_int_equal(c.feasible, want_feasible);
    assert_int_equal(want_value + want_tpl[0] + want_tpl[1] + want_space + want_device + want_feasible, 120);

    /* The dry-run summary says the same. */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    space_print_counts(f, &s, &c);
    fclose(f);
    assert_non_null(strstr(buf, "space of toy (template toy, f32): 120 points = BX[4] x BY[6] x UNROLL[5]\n"));
    char *line = xasprintf("%10llu removed: UNROLL outside its allowed values", (unsigned long long)want_value);
    assert_non_null(strstr(buf, line));
    free(line);
    line = xasprintf("%10llu removed by space constraint BX >= BY: wide blocks", (unsigned long long)want_space);
    assert_non_null(strstr(buf, line));
    free(line);
    line = xasprintf("%10llu removed by device limits", (unsigned long long)want_device);
    assert_non_null(strstr(buf, line));
    free(line);
    line = xasprintf("%10llu feasible\n", (unsigned long long)want_feasible);
    assert_non_null(strstr(buf, line));
    free(line);
    free(buf);

    /* The point string: every parameter, in template order. */
    char *str = space_point_string(&s, pts[n - 1].values ? pts[n - 1].values : s.base.values);
    assert_non_null(strstr(str, "BX="));
    assert_non_null(strstr(str, " MODE=0"));
    free(str);

    space_points_free(pts, n);
    space_counts_free(&c);

    /* Without the big shape nothing is a device's problem. */
    err_clear(&err);
    assert_int_equal(space_enumerate(&s, &dev, shapes, 1, 1000, &pts, &n, &c, &err), 0);
    assert_int_equal(c.by_device, 0);
    assert_int_equal(c.feasible, want_feasible + want_device);
    space_points_free(pts, n);
    space_counts_free(&c);

    /* More points than max_points: refused, nothing allocated. */
    err_clear(&err);
    assert_int_not_equal(space_enumerate(&s, &dev, shapes, 1, 119, &pts, &n, &c, &err), 0);
    assert_int_equal(err.code, EXIT_INPUT);
    assert_non_null(strstr(err.text, "the space has 120 points; at most 119"));
    assert_null(pts);
    assert_int_equal(n, 0);

    space_free(&s);
    unlink(file);
    free(file);
}

static void test_space_rule_errors(void **state)
{
    (void)state;
    use_repo_templates();
    /* A rule that names nothing known is the user's typo: the enumeration stops with it. */
    char *file = toy_space_file("{\"BX\": [32, 64]}", "[{\"rule\": \"BX >= NOPE\"}]");
    space_t s;
    err_t err;
    assert_int_equal(load(&s, file, NULL, 0, &err), 0);
    space_device dev = {90, SMEM_H100};
    shape_t shape = {64, 64, 64};
    space_point *pts;
    size_t n;
    space_counts c;
    err_clear(&err);
    assert_int_not_equal(space_enumerate(&s, &dev, &shape, 1, 100, &pts, &n, &c, &err), 0);
    assert_int_equal(err.code, EXIT_INPUT);
    assert_non_null(strstr(err.text, "rule \"BX >= NOPE\""));
    assert_non_null(strstr(err.source, "constraints[0]"));
    space_free(&s);
    unlink(file);
    free(file);

    /* A rule that divides by zero for some values removes those points only. */
    file = toy_space_file("{\"BX\": [32, 64], \"BY\": [1, 2]}", "[{\"rule\": \"64 / (BX - 32) >= 1\"}]");
    assert_int_equal(load(&s, file, NULL, 0, &err), 0);
    err_clear(&err);
    assert_int_equal(space_enumerate(&s, &dev, &shape, 1, 100, &pts, &n, &c, &err), 0);
    assert_int_equal(c.by_space[0], 2); /* BX = 32 */
    assert_int_equal(c.feasible, 2);
    assert_int_equal(pts[0].pruned, PRUNE_SPACE);
    assert_int_equal(pts[2].pruned, PRUNE_NONE);
    space_points_free(pts, n);
    space_counts_free(&c);
    space_free(&s);
    unlink(file);
    free(file);
}

static void enumerate_ok(const space_t *s, space_point **pts, size_t *n, space_counts *c)
{
    space_device dev = {90, SMEM_H100};
    shape_t shape = {256, 256, 256};
    err_t err;
    err_clear(&err);
    int rc = space_enumerate(s, &dev, &shape, 1, 100000, pts, n, c, &err);
    if (rc)
        err_print(stderr, &err);
    assert_int_equal(rc, 0);
}

static void test_derived(void **state)
{
    (void)state;
    use_repo_templates();
    space_t s;
    err_t err;
    space_point *pts;
    size_t n;
    space_counts c;

    /* BY follows BX: 256 threads a block, and only BX is enumerated. */
    assert_int_equal(load(&s, TOY, (char *[]){"BY=256/BX", "BX=32,64,128"}, 2, &err), 0);
    assert_int_equal(s.nfree, 1);
    assert_int_equal(s.ndims, 2);
    assert_string_equal(s.dims[0].name, "BX"); /* free dimensions first */
    assert_string_equal(s.dims[1].expr, "256/BX");
    assert_null(s.dims[1].values);
    assert_int_equal(space_size(&s), 3);
    enumerate_ok(&s, &pts, &n, &c);
    assert_int_equal(n, 3);
    assert_int_equal(c.feasible, 3);
    const int pbx = param(&s, "BX"), pby = param(&s, "BY"), pu = param(&s, "UNROLL");
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(pts[i].values[pbx], 32 << i);
        assert_int_equal(pts[i].values[pby], 256 / (32 << i));
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    space_print_counts(f, &s, &c);
    fclose(f);
    assert_non_null(strstr(buf, "3 points = BX[3]\n  derived: BY = 256/BX\n"));
    free(buf);
    space_points_free(pts, n);
    space_counts_free(&c);
    space_free(&s);

    /* A derived dimension of a derived one, given first: evaluated after what it mentions. */
    assert_int_equal(load(&s, TOY, (char *[]){"UNROLL=BY/4", "BY=128/BX", "BX=32,64"}, 3, &err), 0);
    assert_string_equal(s.dims[1].name, "BY");
    assert_string_equal(s.dims[2].name, "UNROLL");
    enumerate_ok(&s, &pts, &n, &c);
    assert_int_equal(n, 2);
    assert_int_equal(pts[0].pruned, PRUNE_NONE); /* BX 32, BY 4, UNROLL 1 */
    assert_int_equal(pts[0].values[pby], 4);
    assert_int_equal(pts[0].values[pu], 1);
    assert_int_equal(pts[1].pruned, PRUNE_VALUE); /* BX 64, BY 2, UNROLL 0: not an allowed value */
    assert_int_equal(pts[1].rule, pu);
    assert_int_equal(c.by_value[pu], 1);
    space_points_free(pts, n);
    space_counts_free(&c);
    space_free(&s);

    /* An expression that cannot be evaluated at a point removes that point (PRUNE_EXPR). */
    assert_int_equal(load(&s, TOY, (char *[]){"BX=32,64", "BY=64/(BX-32)"}, 2, &err), 0);
    enumerate_ok(&s, &pts, &n, &c);
    assert_int_equal(c.by_expr, 1);
    assert_int_equal(c.feasible, 1);
    assert_int_equal(pts[0].pruned, PRUNE_EXPR);
    assert_int_equal(pts[0].rule, 1); /* the dimension's index */
    assert_non_null(strstr(pts[0].reason, "BY = 64/(BX-32) cannot be evaluated"));
    assert_int_equal(pts[1].pruned, PRUNE_NONE);
    assert_int_equal(pts[1].values[pby], 2);
    int64_t vals[8];
    assert_int_equal(space_values(&s, 0, vals), -1);
    assert_int_equal(space_values(&s, 1, vals), 0);
    assert_int_equal(vals[pby], 2);
    space_points_free(pts, n);
    space_counts_free(&c);
    space_free(&s);
}

/* ---- neighbours ---- */

static void test_neighbours(void **state)
{
    (void)state;
    use_repo_templates();
    space_t s;
    err_t err;
    /* 3 x 4: index = bx * 4 + by. */
    assert_int_equal(load(&s, TOY, (char *[]){"BX=32,64,128", "BY=1,2,4,8"}, 2, &err), 0);
    assert_int_equal(space_size(&s), 12);
    uint64_t out[8];
    /* A corner has two. */
    size_t n = space_neighbours(&s, 0, out, 8);
    assert_int_equal(n, 2);
    assert_true((out[0] == 1 && out[1] == 4) || (out[0] == 4 && out[1] == 1));
    /* The opposite corner. */
    n = space_neighbours(&s, 11, out, 8);
    assert_int_equal(n, 2);
    assert_true((out[0] == 10 && out[1] == 7) || (out[0] == 7 && out[1] == 10));
    /* An inner point has four, each one step away in exactly one dimension. */
    n = space_neighbours(&s, 5, out, 8);
    assert_int_equal(n, 4);
    int64_t here[8], there[8];
    assert_int_equal(space_values(&s, 5, here), 0);
    const int pbx = param(&s, "BX"), pby = param(&s, "BY");
    bool seen[12] = {false};
    for (size_t i = 0; i < n; i++) {
        assert_true(out[i] < 12);
        assert_false(seen[out[i]]);
        seen[out[i]] = true;
        assert_int_equal(space_values(&s, out[i], there), 0);
        int dx = 0, dy = 0;
        for (int k = 0; k < 3; k++)
            dx += (s.dims[0].values[k] == there[pbx]) * k - (s.dims[0].values[k] == here[pbx]) * k;
        for (int k = 0; k < 4; k++)
            dy += (s.dims[1].values[k] == there[pby]) * k - (s.dims[1].values[k] == here[pby]) * k;
        assert_int_equal(abs(dx) + abs(dy), 1);
    }
    assert_true(seen[1] && seen[9] && seen[4] && seen[6]);
    /* max caps what is written. */
    out[1] = 777;
    assert_int_equal(space_neighbours(&s, 5, out, 1), 1);
    assert_int_equal(out[1], 777);
    space_free(&s);

    /* A single-valued dimension gives no neighbours along it. */
    assert_int_equal(load(&s, TOY, (char *[]){"BX=32", "BY=1,2"}, 2, &err), 0);
    n = space_neighbours(&s, 0, out, 8);
    assert_int_equal(n, 1);
    assert_int_equal(out[0], 1);
    space_free(&s);
}

/* ---- shards ---- */

/* The feasible points `engine tune --dry-run --format jsonl` lists: their "point" numbers, as a
 * bitmap over 0..max-1. Returns how many lines there were. */
static size_t dry_run_points(const char *shard, bool *points, size_t max)
{
    char *exe_dir = path_dirname(paths_exe()); /* build/tests */
    char *cmd = xasprintf("%s/../engine tune " TOY " --arch sm_90 --dry-run --format jsonl --set BX=8:64:*2 "
                          "--set BY=1:32:*2 --set UNROLL=1,2,4 %s%s",
                          exe_dir, shard ? "--shard " : "", shard ? shard : "");
    free(exe_dir);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char line[1024];
    size_t n = 0;
    while (fgets(line, sizeof line, p)) {
        json_error_t je;
        json_t *j = json_loads(line, 0, &je);
        assert_non_null(j);
        json_int_t pt = json_integer_value(json_object_get(j, "point"));
        assert_true(pt >= 0 && (size_t)pt < max);
        assert_false(points[pt]); /* once per run */
        points[pt] = true;
        json_decref(j);
        n++;
    }
    int st = pclose(p);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fprintf(stderr, "%s: status %d\n", cmd, st);
    free(cmd);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    return n;
}

static void test_shards(void **state)
{
    (void)state;
    use_repo_templates();
    enum { MAX = 256, N = 3 };
    bool all[MAX] = {false}, shard[N][MAX];
    memset(shard, 0, sizeof shard);
    size_t total = dry_run_points(NULL, all, MAX);
    assert_true(total > N);
    size_t sum = 0;
    for (int i = 0; i < N; i++) {
        char arg[16];
        snprintf(arg, sizeof arg, "%d/%d", i, N);
        size_t k = dry_run_points(arg, shard[i], MAX);
        /* Balanced: the shards' sizes differ by at most one. */
        assert_true(k >= total / N && k <= (total + N - 1) / N);
        sum += k;
    }
    assert_int_equal(sum, total);
    for (int p = 0; p < MAX; p++) {
        int in = 0;
        for (int i = 0; i < N; i++)
            in += shard[i][p];
        /* Disjoint, and covering exactly the unsharded list. */
        assert_int_equal(in, all[p] ? 1 : 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_from_sets),
        cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_enumerate_counts),
        cmocka_unit_test(test_space_rule_errors),
        cmocka_unit_test(test_derived),
        cmocka_unit_test(test_neighbours),
        cmocka_unit_test(test_shards),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
