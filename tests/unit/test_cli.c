/* test_cli.c — the command line: each value parser's accepted and refused values (shapes, sizes,
 * ranges of sizes, devices, shards, numbers in range, formats, --set), the checks across options,
 * unknown options and options of another command, defaults, and the help text: for every command
 * the options its help lists are exactly those its parser takes, each once, with the defaults the
 * parser really uses. */
#include "helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>

#include "cli.h"
#include "report.h"
#include "util.h"

/* ---- helpers ---- */

/* Redirect a descriptor (stdout or stderr) into a temporary file while parsing. */
typedef struct {
    int fd, saved;
    FILE *tmp;
} capture;

static void capture_begin(capture *c, int fd)
{
    fflush(NULL);
    c->fd = fd;
    c->tmp = tmpfile();
    assert_non_null(c->tmp);
    c->saved = dup(fd);
    assert_true(c->saved >= 0);
    assert_int_equal(dup2(fileno(c->tmp), fd), fd);
}

/* Restore the descriptor; returns what was written (free it). */
static char *capture_end(capture *c)
{
    fflush(NULL);
    dup2(c->saved, c->fd);
    close(c->saved);
    /* Written through the descriptor, not the FILE: read it back the same way. */
    int fd = fileno(c->tmp);
    off_t len = lseek(fd, 0, SEEK_END);
    assert_true(len >= 0);
    char *buf = xcalloc((size_t)len + 1, 1);
    assert_int_equal(pread(fd, buf, (size_t)len, 0), len);
    fclose(c->tmp);
    return buf;
}

static const struct {
    int cmd;
    const char *name;
    const char *positional; /* what makes its positional arguments valid */
} k_cmds[] = {
    {CMD_BENCH, "bench", "x.json"},   {CMD_VERIFY, "verify", "x.json"}, {CMD_COMPILE, "compile", "x.json"},
    {CMD_INFO, "info", ""},           {CMD_TUNE, "tune", "x.json"},     {CMD_MERGE, "merge", "a.jsonl"},
    {CMD_CACHE, "cache", "info"},     {CMD_WORKER, "__worker", ""},     {CMD_PICK, "pick", "--shapes 64x64x64"},
};
#define NCMDS (sizeof k_cmds / sizeof k_cmds[0])

static const char *cmd_name(int cmd)
{
    for (size_t i = 0; i < NCMDS; i++)
        if (k_cmds[i].cmd == cmd)
            return k_cmds[i].name;
    return "?";
}

/* The argument strings of the last parse. */
static char **g_owned;

/* cli_free, then the arguments the options pointed into. */
static void release(opts_t *o)
{
    cli_free(o);
    for (char **p = g_owned; p && *p; p++)
        free(*p);
    free(g_owned);
    g_owned = NULL;
}

/* Parse "ARGS" (split on spaces; "\x01" in an argument stands for an empty one) for cmd. Returns
 * cli_parse's result; *err gets what it printed on stderr (free it), o is left for the caller to
 * read and free. */
static int parse_into(int cmd, const char *args, opts_t *o, char **err, char **out)
{
    char *copy = xstrdup(args);
    char *argv[256];
    char *owned[256];
    int argc = 0;
    argv[argc] = owned[argc] = xstrdup(cmd_name(cmd));
    argc++;
    char *save = NULL;
    for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        assert_true(argc < 255);
        argv[argc] = owned[argc] = xstrdup(strcmp(t, "\x01") == 0 ? "" : t);
        argc++;
    }
    argv[argc] = NULL;
    free(copy);
    capture ce, co;
    capture_begin(&ce, STDERR_FILENO);
    capture_begin(&co, STDOUT_FILENO);
    int rc = cli_parse(cmd, cmd_name(cmd), argc, argv, o);
    char *o_text = capture_end(&co);
    char *e_text = capture_end(&ce);
    /* opts_t points into argv (--dtype, --log, ...): keep the strings until release(). getopt_long
     * permutes argv, so what is kept is the list as allocated. */
    g_owned = xmalloc((size_t)(argc + 1) * sizeof *g_owned);
    memcpy(g_owned, owned, (size_t)argc * sizeof *owned);
    g_owned[argc] = NULL;
    if (err)
        *err = e_text;
    else
        free(e_text);
    if (out)
        *out = o_text;
    else
        free(o_text);
    return rc;
}

/* Must be accepted; o is filled (release it). */
static void accepts(int cmd, const char *args, opts_t *o)
{
    char *err;
    int rc = parse_into(cmd, args, o, &err, NULL);
    if (rc != 0)
        fprintf(stderr, "engine %s %s: refused (%d): %s", cmd_name(cmd), args, rc, err);
    free(err);
    assert_int_equal(rc, 0);
}

