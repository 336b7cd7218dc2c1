/* test_wisdom.c — the best config per (device, arch, dtype, shape): strict reading with
 * file:line:column errors, lookup by level (device, arch, default) and by shape distance, and
 * recording winners into a device's file (create, replace if faster, keep if not, sorted, atomic). */
#include "helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <ftw.h>
#include <math.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "arch.h"
#include "util.h"
#include "wisdom.h"

/* A temporary directory per test, removed (with everything under it) afterwards. */
static char g_dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/engine-wisdom-XXXXXX");
    assert_non_null(mkdtemp(g_dir));
    return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int teardown(void **state)
{
    (void)state;
    nftw(g_dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

static char *in_dir(const char *name)
{
    return xasprintf("%s/%s", g_dir, name);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Write text as g_dir/name and load it into w; the test fails when it does not load. */
static void load_text(wisdom_t *w, const char *name, const char *text)
{
    char *p = in_dir(name);
    write_text(p, text);
    err_t err;
    err_clear(&err);
    int rc = wisdom_load_file(w, p, &err);
    if (rc)
        err_print(stderr, &err);
    assert_int_equal(rc, 0);
    free(p);
}

static shape_t shape(int64_t m, int64_t n, int64_t k)
{
    return (shape_t){m, n, k};
}

/* The config of what (device, arch, dtype, M, N, K) looks up, and the level; NULL when no choice. */
static const char *look(const wisdom_t *w, const char *device, int arch, dtype_t d, int64_t m, int64_t n, int64_t k,
                        wisdom_level *level)
{
    wisdom_choice c;
    shape_t s = shape(m, n, k);
    if (wisdom_lookup(w, device, arch, d, &s, &c) != 0) {
        assert_null(c.entry);
        return NULL;
    }
    if (level)
        *level = c.level;
    return c.entry->config;
}

#define H100 "NVIDIA H100 80GB HBM3"
#define H100_PCIE "NVIDIA H100 PCIe"

/* ---------------------------------------------------------------------------------------------- */

static void test_slug(void **state)
{
    (void)state;
    const char *cases[][2] = {
        {"NVIDIA H100 80GB HBM3", "nvidia-h100-80gb-hbm3"},
        {"NVIDIA GeForce RTX 3050 Laptop GPU", "nvidia-geforce-rtx-3050-laptop-gpu"},
        {"  NVIDIA  A100-SXM4-40GB (MIG 1g.5gb)  ", "nvidia-a100-sxm4-40gb-mig-1g-5gb"},
        {"Tesla\xc3\xa9 V100", "tesla-v100"},
        {"--", "device"},
        {"", "device"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *s = wisdom_slug(cases[i][0]);
        assert_string_equal(s, cases[i][1]);
        free(s);
    }
    char *p = wisdom_device_path("wisdom", H100);
    assert_string_equal(p, "wisdom/nvidia-h100-80gb-hbm3.json");
    free(p);
}

static void test_distance(void **state)
{
    (void)state;
    shape_t a = shape(4096, 4096, 4096), b = shape(2048, 4096, 4096), c = shape(8192, 4096, 4096);
    assert_true(wisdom_distance(&a, &a) == 0);
    /* Half and twice as large are equally far: the distance is in ratios, not in elements. */
    assert_true(fabs(wisdom_distance(&a, &b) - log(2)) < 1e-12);
    assert_true(fabs(wisdom_distance(&a, &c) - log(2)) < 1e-12);
    assert_true(wisdom_distance(&b, &c) == wisdom_distance(&c, &b));
    /* K = 0 counts as K = 1. */
    shape_t k0 = shape(64, 64, 0), k1 = shape(64, 64, 1), k2 = shape(64, 64, 2);
    assert_true(wisdom_distance(&k0, &k1) == 0);
    assert_true(fabs(wisdom_distance(&k0, &k2) - log(2)) < 1e-12);
}

static void test_missing_dir_is_empty(void **state)
{
    (void)state;
    wisdom_t w;
    wisdom_init(&w);
    err_t err;
    err_clear(&err);
    char *p = in_dir("no-such-dir");
    assert_int_equal(wisdom_load_dir(&w, p, &err), 0);
    assert_false(err_isset(&err));
    assert_int_equal(w.nfiles, 0);
    shape_t s = shape(1, 1, 1);
    wisdom_choice c;
    assert_int_equal(wisdom_lookup(&w, H100, 90, DTYPE_F32, &s, &c), -1);
    free(p);
    /* A file where the directory should be is an error, not empty wisdom. */
    p = in_dir("plain");
    write_text(p, "x");
    assert_int_equal(wisdom_load_dir(&w, p, &err), -1);
    assert_string_equal(err.source, p);
    assert_non_null(strstr(err.text, "cannot read the wisdom directory"));
    free(p);
    wisdom_free(&w);
}

#define FILE_DEFAULT                                                                                                   \
    "{\n  \"version\": 1,\n  \"entries\": [\n"                                                                         \
    "    {\"dtype\": \"f32\", \"shape\": \"1024x1024x1024\", \"config\": \"default32.json\", \"tflops\": 0, "          \
    "\"vs_cublas\": 0},\n"                                                                                             \
    "    {\"dtype\": \"f64\", \"shape\": \"1024x1024x1024\", \"config\": \"default64.json\", \"tflops\": 0, "          \
    "\"vs_cublas\": 0}\n"                                                                                              \
    "  ]\n}\n"

static void test_load_dir_sorted(void **state)
{
    (void)state;
    char *names[] = {"b.json", "a.json", ".hidden.json", "notes.txt", "README.md", "c.json.bak"};
    const char *dev = "{\"version\": 1, \"device\": \"GPU %s\", \"arch\": \"sm_80\", \"entries\": []}";
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char *p = in_dir(names[i]);
        char *t = xasprintf(dev, names[i]);
        write_text(p, i < 3 ? t : "not json at all");
        free(t);
        free(p);
    }
    char *sub = in_dir("sub.json"); /* a directory named like a file is read like one: an error */
    wisdom_t w;
    wisdom_init(&w);
    err_t err;
    err_clear(&err);
    assert_int_equal(wisdom_load_dir(&w, g_dir, &err), 0);
    assert_int_equal(w.nfiles, 2);
    assert_string_equal(w.files[0].device, "GPU a.json");
    assert_string_equal(w.files[1].device, "GPU b.json");
    char *pa = in_dir("a.json");
    assert_string_equal(w.files[0].path, pa);
    free(pa);
    /* One bad file: the whole directory is refused, and w keeps what it had. */
    assert_int_equal(mkdir(sub, 0755), 0);
    assert_int_equal(wisdom_load_dir(&w, g_dir, &err), -1);
    assert_string_equal(err.source, sub);
    assert_string_equal(err.text, "is a directory, not a wisdom file");
    assert_int_equal(w.nfiles, 2);
    free(sub);
    wisdom_free(&w);
}

static void test_shipped_default(void **state)
{
    (void)state;
    wisdom_t w;
    wisdom_init(&w);
    err_t err;
    err_clear(&err);
    int rc = wisdom_load_dir(&w, "wisdom", &err); /* tests run from the repository root */
    if (rc)
        err_print(stderr, &err);
    assert_int_equal(rc, 0);
    wisdom_level level = 0;
    const char *c32 = look(&w, "Some Future GPU", 120, DTYPE_F32, 4096, 4096, 4096, &level);
    assert_non_null(c32);
    assert_int_equal(level, WISDOM_DEFAULT);
    assert_string_equal(c32, "configs/warptile_db.json");
    const char *c64 = look(&w, NULL, 0, DTYPE_F64, 100, 100, 0, &level);
    assert_non_null(c64);
    assert_int_equal(level, WISDOM_DEFAULT);
    assert_string_equal(c64, "configs/dgemm_dmma.json");
    /* Every config the shipped wisdom names exists. */
    for (size_t i = 0; i < w.nfiles; i++)
        for (size_t j = 0; j < w.files[i].nentries; j++)
            assert_int_equal(access(w.files[i].entries[j].config, R_OK), 0);
    /* The shipped file is laid out exactly as wisdom_record writes it. */
    char *text = read_file("wisdom/default.json", NULL);
    char *again = wisdom_file_to_json(&w.files[0]);
    assert_string_equal(text, again);
    free(text);
    free(again);
    wisdom_free(&w);
}

static void test_fallback_order(void **state)
{
    (void)state;
    wisdom_t w;
    wisdom_init(&w);
    load_text(&w, "h100.json",
              "{\"version\": 1, \"device\": \"" H100 "\", \"arch\": \"sm_90\", \"entries\": [\n"
              "  {\"dtype\": \"f32\", \"shape\": \"4096x4096x4096\", \"config\": \"device32.json\", \"tflops\": 50, "
              "\"vs_cublas\": 0.9}]}\n");
    load_text(&w, "sm90.json",
              "{\"version\": 1, \"arch\": \"sm_90\", \"entries\": [\n"
              "  {\"dtype\": \"f32\", \"shape\": \"4096x4096x4096\", \"config\": \"arch32.json\", \"tflops\": 40, "
              "\"vs_cublas\": 0.8},\n"
              "  {\"dtype\": \"f64\", \"shape\": \"4096x4096x4096\", \"config\": \"arch64.json\", \"tflops\": 40, "
              "\"vs_cublas\": 0.8}]}\n");
    load_text(&w, "default.json", FILE_DEFAULT);
    wisdom_level level = 0;
    /* 1. the device's own file, even for a shape far from its only entry */
    assert_string_equal(look(&w, H100, 90, DTYPE_F32, 128, 128, 128, &level), "device32.json");
    assert_int_equal(level, WISDOM_DEVICE);
    /* 2. the device has no f64: the arch level */
    assert_string_equal(look(&w, H100, 90, DTYPE_F64, 1024, 1024, 1024, &level), "arch64.json");
    assert_int_equal(level, WISDOM_ARCH);
    /* 3. another arch: the default level, though the other files are closer in shape */
    assert_string_equal(look(&w, "NVIDIA A100-SXM4-40GB", 80, DTYPE_F32, 4096, 4096, 4096, &level), "default32.json");
    assert_int_equal(level, WISDOM_DEFAULT);
    assert_string_equal(look(&w, "NVIDIA A100-SXM4-40GB", 80, DTYPE_F64, 4096, 4096, 4096, &level), "default64.json");
    /* No device name and no arch: only the default level. */
    assert_string_equal(look(&w, NULL, 0, DTYPE_F32, 4096, 4096, 4096, &level), "default32.json");
    assert_int_equal(level, WISDOM_DEFAULT);
    /* A device name must match exactly: the same GPU spelled otherwise is another device. */
    assert_string_equal(look(&w, "nvidia h100 80gb hbm3", 90, DTYPE_F32, 4096, 4096, 4096, &level), "device32.json");
    assert_int_equal(level, WISDOM_ARCH);
    wisdom_free(&w);
}

static void test_other_device_same_arch(void **state)
{
    (void)state;
    wisdom_t w;
    wisdom_init(&w);
    load_text(&w, "h100.json",
              "{\"version\": 1, \"device\": \"" H100 "\", \"arch\": \"sm_90a\", \"entries\": [\n"
              "  {\"dtype\": \"f32\", \"shape\": \"4096x4096x4096\", \"config\": \"sxm.json\", \"tflops\": 50, "
              "\"vs_cublas\": 0.9}]}\n");
    load_text(&w, "sm90.json",
              "{\"version\": 1, \"arch\": \"sm_90\", \"entries\": [\n"
              "  {\"dtype\": \"f32\", \"shape\": \"1024x1024x1024\", \"config\": \"arch.json\", \"tflops\": 40, "
              "\"vs_cublas\": 0.8}]}\n");
    load_text(&w, "default.json", FILE_DEFAULT);
    wisdom_level level = 0;
    /* An H100 PCIe has no file: its arch level holds the arch file and the SXM's file (sm_90a is the
     * same hardware as sm_90), and the nearer shape decides between them. */
    assert_string_equal(look(&w, H100_PCIE, 90, DTYPE_F32, 4000, 4000, 4000, &level), "sxm.json");
    assert_int_equal(level, WISDOM_ARCH);
    assert_string_equal(look(&w, H100_PCIE, 90, DTYPE_F32, 1000, 1000, 1000, &level), "arch.json");
    assert_int_equal(level, WISDOM_ARCH);
    /* Asked for sm_90a, the same. */
    assert_string_equal(look(&w, H100_PCIE, 90 + ARCH_SPECIFIC, DTYPE_F32, 4000, 4000, 4000, &level), "sxm.json");
    /* f64: nobody at sm_90 has any, so the default level. */
    assert_string_equal(look(&w, H100_PCIE, 90, DTYPE_F64, 4000, 4000, 4000, &level), "default64.json");
    assert_int_equal(level, WISDOM_DEFAULT);
    wisdom_free(&w);
}

static void test_nearest_by_log_distance(void **state)
{
    (void)state;
    wisdom_t w;
    wisdom_init(&w);
    load_text(&w, "h100.json",
              "{\"version\": 1, \"device\": \"" H100 "\", \"arch\": \"sm_90\", \"entries\": [\n"
              "  {\"dtype\": \"f32\", \"shape\": \"1024x1024x1024\", \"config\": \"small.json\", \"tflops\": 30, "
              "\"vs_cublas\": 0.7},\n"
              "  {\"dtype\": \"f32\", \"shape\": \"7000x7000x7000\", \"config\": \"large.json\", \"tflops\": 50, "
              "\"vs_cublas\": 0.9},\n"
              "  {\"dtype\": \"f32\", \"shape\": \"8192x256x8192\", \"config\": \"skinny.json\", \"tflops\": 20, "
              "\"vs_cublas\": 0.9}]}\n");
    /* 3000^3 is 1976 from 1024 and 4000 from 7000 in each dimension, but 3000/1024 = 2.93 against
     * 7000/3000 = 2.33: by ratio, 7000^3 is the nearer. */
    wisdom_choice c;
    shape_t s = shape(3000, 3000, 3000);
    assert_int_equal(wisdom_lookup(&w, H100, 90, DTYPE_F32, &s, &c), 0);
    assert_string_equal(c.entry->config, "large.json");
    assert_false(c.exact);
    assert_true(fabs(c.distance - sqrt(3.0) * log(7000.0 / 3000.0)) < 1e-12);
    assert_int_equal(c.entry->line, 3);
    /* A skinny problem finds the skinny entry though the square ones are closer in element count. */
    assert_string_equal(look(&w, H100, 90, DTYPE_F32, 8000, 300, 8000, NULL), "skinny.json");
    assert_string_equal(look(&w, H100, 90, DTYPE_F32, 1, 1, 0, NULL), "small.json");
    wisdom_free(&w);
}

static void test_exact_preferred_and_ties(void **state)
{
    (void)state;
    wisdom_t w;
    wisdom_init(&w);
    /* Loaded out of order: lookups see files in path order (a.json before b.json). */
    load_text(&w, "b.json",
              "{\"version\": 1, \"device\": \"" H100 "\", \"arch\": \"sm_90\", \"entries\": [\n"
              "  {\"dtype\": \"f32\", \"shape\": \"2048x2048x2048\", \"config\": \"b2048.json\", \"tflops\": 1, "
              "\"vs_cublas\": 1},\n"
              "  {\"dtype\": \"f32\", \"shape\": \"64x64x0\", \"config\": \"bk0.json\", \"tflops\": 1, \"vs_cublas\": "
              "1}]}\n");
    load_text(
        &w, "a.json",
        "{\"version\": 1, \"device\": \"" H100 "\", \"arch\": \"sm_90\", \"entries\": [\n"
        "  {\"dtype\": \"f32\", \"shape\": \"64x64x1\", \"config\": \"ak1.json\", \"tflops\": 1, \"vs_cublas\": 1},\n"
        "  {\"dtype\": \"f32\", \"shape\": \"8192x8192x8192\", \"config\": \"a8192.json\", \"tflops\": 1, "
        "\"vs_cublas\": 1},\n"
        "  {\"dtype\": \"f32\", \"shape\": \"2048x2048x2048\", \"config\": \"a2048.json\", \"tflops\": 1, "
        "\"vs_cublas\": 1}]}\n");
    assert_true(strstr(w.files[0].path, "/a.json") != NULL);
    wisdom_choice c;
    /* K = 0 and K = 1 are at distance 0 from each other, but the exact shape wins though it comes later. */
    shape_t s = shape(64, 64, 0);
    assert_int_equal(wisdom_lookup(&w, H100, 90, DTYPE_F32, &s, &c), 0);
    assert_string_equal(c.entry->config, "bk0.json");
    assert_true(c.exact);
    assert_true(c.distance == 0);
    s = shape(64, 64, 1);
    assert_int_equal(wisdom_lookup(&w, H100, 90, DTYPE_F32, &s, &c), 0);
    assert_string_equal(c.entry->config, "ak1.json");
    assert_true(c.exact);
    /* An exact shape in two files of the level: the first file in path order. */
    s = shape(2048, 2048, 2048);
    assert_int_equal(wisdom_lookup(&w, H100, 90, DTYPE_F32, &s, &c), 0);
    assert_string_equal(c.entry->config, "a2048.json");
    /* 4096^3 is ln 2 * sqrt 3 from both 2048^3 and 8192^3: the first in file order (8192, in a.json). */
    s = shape(4096, 4096, 4096);
    assert_int_equal(wisdom_lookup(&w, H100, 90, DTYPE_F32, &s, &c), 0);
    assert_string_equal(c.entry->config, "a8192.json");
    assert_false(c.exact);
    wisdom_free(&w);
}

static void test_dtype_filter_and_no_choice(void **state)
{
    (void)state;
    wisdom_t w;
    wisdom_init(&w);
    shape_t s = shape(4096, 4096, 4096);
    wisdom_choice c;
    assert_int_equal(wisdom_lookup(&w, H100, 90, DTYPE_F32, &s, &c), -1);
    load_text(&w, "h100.json",
              "{\"version\": 1, \"device\": \"" H100 "\", \"arch\": \"sm_90\", \"entries\": [\n"
              "  {\"dtype\": \"f64\", \"shape\": \"4096x4096x4096\", \"config\": \"d64.json\", \"tflops\": 50, "
              "\"vs_cublas\": 1.08}]}\n");
    /* Only f64 anywhere: an f32 lookup has no choice, even at the exact shape. */
    assert_int_equal(wisdom_lookup(&w, H100, 90, DTYPE_F32, &s, &c), -1);
    assert_null(c.entry);
    assert_null(c.file);
    wisdom_level level = 0;
    assert_string_equal(look(&w, H100, 90, DTYPE_F64, 100, 100, 100, &level), "d64.json");
    assert_int_equal(level, WISDOM_DEVICE);
    /* An f32 entry at the arch level is found for f32 while the device level keeps f64. */
    load_text(&w, "sm90.json",
              "{\"version\": 1, \"arch\": \"sm_90\", \"entries\": [\n"
              "  {\"dtype\": \"f32\", \"shape\": \"512x512x512\", \"config\": \"a32.json\", \"tflops\": 5, "
              "\"vs_cublas\": 0.5}]}\n");
    assert_string_equal(look(&w, H100, 90, DTYPE_F32, 4096, 4096, 4096, &level), "a32.json");
    assert_int_equal(level, WISDOM_ARCH);
    assert_string_equal(look(&w, H100, 90, DTYPE_F64, 512, 512, 512, &level), "d64.json");
    assert_int_equal(level, WISDOM_DEVICE);
    /* The half dtypes are keys of their own: a bf16 entry at the shape of an f32 one serves bf16
     * alone, f32 keeps its own, and f16 (no entry) has no choice. */
    assert_null(look(&w, H100, 90, DTYPE_BF16, 4096, 4096, 4096, NULL));
    load_text(&w, "h100-half.json",
              "{\"version\": 1, \"device\": \"" H100 "\", \"arch\": \"sm_90\", \"entries\": [\n"
              "  {\"dtype\": \"bf16\", \"shape\": \"512x512x512\", \"config\": \"h16.json\", \"tflops\": 300, "
              "\"vs_cublas\": 0.9}]}\n");
    assert_string_equal(look(&w, H100, 90, DTYPE_BF16, 512, 512, 512, &level), "h16.json");
    assert_int_equal(level, WISDOM_DEVICE);
    assert_string_equal(look(&w, H100, 90, DTYPE_F32, 512, 512, 512, &level), "a32.json");
    assert_null(look(&w, H100, 90, DTYPE_F16, 512, 512, 512, NULL));
    wisdom_free(&w);
}

static void test_choice_format(void **state)
{
    (void)state;
    wisdom_t w;
    wisdom_init(&w);
    err_t err;
    err_clear(&err);
    const char *text =
        "{\n"
        "  \"version\": 1,\n"
        "  \"device\": \"" H100 "\",\n"
        "  \"arch\": \"sm_90\",\n"
        "  \"entries\": [\n"
        "    {\"dtype\": \"f32\", \"shape\": \"4096x4096x4096\", \"config\": \"configs/warptile_db.json\", "
        "\"set\": {\"BM\": 128, \"BN\": 64}, \"tflops\": 51.2, \"vs_cublas\": 0.91},\n"
        "    {\"dtype\": \"f64\", \"shape\": \"2048x2048x2048\", \"config\": \"dgemm_dmma\", \"tflops\": 48.9, "
        "\"vs_cublas\": 1.08}\n"
        "  ]\n"
        "}\n";
    assert_int_equal(wisdom_parse(&w, "wisdom/nvidia-h100-80gb-hbm3.json", text, strlen(text), &err), 0);
    wisdom_choice c;
    shape_t s = shape(4000, 4096, 4096);
    assert_int_equal(wisdom_lookup(&w, H100, 90, DTYPE_F32, &s, &c), 0);
    char *f = wisdom_choice_format(&c);
    assert_string_equal(f, "warptile_db[BM=128,BN=64] (wisdom/nvidia-h100-80gb-hbm3.json:6, device, nearest "
                           "4096x4096x4096 at distance 0.02)");
    free(f);
    s = shape(2048, 2048, 2048);
    assert_int_equal(wisdom_lookup(&w, "Other", 90, DTYPE_F64, &s, &c), 0);
    f = wisdom_choice_format(&c);
    assert_string_equal(f, "dgemm_dmma (wisdom/nvidia-h100-80gb-hbm3.json:7, arch, exact 2048x2048x2048)");
    free(f);
    wisdom_free(&w);
}

/* ---------------------------------------------------------------------------------------------- */
/* Malformed files                                                                                 */

/* Invalid inputs as data: each folder of tests/fixtures/wisdom/invalid/ holds a wisdom.json and the
 * exact error line it must give (`expected`). Adding a case is adding a folder. */
#define INVALID_DIR "tests/fixtures/wisdom/invalid"

static int load_wisdom_case(const char *case_dir, char *got, size_t len)
{
    char *path = xasprintf("%s/wisdom.json", case_dir);
    wisdom_t w;
    wisdom_init(&w);
    err_t err;
    err_clear(&err);
    int rc = wisdom_load_file(&w, path, &err);
    if (rc) {
        err_format(&err, got, len);
        assert_int_equal(err.code, EXIT_INPUT);
        assert_int_equal(w.nfiles, 0);
    }
    wisdom_free(&w);
    free(path);
    return rc;
}

static void test_malformed(void **state)
{
    (void)state;
    assert_true(run_fixtures(INVALID_DIR, load_wisdom_case) >= 30);
}

/* The same through a file on disk: the error names the file's path. */
static void test_malformed_file(void **state)
{
    (void)state;
    char *p = in_dir("nvidia-h100-80gb-hbm3.json");
    write_text(p, "{\n  \"version\": 1,\n  \"arch\": \"sm_90\",\n  \"entries\": [\n    {\"dtype\": \"f32\", \"shape\": "
                  "\"4096x4096x-1\", \"config\": \"c.json\", \"tflops\": 1, \"vs_cublas\": 1}\n  ]\n}\n");
    wisdom_t w;
    wisdom_init(&w);
    err_t err;
    err_clear(&err);
    assert_int_equal(wisdom_load_file(&w, p, &err), -1);
    char line[ERR_SOURCE_LEN + ERR_TEXT_LEN + 64], *want = NULL;
    err_format(&err, line, sizeof line);
    want = xasprintf("%s:5:31: entries[0].shape \"4096x4096x-1\": must look like MxNxK with whole numbers (no signs "
                     "or leading zeros), e.g. 4096x4096x4096",
                     p);
    assert_string_equal(line, want);
    free(want);
    char *missing = in_dir("missing.json");
    err_clear(&err);
    assert_int_equal(wisdom_load_file(&w, missing, &err), -1);
    assert_string_equal(err.source, missing);
    assert_string_equal(err.text, "cannot read wisdom: No such file or directory");
    free(missing);
    free(p);
    wisdom_free(&w);
}

/* ---------------------------------------------------------------------------------------------- */
/* Recording                                                                                       */

/* An entry on stack storage (sets point at static strings: never freed). */
static wisdom_entry entry(dtype_t d, int64_t m, int64_t n, int64_t k, const char *config, double tflops)
{
    wisdom_entry e;
    memset(&e, 0, sizeof e);
    e.dtype = d;
    e.shape = shape(m, n, k);
    e.config = (char *)config;
    e.tflops = tflops;
    e.vs_cublas = tflops / 50;
    return e;
}

static wisdom_outcome record(const char *path, const wisdom_entry *e)
{
    err_t err;
    err_clear(&err);
    wisdom_outcome what = 0;
    int rc = wisdom_record(path, H100, 90, e, &what, &err);
    if (rc)
        err_print(stderr, &err);
    assert_int_equal(rc, 0);
    return what;
}

static void test_record_create(void **state)
{
    (void)state;
    /* The directory does not exist yet either. */
    char *dir = in_dir("wisdom");
    char *p = wisdom_device_path(dir, H100);
    param_set sets[2] = {{"BM=128", "BM", 128, NULL, 0}, {"BN=64", "BN", 64, NULL, 0}};
    wisdom_entry e = entry(DTYPE_F32, 4096, 4096, 4096, "configs/warptile_db.json", 51.2);
    e.vs_cublas = 0.91;
    e.sets = sets;
    e.nsets = 2;
    e.source = "engine tune tune/warptile.json --shapes 4096x4096x4096 (2026-11-23)";
    assert_int_equal(record(p, &e), WISDOM_CREATED);
    char *text = read_file(p, NULL);
    assert_string_equal(
        text, "{\n"
              "  \"version\": 1,\n"
              "  \"device\": \"NVIDIA H100 80GB HBM3\",\n"
              "  \"arch\": \"sm_90\",\n"
              "  \"entries\": [\n"
              "    {\"dtype\": \"f32\", \"shape\": \"4096x4096x4096\", \"config\": \"configs/warptile_db.json\", "
              "\"set\": {\"BM\": 128, \"BN\": 64}, \"tflops\": 51.2, \"vs_cublas\": 0.91, "
              "\"source\": \"engine tune tune/warptile.json --shapes 4096x4096x4096 (2026-11-23)\"}\n"
              "  ]\n"
              "}\n");
    free(text);
    /* No temp file is left behind. */
    wisdom_t w;
    wisdom_init(&w);
    err_t err;
    err_clear(&err);
    assert_int_equal(wisdom_load_dir(&w, dir, &err), 0);
    assert_int_equal(w.nfiles, 1);
    wisdom_free(&w);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "test $(ls -A %s | wc -l) = 1", dir);
    assert_int_equal(system(cmd), 0);
    free(p);
    free(dir);
}

static void test_record_replace_if_better(void **state)
{
    (void)state;
    char *p = in_dir("h100.json");
    wisdom_entry e = entry(DTYPE_F32, 2048, 2048, 2048, "first.json", 40);
    assert_int_equal(record(p, &e), WISDOM_CREATED);
    e = entry(DTYPE_F32, 4096, 4096, 4096, "other.json", 45);
    assert_int_equal(record(p, &e), WISDOM_ADDED);
    char *before = read_file(p, NULL);
    struct stat st0, st1;
    assert_int_equal(stat(p, &st0), 0);
    /* Slower, then as fast: kept, and the file is not even rewritten. */
    e = entry(DTYPE_F32, 2048, 2048, 2048, "slower.json", 39.9);
    assert_int_equal(record(p, &e), WISDOM_KEPT);
    e = entry(DTYPE_F32, 2048, 2048, 2048, "same.json", 40);
    assert_int_equal(record(p, &e), WISDOM_KEPT);
    char *after = read_file(p, NULL);
    assert_string_equal(before, after);
    assert_int_equal(stat(p, &st1), 0);
    assert_int_equal(st0.st_ino, st1.st_ino);
    free(after);
    /* Faster: replaced, the other entry untouched. A different dtype at the same shape is another entry. */
    e = entry(DTYPE_F32, 2048, 2048, 2048, "faster.json", 41);
    assert_int_equal(record(p, &e), WISDOM_REPLACED);
    e = entry(DTYPE_F64, 2048, 2048, 2048, "d.json", 1);
    assert_int_equal(record(p, &e), WISDOM_ADDED);
    /* So is another op (slower than the NN entry, yet added), written with its "op"; NN is written
     * without one, as before layouts. */
    e = entry(DTYPE_F32, 2048, 2048, 2048, "tn.json", 10);
    e.op = 2;
    assert_int_equal(record(p, &e), WISDOM_ADDED);
    e.tflops = 11;
    assert_int_equal(record(p, &e), WISDOM_REPLACED);
    char *text = read_file(p, NULL);
    assert_non_null(strstr(text, "{\"dtype\": \"f32\", \"op\": \"TN\", \"shape\": \"2048x2048x2048\", \"config\": \"tn.json\""));
    assert_non_null(strstr(text, "{\"dtype\": \"f32\", \"shape\": \"2048x2048x2048\", \"config\": \"faster.json\""));
    free(text);
    wisdom_t w;
    wisdom_init(&w);
    err_t err;
    err_clear(&err);
    assert_int_equal(wisdom_load_file(&w, p, &err), 0);
    assert_int_equal(w.files[0].nentries, 4);
    /* Sorted by dtype, op, then shape: NN 2048, NN 4096, TN 2048, then f64. */
    assert_int_equal(w.files[0].entries[2].op, 2);
    assert_string_equal(w.files[0].entries[2].config, "tn.json");
    assert_int_equal(w.files[0].entries[0].op, 0);
    assert_string_equal(look(&w, H100, 90, DTYPE_F32, 2048, 2048, 2048, NULL), "faster.json");
    assert_string_equal(look(&w, H100, 90, DTYPE_F32, 4096, 4096, 4096, NULL), "other.json");
    assert_string_equal(look(&w, H100, 90, DTYPE_F64, 2048, 2048, 2048, NULL), "d.json");
    wisdom_free(&w);
    free(before);
    /* A batch is another entry too (slower in TFLOP/s than the single product, yet added), written
     * with its "batch", sorted after the op's single products and read back with it. */
    e = entry(DTYPE_F32, 2048, 2048, 2048, "b512.json", 5);
    e.op = 2;
    e.batch = 512;
    assert_int_equal(record(p, &e), WISDOM_ADDED);
    text = read_file(p, NULL);
    assert_non_null(strstr(text, "{\"dtype\": \"f32\", \"op\": \"TN\", \"batch\": 512, \"shape\": \"2048x2048x2048\""));
    free(text);
    wisdom_init(&w);
    assert_int_equal(wisdom_load_file(&w, p, &err), 0);
    assert_int_equal(w.files[0].nentries, 5);
    assert_string_equal(w.files[0].entries[2].config, "tn.json");
    assert_int_equal(wisdom_batch(&w.files[0].entries[2]), 1);
    assert_string_equal(w.files[0].entries[3].config, "b512.json");
    assert_int_equal(w.files[0].entries[3].batch, 512);
    wisdom_free(&w);
    /* A batch out of range is refused before anything is written. */
    e.batch = WISDOM_MAX_BATCH + 1;
    err_clear(&err);
    assert_int_equal(wisdom_record(p, H100, 90, &e, NULL, &err), -1);
    assert_non_null(strstr(err.text, "batch 65536 is not 1 to 65535"));
    free(p);
}

static void test_record_sorted_round_trip(void **state)
{
    (void)state;
    char *p = in_dir("h100.json");
    /* Recorded out of order, with strings that need escaping; read back sorted by dtype, M, N, K. */
    param_set sets[] = {{"TM=8", "TM", 8, NULL, 0},
                        {"BK=-1", "BK", -1, NULL, 0},
                        {"BIG=9223372036854775807", "BIG", INT64_MAX, NULL, 0}};
    wisdom_entry in[] = {
        entry(DTYPE_F64, 4096, 4096, 4096, "configs/dgemm_dmma.json", 48.89),
        entry(DTYPE_F32, 4096, 1024, 4096, "b.json", 1e-300),
        entry(DTYPE_F32, 4096, 1024, 0, "c.json", 0),
        entry(DTYPE_F32, 17, 33, 5, "quote\"back\\slash.json", 0.1 + 0.2),
        entry(DTYPE_F32, 65536, 32767, 1, "\xc3\xa9t\xc3\xa9.json", 1e15),
        entry(DTYPE_F64, 1, 1, 0, "tiny.json", 3),
    };
    size_t n = sizeof in / sizeof in[0];
    in[0].sets = sets;
    in[0].nsets = 3;
    in[1].source = "line one\nline two\ttab \x01 control";
    in[3].source = "";
    in[4].vs_cublas = 12345.678901234567;
    for (size_t i = 0; i < n; i++)
        assert_int_equal(record(p, &in[i]), i == 0 ? WISDOM_CREATED : WISDOM_ADDED);
    const size_t order[] = {3, 2, 1,
                            4, 5, 0}; /* f32: 17x33x5, 4096x1024x0, 4096x1024x4096, 65536x...; f64: 1x1x0, 4096^3 */
    wisdom_t w;
    wisdom_init(&w);
    err_t err;
    err_clear(&err);
    assert_int_equal(wisdom_load_file(&w, p, &err), 0);
    const wisdom_file *f = &w.files[0];
    assert_string_equal(f->device, H100);
    assert_int_equal(f->arch, 90);
    assert_int_equal(f->nentries, n);
    for (size_t i = 0; i < n; i++) {
        const wisdom_entry *a = &f->entries[i], *b = &in[order[i]];
        assert_int_equal(a->dtype, b->dtype);
        assert_memory_equal(&a->shape, &b->shape, sizeof a->shape);
        assert_string_equal(a->config, b->config);
        assert_true(a->tflops == b->tflops);
        assert_true(a->vs_cublas == b->vs_cublas);
        if (b->source)
            assert_string_equal(a->source, b->source);
        else
            assert_null(a->source);
        assert_int_equal(a->nsets, b->nsets);
        for (size_t k = 0; k < a->nsets; k++) {
            assert_string_equal(a->sets[k].key, b->sets[k].key);
            assert_string_equal(a->sets[k].text, b->sets[k].text);
            assert_true(a->sets[k].value == b->sets[k].value);
        }
        assert_int_equal(a->line, 6 + (int)i); /* one entry per line, after the 5 lines of the header */
    }
    /* Writing what was read gives the file back byte for byte. */
    char *text = read_file(p, NULL);
    char *again = wisdom_file_to_json(f);
    assert_string_equal(text, again);
    free(text);
    free(again);
    wisdom_free(&w);
    free(p);
}

static void test_record_refusals(void **state)
{
    (void)state;
    char *p = in_dir("h100.json");
    err_t err;
    wisdom_outcome what;
    /* A corrupt file is reported with its own position and left exactly as it was. */
    const char *corrupt =
        "{\"version\": 1, \"device\": \"" H100 "\", \"arch\": \"sm_90\", \"entries\": [\n"
        "  {\"dtype\": \"f32\", \"shape\": \"64x64x64\", \"config\": \"c.json\", \"tflops\": 1, \"vs_cublas\": 1,}]}\n";
    write_text(p, corrupt);
    wisdom_entry e = entry(DTYPE_F32, 128, 128, 128, "new.json", 99);
    err_clear(&err);
    assert_int_equal(wisdom_record(p, H100, 90, &e, &what, &err), -1);
    assert_int_equal(err.code, EXIT_INPUT);
    assert_string_equal(err.source, p);
    assert_int_equal(err.line, 2);
    assert_true(strstr(err.text, "invalid JSON") != NULL);
    char *now = read_file(p, NULL);
    assert_string_equal(now, corrupt);
    free(now);
    /* A file with a valid JSON but a broken rule: the same. */
    write_text(p, "{\"version\": 1, \"device\": \"" H100 "\", \"arch\": \"sm_90\", \"entries\": [], \"note\": 1}\n");
    err_clear(&err);
    assert_int_equal(wisdom_record(p, H100, 90, &e, &what, &err), -1);
    assert_int_equal(err.line, 1);
    assert_string_equal(err.text, "unknown key \"note\" (a wisdom file has version, device, arch, entries)");
    /* Another device's file, or an arch file asked to hold a device's entry. */
    write_text(p, "{\"version\": 1, \"device\": \"" H100_PCIE "\", \"arch\": \"sm_90\", \"entries\": []}\n");
    err_clear(&err);
    assert_int_equal(wisdom_record(p, H100, 90, &e, &what, &err), -1);
    assert_string_equal(err.text, "cannot record: the file holds wisdom for device \"NVIDIA H100 PCIe\" (sm_90), not "
                                  "for device \"NVIDIA H100 80GB HBM3\" (sm_90)");
    write_text(p, "{\"version\": 1, \"arch\": \"sm_90\", \"entries\": []}\n");
    err_clear(&err);
    assert_int_equal(wisdom_record(p, H100, 90, &e, &what, &err), -1);
    assert_string_equal(err.text, "cannot record: the file holds wisdom for arch sm_90, not for device \"NVIDIA H100 "
                                  "80GB HBM3\" (sm_90)");
    /* ... which an arch-level record may use. */
    err_clear(&err);
    assert_int_equal(wisdom_record(p, NULL, 90 + ARCH_SPECIFIC, &e, &what, &err), 0);
    assert_int_equal(what, WISDOM_ADDED);
    /* Entries that no reader would take. */
    char *q = in_dir("fresh.json");
    wisdom_entry bad = entry(DTYPE_F32, 0, 64, 64, "x.json", 1);
    err_clear(&err);
    assert_int_equal(wisdom_record(q, H100, 90, &bad, &what, &err), -1);
    assert_string_equal(err.text, "cannot record: shape 0x64x64: M = 0 must be between 1 and 16777216");
    bad = entry(DTYPE_F32, 64, 64, 64, "x.json", NAN);
    err_clear(&err);
    assert_int_equal(wisdom_record(q, H100, 90, &bad, &what, &err), -1);
    assert_non_null(strstr(err.text, "must be finite and >= 0"));
    bad = entry(DTYPE_F32, 64, 64, 64, "", 1);
    err_clear(&err);
    assert_int_equal(wisdom_record(q, H100, 90, &bad, &what, &err), -1);
    assert_string_equal(err.text, "cannot record: the entry names no config");
    param_set twice[2] = {{"BM=1", "BM", 1, NULL, 0}, {"BM=2", "BM", 2, NULL, 0}};
    bad = entry(DTYPE_F32, 64, 64, 64, "x.json", 1);
    bad.sets = twice;
    bad.nsets = 2;
    err_clear(&err);
    assert_int_equal(wisdom_record(q, H100, 90, &bad, &what, &err), -1);
    assert_string_equal(err.text, "cannot record: set: BM is given twice");
    bad = entry(DTYPE_F32, 64, 64, 64, "x\xff.json", 1);
    err_clear(&err);
    assert_int_equal(wisdom_record(q, H100, 90, &bad, &what, &err), -1);
    assert_string_equal(err.text, "cannot record: a string of the entry is not valid UTF-8");
    err_clear(&err);
    assert_int_equal(wisdom_record(q, H100, 0, &e, &what, &err), -1);
    assert_string_equal(err.text, "cannot record: a device file needs a device name and an arch");
    assert_int_equal(access(q, F_OK), -1); /* nothing was written */
    free(q);
    free(p);
}

/* Two processes recording into the same directory at once lose nothing (the directory lock). */
static void test_record_concurrent(void **state)
{
    (void)state;
    char *p = in_dir("h100.json");
    enum { PER = 20 };
    pid_t kid = fork();
    assert_true(kid >= 0);
    int base = kid == 0 ? 1 : 1000;
    for (int i = 0; i < PER; i++) {
        wisdom_entry e = entry(DTYPE_F32, base + i, 64, 64, "c.json", 1);
        err_t err;
        err_clear(&err);
        if (wisdom_record(p, H100, 90, &e, NULL, &err) != 0) {
            err_print(stderr, &err);
            if (kid == 0)
                _exit(1);
            fail();
        }
    }
    if (kid == 0)
        _exit(0);
    int status = 0;
    assert_int_equal(waitpid(kid, &status, 0), kid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    wisdom_t w;
    wisdom_init(&w);
    err_t err;
    err_clear(&err);
    assert_int_equal(wisdom_load_file(&w, p, &err), 0);
    assert_int_equal(w.files[0].nentries, 2 * PER);
    wisdom_free(&w);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slug),
        cmocka_unit_test(test_distance),
        cmocka_unit_test_setup_teardown(test_missing_dir_is_empty, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_dir_sorted, setup, teardown),
        cmocka_unit_test(test_shipped_default),
        cmocka_unit_test_setup_teardown(test_fallback_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_device_same_arch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nearest_by_log_distance, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exact_preferred_and_ties, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dtype_filter_and_no_choice, setup, teardown),
        cmocka_unit_test(test_choice_format),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test_setup_teardown(test_malformed_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_record_create, setup, teardown),
        cmocka_unit_test_setup_teardown(test_record_replace_if_better, setup, teardown),
        cmocka_unit_test_setup_teardown(test_record_sorted_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_record_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_record_concurrent, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
