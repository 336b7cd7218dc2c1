/* cli.h — the command line: one table of options (name, value parser, the commands that take it,
 * its help line and default) from which both parsing and every `--help` text come; CONFIG
 * arguments are expanded into entries (configlist.h).
 *
 * Parsing only checks and stores values; each command (run.c, compile.c, tune.c, info.c) reads
 * the options it takes from opts_t. */
#ifndef ENGINE_CLI_H
#define ENGINE_CLI_H

#include "config.h"
#include "entries.h"
#include "layout.h"
#include "shape.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* One bit per command: an option's `cmds` mask says which commands take it. */
enum {
    CMD_BENCH = 1 << 0,
    CMD_VERIFY = 1 << 1,
    CMD_COMPILE = 1 << 2,
    CMD_INFO = 1 << 3,
    CMD_TUNE = 1 << 4,
    CMD_MERGE = 1 << 5,
    CMD_CACHE = 1 << 6,
    CMD_WORKER = 1 << 7, /* the hidden `engine __worker` (serve.c) */
    CMD_PICK = 1 << 8,
    CMD_WARM = 1 << 9,
};

#define CLI_MAX_SETS 64
#define CLI_MAX_DEVICES 64

typedef struct {
    int cmd;              /* one CMD_* bit */
    const char *cmd_name; /* "bench", ... */
    shape_t shape;        /* --size / --m --n --k */
    bool shape_given;
    shape_t shapes[SHAPE_MAX_LIST]; /* --shapes of verify, tune and bench; bench --sizes */
    size_t nshapes;
    double alpha, beta;
    bool alpha_given, beta_given;
    int warmup, iters, runs;
    uint64_t seed;
    char *set_text[CLI_MAX_SETS]; /* --set arguments as given (tune reads them as ranges) */
    param_set sets[CLI_MAX_SETS]; /* the same, parsed as KEY=VALUE (every command but tune) */
    size_t nsets;
    int arch;   /* 0: the GPU's (sm_90 when compiling without one) */
    int device; /* --device */
    int devices[CLI_MAX_DEVICES]; /* --devices; ndevices = 0 and all_devices false: device 0 */
    size_t ndevices;
    bool all_devices;
    int format; /* report_format */
    bool cross_check, verbose, bandwidth, dry_run, resume, force, no_cache;
    bool auto_pick;        /* bench/verify --auto: wisdom chooses the config per shape */
    bool explain;          /* --explain: print the selection model's weighing for each shape */
    double auto_tune_s;    /* --auto-tune[=SECONDS]: GPU seconds per shape without an entry; 0: off */
    const char *device_name; /* pick --device-name: the GPU whose wisdom to use */
    int sms;               /* pick --sms: SM count for the model; 0: the GPU's, else the arch's usual */
    const char *wisdom;    /* --wisdom DIR: where wisdom is read (bench/verify) or recorded (tune) */
    const char *dtype;     /* --dtype override, or NULL */
    const char *emit;      /* compile --emit DIR */
    const char *cache_dir; /* --cache DIR, or NULL: the default */
    const char *log;       /* tune --log / merge --log */
    const char *emit_best; /* tune / merge --emit-best */
    const char *strategy;  /* tune --strategy, NULL: from --budget */
    int jobs;              /* NVRTC threads; 0: the core count */
    double timeout_s;      /* per point */
    int top;               /* finalists (tune) / rows shown (merge) */
    int64_t budget;        /* tune: points to evaluate at most, 0: all */
    int64_t max_spill;     /* -1: no filter */
    double min_occupancy;  /* percent, 0: no filter */
    int shard_i, shard_n;  /* --shard I/N; shard_n = 0: none */
    /* The layout (layout.h; cli_layout makes it for a shape): --op, --lda/--ldb/--ldc (0: packed;
     * ld_plus: the packed row length plus the value), --batch, --stride-a/-b/-c (-1: the products
     * packed one after the other, rows ld apart). */
    int ta, tb;
    int64_t ld[3];
    bool ld_plus[3];
    int64_t batch;
    int64_t stride[3];
    entry_t *entries;      /* CONFIG arguments, expanded */
    size_t nentries;
    char **args; /* positional arguments of merge (logs) and cache (subcommand), not expanded */
    size_t nargs;
} opts_t;

/* Parse argv (argv[0] is the command name) for command `cmd` into o, with that command's
 * defaults. Returns 0, EXIT_INPUT after printing one line to stderr, or -1 when --help printed
 * the help (the caller exits 0). */
int cli_parse(int cmd, const char *cmd_name, int argc, char **argv, opts_t *o);
void cli_free(opts_t *o);

/* The help text of one command, made from the option table. */
void cli_help(int cmd, const char *cmd_name, FILE *f);

/* Print "engine: <message>" to stderr; returns EXIT_INPUT, so `return usage_error(...)` reads well. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The layout the options give at shape s, checked (layout_check: err names the field and rule). */
int cli_layout(const opts_t *o, const shape_t *s, layout_t *lay, err_t *err);

/* Check a shape against what the kernels can index; prints the error. */
int cli_check_shape(const shape_t *s);

#endif