/* Must be refused with EXIT_INPUT and one line containing `text`. */
static void refuses(int cmd, const char *args, const char *text)
{
    opts_t o;
    char *err;
    int rc = parse_into(cmd, args, &o, &err, NULL);
    if (rc != EXIT_INPUT || !strstr(err, text))
        fprintf(stderr, "engine %s %s: rc %d, stderr \"%s\"; expected %d and \"%s\"\n", cmd_name(cmd), args, rc, err,
                EXIT_INPUT, text);
    assert_int_equal(rc, EXIT_INPUT);
    assert_non_null(strstr(err, text));
    assert_true(strncmp(err, "engine: ", 8) == 0 || strchr(err, ':') != NULL);
    /* One line. */
    char *nl = strchr(err, '\n');
    assert_non_null(nl);
    assert_int_equal(nl[1], '\0');
    free(err);
    release(&o);
}

/* ---- value parsers ---- */

static void test_shapes(void **state)
{
    (void)state;
    opts_t o;
    accepts(CMD_VERIFY, "--shapes 1x1x1,17x33x5,127x129x131 x.json", &o);
    assert_int_equal(o.nshapes, 3);
    assert_int_equal(o.shapes[1].m, 17);
    assert_int_equal(o.shapes[1].n, 33);
    assert_int_equal(o.shapes[1].k, 5);
    assert_int_equal(o.shapes[2].k, 131);
    assert_int_equal(o.nentries, 1);
    assert_string_equal(o.entries[0].path, "x.json");
    release(&o);
    /* K = 0 is C = beta*C; M or N = 0 is not a problem. */
    accepts(CMD_VERIFY, "--shapes 4x5x0 x.json", &o);
    assert_int_equal(o.shapes[0].k, 0);
    release(&o);
    accepts(CMD_TUNE, "--shapes 65536x32767x1 x.json", &o); /* M*N just below 2^31 */
    assert_int_equal(o.shapes[0].n, 32767);
    release(&o);
    accepts(CMD_TUNE, "--shapes 65536x32768x1 x.json", &o); /* past 2^31: the kernels switch to 64-bit offsets */
    release(&o);
    refuses(CMD_TUNE, "--shapes 16777216x16777216x1 x.json", "M*N = 281474976710656 elements exceeds 2^40");
    refuses(CMD_VERIFY, "--shapes 0x5x5 x.json", "sizes must be between 1 and 16777216");
    refuses(CMD_VERIFY, "--shapes 5x0x5 x.json", "sizes must be between 1 and 16777216");
    refuses(CMD_VERIFY, "--shapes 5x5x-1 x.json", "K must be between 0 and 16777216");
    refuses(CMD_VERIFY, "--shapes 16777217x1x1 x.json", "between 1 and 16777216");
    refuses(CMD_VERIFY, "--shapes 17x33 x.json", "each shape must look like MxNxK");
    refuses(CMD_VERIFY, "--shapes 128 x.json", "each shape must look like MxNxK");
    refuses(CMD_VERIFY, "--shapes axbxc x.json", "expected a whole number");
    refuses(CMD_VERIFY, "--shapes 1x1x1x1 x.json", "expected a whole number");
    refuses(CMD_VERIFY, "--shapes 1x1x1,,2x2 x.json", "each shape must look like MxNxK");
    refuses(CMD_VERIFY, "--shapes , x.json", "give at least one MxNxK");
    refuses(CMD_VERIFY, "--shapes \x01 x.json", "give at least one MxNxK");
    refuses(CMD_VERIFY, "--shapes 16777216x16777216x1 x.json", "M*N = 281474976710656 elements exceeds 2^40");
    refuses(CMD_VERIFY, "--shapes 1x16777216x16777216 x.json", "K*N");
    /* At most SHAPE_MAX_LIST. */
    strbuf sb;
    sb_init(&sb);
    sb_add(&sb, "--shapes ");
    for (int i = 0; i <= SHAPE_MAX_LIST; i++)
        sb_addf(&sb, "%s%dx1x1", i ? "," : "", i + 1);
    sb_add(&sb, " x.json");
    refuses(CMD_VERIFY, sb.buf, "at most 64 shapes");
    sb_free(&sb);
    /* Verify's own list is the default when none is given. */
    accepts(CMD_VERIFY, "x.json", &o);
    assert_int_equal(o.nshapes, 0);
    release(&o);
}

static void test_size_and_dims(void **state)
{
    (void)state;
    opts_t o;
    accepts(CMD_BENCH, "--size 4096 x.json", &o);
    assert_true(o.shape_given);
    assert_int_equal(o.shape.m, 4096);
    assert_int_equal(o.shape.n, 4096);
    assert_int_equal(o.shape.k, 4096);
    release(&o);
    accepts(CMD_BENCH, "x.json", &o);
    assert_false(o.shape_given);
    assert_int_equal(o.shape.m, 2048);
    assert_int_equal(o.shape.k, 2048);
    release(&o);
    accepts(CMD_BENCH, "--m 100 --n 200 --k 0 x.json", &o);
    assert_int_equal(o.shape.m, 100);
    assert_int_equal(o.shape.n, 200);
    assert_int_equal(o.shape.k, 0);
    release(&o);
    accepts(CMD_TUNE, "--k 0 x.json", &o);
    assert_int_equal(o.shape.k, 0);
    assert_int_equal(o.shape.m, 2048);
    release(&o);
    refuses(CMD_BENCH, "--m 0 x.json", "--m 0: sizes must be between 1 and 16777216");
    refuses(CMD_BENCH, "--n 0 x.json", "--n 0: sizes");
    refuses(CMD_BENCH, "--k -1 x.json", "--k -1: K must be between 0 and 16777216");
    refuses(CMD_BENCH, "--size 0 x.json", "--size 0");
    refuses(CMD_BENCH, "--size 16777217 x.json", "between 1 and 16777216");
    refuses(CMD_BENCH, "--size 12abc x.json", "expected a whole number");
    refuses(CMD_BENCH, "--size 1.5 x.json", "expected a whole number");
    refuses(CMD_BENCH, "--m 16777216 --n 16777216 --k 1 x.json", "exceeds 2^40");
    /* Not for verify (it takes --shapes). */
    refuses(CMD_VERIFY, "--size 64 x.json", "--size: not an option of `engine verify`");
}

static void test_sizes(void **state)
{
    (void)state;
    opts_t o;
    accepts(CMD_BENCH, "--sizes 64:256:*2 x.json", &o);
    assert_int_equal(o.nshapes, 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(o.shapes[i].m, 64 << i);
        assert_int_equal(o.shapes[i].n, 64 << i);
        assert_int_equal(o.shapes[i].k, 64 << i);
    }
    release(&o);
    accepts(CMD_BENCH, "--sizes 100:400:100 x.json", &o);
    assert_int_equal(o.nshapes, 4);
    assert_int_equal(o.shapes[3].m, 400);
    release(&o);
    accepts(CMD_BENCH, "--sizes 512,128 x.json", &o);
    assert_int_equal(o.nshapes, 2);
    assert_int_equal(o.shapes[0].m, 512);
    assert_int_equal(o.shapes[1].k, 128);
    release(&o);
    accepts(CMD_BENCH, "--sizes 1:64:1 x.json", &o); /* exactly SHAPE_MAX_LIST */
    assert_int_equal(o.nshapes, SHAPE_MAX_LIST);
    release(&o);
    refuses(CMD_BENCH, "--sizes 1:65:1 x.json", "65 sizes; at most 64");
    refuses(CMD_BENCH, "--sizes 0,64 x.json", "--sizes 0: sizes must be between 1 and 16777216");
    refuses(CMD_BENCH, "--sizes 100,16777217 x.json", "--sizes 16777217: sizes must be between 1 and 16777216");
    refuses(CMD_BENCH, "--sizes 100,16777216 x.json", "shape 16777216x16777216x16777216: M*K"); /* each size is checked */
    refuses(CMD_BENCH, "--sizes 256:64 x.json", "the range starts above its end");
    refuses(CMD_BENCH, "--sizes 64:256:0 x.json", "the step must be at least 1");
    refuses(CMD_BENCH, "--sizes 64:256:*1 x.json", "f >= 2");
    refuses(CMD_BENCH, "--sizes 64,64 x.json", "64 is listed twice");
    refuses(CMD_BENCH, "--sizes big x.json", "expected a range a:b:step, a:b:*2 or a list");
    refuses(CMD_BENCH, "--sizes 64,128 --size 64 x.json", "--sizes or --shapes, and --size/--m/--n/--k: give one or the other");
    refuses(CMD_TUNE, "--sizes 64,128 x.json", "--sizes: not an option of `engine tune`");
    refuses(CMD_TUNE, "--shapes 64x64x64 --m 64 x.json", "--shapes and --size/--m/--n/--k");
}

static void test_devices(void **state)
{
    (void)state;
    opts_t o;
    accepts(CMD_TUNE, "--devices 0,1 x.json", &o);
    assert_int_equal(o.ndevices, 2);
    assert_int_equal(o.devices[0], 0);
    assert_int_equal(o.devices[1], 1);
    assert_false(o.all_devices);
    release(&o);
    accepts(CMD_TUNE, "--devices 3 x.json", &o);
    assert_int_equal(o.ndevices, 1);
    assert_int_equal(o.devices[0], 3);
    release(&o);
    accepts(CMD_TUNE, "--devices all x.json", &o);
    assert_true(o.all_devices);
    assert_int_equal(o.ndevices, 0);
    release(&o);
    accepts(CMD_TUNE, "x.json", &o); /* none given: device 0 */
    assert_false(o.all_devices);
    assert_int_equal(o.ndevices, 0);
    release(&o);
    refuses(CMD_TUNE, "--devices 0,0 x.json", "GPU 0 is named twice");
    refuses(CMD_TUNE, "--devices -1 x.json", "expected GPU ordinals 0,1,... or all");
    refuses(CMD_TUNE, "--devices 1024 x.json", "expected GPU ordinals");
    refuses(CMD_TUNE, "--devices one x.json", "expected GPU ordinals");
    refuses(CMD_TUNE, "--devices 0,all x.json", "expected GPU ordinals");
    refuses(CMD_TUNE, "--devices ALL x.json", "expected GPU ordinals");
    refuses(CMD_TUNE, "--devices , x.json", "name at least one GPU");
    refuses(CMD_BENCH, "--devices 0,1 x.json", "--devices: not an option of `engine bench`");
    accepts(CMD_BENCH, "--device 1 x.json", &o);
    assert_int_equal(o.device, 1);
    release(&o);
    refuses(CMD_BENCH, "--device -1 x.json", "--device -1: expected a whole number from 0 to 1023");
}

static void test_shard(void **state)
{
    (void)state;
    opts_t o;
    accepts(CMD_TUNE, "--shard 2/4 x.json", &o);
    assert_int_equal(o.shard_i, 2);
    assert_int_equal(o.shard_n, 4);
    release(&o);
    accepts(CMD_TUNE, "--shard 0/1 x.json", &o);
    assert_int_equal(o.shard_n, 1);
    release(&o);
    accepts(CMD_TUNE, "x.json", &o);
    assert_int_equal(o.shard_n, 0);
    release(&o);
    const char *bad[] = {"4/4", "5/4", "0/0", "1/0", "-1/4", "1/-4", "1", "1/", "/4", "a/4", "1/b", "1/4/2", "\x01"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *args = xasprintf("--shard %s x.json", bad[i]);
        refuses(CMD_TUNE, args, "expected I/N with 0 <= I < N");
        free(args);
    }
    refuses(CMD_BENCH, "--shard 0/2 x.json", "--shard: not an option of `engine bench`");
}

static void test_numbers(void **state)
{
    (void)state;
    opts_t o;
    /* The same option, different ranges per command: --runs is at least 3 for tune. */
    accepts(CMD_BENCH, "--runs 1 x.json", &o);
    assert_int_equal(o.runs, 1);
    release(&o);
    refuses(CMD_TUNE, "--runs 2 x.json", "--runs 2: expected a whole number from 3 to 1000");
    accepts(CMD_TUNE, "--runs 3 --warmup 0 --iters 10000 --top 1000 --budget 5 --max-spill 0 x.json", &o);
    assert_int_equal(o.runs, 3);
    assert_int_equal(o.warmup, 0);
    assert_int_equal(o.iters, 10000);
    assert_int_equal(o.top, 1000);
    assert_int_equal(o.budget, 5);
    assert_int_equal(o.max_spill, 0);
    release(&o);
    refuses(CMD_BENCH, "--warmup -1 x.json", "from 0 to 1000");
    refuses(CMD_BENCH, "--iters 0 x.json", "from 1 to 10000");
    refuses(CMD_TUNE, "--top 1001 x.json", "from 1 to 1000");
    accepts(CMD_MERGE, "--top 100000 a.jsonl", &o);
    assert_int_equal(o.top, 100000);
    release(&o);
    refuses(CMD_TUNE, "--budget 0 x.json", "from 1 to 100000000");
    refuses(CMD_TUNE, "--max-spill -1 x.json", "from 0 to 1000000");
    refuses(CMD_BENCH, "--jobs 0 x.json", "--jobs 0: expected a whole number from 1 to 1024");
    refuses(CMD_BENCH, "--runs 99999999999999999999 x.json", "expected a whole number");
    accepts(CMD_BENCH, "--seed 0 x.json", &o);
    assert_int_equal(o.seed, 0);
    release(&o);
    refuses(CMD_BENCH, "--seed -1 x.json", "expected a whole number >= 0");
    /* Seconds above 0. */
    accepts(CMD_TUNE, "--timeout 0.5 x.json", &o);
    assert_true(o.timeout_s == 0.5);
    release(&o);
    refuses(CMD_TUNE, "--timeout 0 x.json", "expected a number of seconds above 0");
    refuses(CMD_TUNE, "--timeout -3 x.json", "above 0");
    refuses(CMD_TUNE, "--timeout nan x.json", "above 0");
    refuses(CMD_TUNE, "--timeout inf x.json", "above 0");
    refuses(CMD_TUNE, "--timeout 86401 x.json", "at most 86400");
    accepts(CMD_TUNE, "--min-occupancy 12.5 x.json", &o);
    assert_true(o.min_occupancy == 12.5);
    release(&o);
    refuses(CMD_TUNE, "--min-occupancy 101 x.json", "a percentage from 0 to 100");
    refuses(CMD_TUNE, "--min-occupancy -1 x.json", "a percentage");
    /* alpha and beta */
    accepts(CMD_BENCH, "--alpha 2 --beta -1.5 x.json", &o);
    assert_true(o.alpha == 2 && o.beta == -1.5 && o.alpha_given && o.beta_given);
    release(&o);
    refuses(CMD_BENCH, "--alpha two x.json", "--alpha two: expected a finite number");
    refuses(CMD_BENCH, "--beta inf x.json", "expected a finite number");
    refuses(CMD_VERIFY, "--beta 0 x.json", "verify always runs beta = 0");
    accepts(CMD_BENCH, "--beta 0 x.json", &o);
    release(&o);
}

static void test_words(void **state)
{
    (void)state;
    opts_t o;
    accepts(CMD_BENCH, "--format csv --dtype f64 x.json", &o);
    assert_int_equal(o.format, FORMAT_CSV);
    assert_string_equal(o.dtype, "f64");
    release(&o);
    refuses(CMD_BENCH, "--format xml x.json", "--format xml: expected table, csv, jsonl or md");
    accepts(CMD_TUNE, "--format jsonl x.json", &o);
    assert_int_equal(o.format, FORMAT_JSONL);
    release(&o);
    refuses(CMD_TUNE, "--format csv x.json", "--format csv: expected table or jsonl");
    refuses(CMD_BENCH, "--dtype f8 x.json", "expected f32, f64, bf16 or f16");
    accepts(CMD_TUNE, "--strategy guided x.json", &o);
    assert_string_equal(o.strategy, "guided");
    release(&o);
    refuses(CMD_TUNE, "--strategy greedy x.json", "expected exhaustive, random or guided");
    refuses(CMD_COMPILE, "--emit \x01 x.json", "--emit: the value must not be empty");
    accepts(CMD_COMPILE, "--arch sm_90 x.json", &o);
    assert_int_equal(o.arch, 90);
    release(&o);
    refuses(CMD_COMPILE, "--arch banana x.json", "not an architecture");
}

static void test_set(void **state)
{
    (void)state;
    opts_t o;
    /* Tune keeps the text: a range or an expression. */
    accepts(CMD_TUNE, "--set BM=64:256:*2 --set THREADS=32*(BM/WM) x.json", &o);
    assert_int_equal(o.nsets, 2);
    assert_string_equal(o.set_text[0], "BM=64:256:*2");
    assert_string_equal(o.set_text[1], "THREADS=32*(BM/WM)");
    release(&o);
    refuses(CMD_TUNE, "--set BM x.json", "must look like KEY=RANGE");
    refuses(CMD_TUNE, "--set =4 x.json", "must look like KEY=RANGE");
    refuses(CMD_TUNE, "--set BM= x.json", "must look like KEY=RANGE");
    refuses(CMD_TUNE, "--set BM=64 --set BM=128 x.json", "BM is already set by --set BM=64");
    /* Every other command: a whole number. */
    accepts(CMD_COMPILE, "--set BM=128 x.json", &o);
    assert_int_equal(o.nsets, 1);
    assert_string_equal(o.sets[0].key, "BM");
    assert_int_equal(o.sets[0].value, 128);
    release(&o);
    refuses(CMD_COMPILE, "--set BM=64:128 x.json", "VALUE must be a whole number");
    refuses(CMD_COMPILE, "--set B-M=64 x.json", "KEY must be a parameter name");
    refuses(CMD_COMPILE, "--set BM=1 --set BN=2 --set BM=3 x.json", "BM is already set");
    /* At most CLI_MAX_SETS. */
    strbuf sb;
    sb_init(&sb);
    for (int i = 0; i <= CLI_MAX_SETS; i++)
        sb_addf(&sb, "--set P%d=1 ", i);
    sb_add(&sb, "x.json");
    refuses(CMD_COMPILE, sb.buf, "at most 64 overrides");
    sb_free(&sb);
}

static void test_options_and_arguments(void **state)
{
    (void)state;
    opts_t o;
    refuses(CMD_BENCH, "--bogus x.json", "--bogus: unknown option for `engine bench`");
    refuses(CMD_TUNE, "--bogus=1 x.json", "unknown option for `engine tune`");
    refuses(CMD_BENCH, "-x x.json", "-x: unknown option");
    refuses(CMD_BENCH, "x.json --size", "--size: needs a value");
    refuses(CMD_TUNE, "x.json --shard", "--shard: needs a value");
    refuses(CMD_TUNE, "--log l.jsonl --top x.json", "--top x.json: expected a whole number"); /* the next word is the value */
    refuses(CMD_COMPILE, "--dry-run x.json", "--dry-run: not an option of `engine compile` (see engine compile --help)");
    refuses(CMD_INFO, "--set BM=1", "--set: not an option of `engine info`");
    refuses(CMD_MERGE, "--devices 0 a.jsonl", "not an option of `engine merge`");
    /* Positional arguments. */
    refuses(CMD_TUNE, "", "`engine tune` takes one CONFIG or space file");
    refuses(CMD_TUNE, "a.json b.json", "`engine tune` takes one CONFIG");
    refuses(CMD_VERIFY, "--shapes 1x1x1", "`engine verify` needs at least one CONFIG");
    refuses(CMD_COMPILE, "", "`engine compile` needs at least one CONFIG");
    refuses(CMD_MERGE, "", "`engine merge` needs at least one LOG");
    refuses(CMD_CACHE, "", "`engine cache` takes one of: info, clear");
    refuses(CMD_CACHE, "purge", "takes one of: info, clear");
    refuses(CMD_CACHE, "info clear", "takes one of");
    refuses(CMD_INFO, "x.json", "`engine info` takes no CONFIG");
    refuses(CMD_TUNE, "--resume x.json", "--resume needs --log FILE");
    refuses(CMD_TUNE, "--no-cache --cache /tmp/c x.json", "--no-cache and --cache DIR");
    accepts(CMD_MERGE, "a.jsonl b.jsonl --log m.jsonl --force", &o);
    assert_int_equal(o.nargs, 2);
    assert_string_equal(o.args[0], "a.jsonl");
    assert_string_equal(o.args[1], "b.jsonl");
    assert_string_equal(o.log, "m.jsonl");
    assert_true(o.force);
    release(&o);
    accepts(CMD_CACHE, "clear --cache /tmp/c", &o);
    assert_string_equal(o.args[0], "clear");
    assert_string_equal(o.cache_dir, "/tmp/c");
    release(&o);
    accepts(CMD_TUNE, "x.json --dry-run --resume --log l.jsonl --emit-best best.json --no-cache", &o);
    assert_true(o.dry_run && o.resume && o.no_cache);
    assert_string_equal(o.emit_best, "best.json");
    assert_string_equal(o.args[0], "x.json");
    release(&o);
    /* A second parse starts from scratch (getopt's state is reset). */
    accepts(CMD_BENCH, "--size 64 a.json b.json", &o);
    assert_int_equal(o.nentries, 2);
    release(&o);
    accepts(CMD_BENCH, "c.json", &o);
    assert_int_equal(o.nentries, 1);
    assert_false(o.shape_given);
    assert_string_equal(o.entries[0].path, "c.json");
    release(&o);
}

static void test_defaults(void **state)
{
    (void)state;
    opts_t o;
    accepts(CMD_TUNE, "x.json", &o);
    assert_int_equal(o.cmd, CMD_TUNE);
    assert_string_equal(o.cmd_name, "tune");
    assert_int_equal(o.runs, 11);
    assert_int_equal(o.top, 8);
    assert_true(o.timeout_s == 60);
    assert_int_equal(o.max_spill, -1);
    assert_true(o.alpha == 1 && o.beta == 0);
    release(&o);
    accepts(CMD_VERIFY, "x.json", &o);
    assert_true(o.alpha == 1.25 && o.beta == -0.5);
    assert_false(o.alpha_given || o.beta_given);
    release(&o);
    accepts(CMD_MERGE, "a.jsonl", &o);
    assert_int_equal(o.top, 10);
    release(&o);
    accepts(CMD_BENCH, "x.json", &o);
    assert_int_equal(o.runs, 7);
    assert_int_equal(o.warmup, 3);
    assert_int_equal(o.iters, 5);
    assert_int_equal(o.seed, 1);
    assert_true(o.timeout_s == 600);
    assert_int_equal(o.format, FORMAT_TABLE);
    release(&o);
}

/* ---- help from the table ---- */

typedef struct {
    char name[32];
    char meta[32];
    char def[128]; /* "" when the line shows none */
} help_opt;

/* The options a command's help lists, in order. */
static size_t help_options(int cmd, help_opt *out, size_t max, char **text)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cli_help(cmd, cmd_name(cmd), f);
    fclose(f);
    size_t n = 0;
    for (char *line = buf; line && *line;) {
        char *nl = strchr(line, '\n');
        if (strncmp(line, "  --", 4) == 0) {
            assert_true(n < max);
            help_opt *h = &out[n++];
            memset(h, 0, sizeof *h);
            const char *p = line + 4;
            size_t k = strcspn(p, " [\n");
            assert_true(k > 0 && k < sizeof h->name);
            memcpy(h->name, p, k);
            p += k;
            if (*p == '[') { /* "--name[=META]": an optional value, given as --name=VALUE */
                k = strcspn(p, " \n");
                assert_true(k < sizeof h->meta);
                memcpy(h->meta, p, k);
                p += k;
            } else if (*p == ' ' && p[1] != ' ') { /* "--name META" */
                p++;
                k = strcspn(p, " \n");
                assert_true(k < sizeof h->meta);
                memcpy(h->meta, p, k);
                p += k;
            }
            /* The help line itself is not empty. */
            while (*p == ' ')
                p++;
            assert_true(*p && *p != '\n');
            const char *d = strstr(p, "(default ");
            if (d && (!nl || d < nl)) {
                d += 9;
                const char *e = nl ? nl : d + strlen(d);
                assert_true(e > d && e[-1] == ')');
                k = (size_t)(e - 1 - d);
                assert_true(k < sizeof h->def);
                memcpy(h->def, d, k);
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    if (text)
        *text = buf;
    else
        free(buf);
    return n;
}

static void test_help_lists_what_parses(void **state)
{
    (void)state;
    /* Every option any command's help names. */
    char all[128][32];
    size_t nall = 0;
    help_opt h[64];
    for (size_t c = 0; c < NCMDS; c++) {
        char *text;
        size_t n = help_options(k_cmds[c].cmd, h, 64, &text);
        char *usage = xasprintf("usage: engine %s [options]", k_cmds[c].name);
        assert_true(strncmp(text, usage, strlen(usage)) == 0);
        free(usage);
        free(text);
        assert_true(n >= 2); /* something besides --help */
        for (size_t i = 0; i < n; i++) {
            bool seen = false;
            for (size_t j = 0; j < nall && !seen; j++)
                seen = strcmp(all[j], h[i].name) == 0;
            if (!seen) {
                assert_true(nall < 128);
                memcpy(all[nall++], h[i].name, sizeof all[0]);
            }
        }
    }
    assert_true(nall > 30);
    for (size_t c = 0; c < NCMDS; c++) {
        int cmd = k_cmds[c].cmd;
        size_t n = help_options(cmd, h, 64, NULL);
        /* Each option once per command (options described twice in the table, per command, show
         * the command's own row only). */
        for (size_t i = 0; i < n; i++)
            for (size_t j = i + 1; j < n; j++)
                assert_string_not_equal(h[i].name, h[j].name);
        for (size_t a = 0; a < nall; a++) {
            const help_opt *listed = NULL;
            for (size_t i = 0; i < n && !listed; i++)
                if (strcmp(h[i].name, all[a]) == 0)
                    listed = &h[i];
            /* An option that takes a value gets one (the help shows META for those). */
            bool valued = listed ? listed->meta[0] != '\0' : false;
            if (!listed)
                for (size_t c2 = 0; c2 < NCMDS && !valued; c2++) {
                    help_opt h2[64];
                    size_t n2 = help_options(k_cmds[c2].cmd, h2, 64, NULL);
                    for (size_t i = 0; i < n2; i++)
                        if (strcmp(h2[i].name, all[a]) == 0 && h2[i].meta[0])
                            valued = true;
                }
            bool optional = listed && listed->meta[0] == '[';
            char *args = xasprintf("--%s%s %s", all[a], optional ? "=1" : valued ? " 1" : "", k_cmds[c].positional);
            opts_t o;
            char *err;
            int rc = parse_into(cmd, args, &o, &err, NULL);
            bool refused_as_foreign = strstr(err, "not an option of") || strstr(err, "unknown option");
            if (listed ? refused_as_foreign : !refused_as_foreign)
                fprintf(stderr, "engine %s %s: help %s it, parser says (%d) %s\n", k_cmds[c].name, args,
                        listed ? "lists" : "does not list", rc, err);
            assert_true(listed ? !refused_as_foreign : refused_as_foreign);
            if (!listed)
                assert_int_equal(rc, EXIT_INPUT);
            if (strcmp(all[a], "help") == 0)
                assert_int_equal(rc, -1);
            free(err);
            free(args);
            release(&o);
        }
    }
}

/* A default the help shows is the value the parser starts from. */
static void check_default(int cmd, const char *name, int64_t actual)
{
    help_opt h[64];
    size_t n = help_options(cmd, h, 64, NULL);
    for (size_t i = 0; i < n; i++)
        if (strcmp(h[i].name, name) == 0) {
            int64_t v;
            if (parse_i64(h[i].def, &v) || v != actual)
                fprintf(stderr, "engine %s --%s: help says default %s, the parser uses %lld\n", cmd_name(cmd), name,
                        h[i].def, (long long)actual);
            assert_int_equal(parse_i64(h[i].def, &v), 0);
            assert_int_equal(v, actual);
            return;
        }
    fprintf(stderr, "engine %s: the help does not list --%s\n", cmd_name(cmd), name);
    fail();
}

static void test_help_defaults(void **state)
{
    (void)state;
    const int cmds[] = {CMD_BENCH, CMD_TUNE, CMD_VERIFY, CMD_MERGE};
    for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++) {
        opts_t o;
        accepts(cmds[c], cmds[c] == CMD_MERGE ? "a.jsonl" : "x.json", &o);
        help_opt h[64];
        size_t n = help_options(cmds[c], h, 64, NULL);
        for (size_t i = 0; i < n; i++) {
            const char *nm = h[i].name;
            if (strcmp(nm, "runs") == 0)
                check_default(cmds[c], nm, o.runs);
            else if (strcmp(nm, "warmup") == 0)
                check_default(cmds[c], nm, o.warmup);
            else if (strcmp(nm, "iters") == 0)
                check_default(cmds[c], nm, o.iters);
            else if (strcmp(nm, "top") == 0)
                check_default(cmds[c], nm, o.top);
            else if (strcmp(nm, "timeout") == 0)
                check_default(cmds[c], nm, (int64_t)o.timeout_s);
            else if (strcmp(nm, "seed") == 0)
                check_default(cmds[c], nm, (int64_t)o.seed);
            else if (strcmp(nm, "size") == 0 || strcmp(nm, "m") == 0 || strcmp(nm, "k") == 0)
                check_default(cmds[c], nm, o.shape.m);
            else if (strcmp(nm, "device") == 0)
                check_default(cmds[c], nm, o.device);
            else if (strcmp(nm, "alpha") == 0 || strcmp(nm, "beta") == 0) {
                double v = strtod(h[i].def, NULL);
                assert_true(v == (nm[0] == 'a' ? o.alpha : o.beta));
            } else if (strcmp(nm, "format") == 0)
                assert_int_equal(report_format_parse(h[i].def), o.format);
        }
        release(&o);
    }
    /* The --help option prints the same text on stdout and tells the caller to exit. */
    for (size_t c = 0; c < NCMDS; c++) {
        opts_t o;
        char *out, *err;
        assert_int_equal(parse_into(k_cmds[c].cmd, "--help", &o, &err, &out), -1);
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        cli_help(k_cmds[c].cmd, k_cmds[c].name, f);
        fclose(f);
        assert_string_equal(out, buf);
        assert_string_equal(err, "");
        free(buf);
        free(out);
        free(err);
        release(&o);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_size_and_dims),
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_devices),
        cmocka_unit_test(test_shard),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_words),
        cmocka_unit_test(test_set),
        cmocka_unit_test(test_options_and_arguments),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_help_lists_what_parses),
        cmocka_unit_test(test_help_defaults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
