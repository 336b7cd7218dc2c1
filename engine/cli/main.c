/* main.c — the command line's entry point: finds the command, lets cli.c parse its options, and
 * hands over to the module that does the work. Nothing else lives here. */
#include "cli.h"
#include "compile.h"
#include "err.h"
#include "info.h"
#include "jitlog.h"
#include "merge.h"
#include "paths.h"
#include "pickcmd.h"
#include "run.h"
#include "serve.h"
#include "util.h"
#include "tune.h"
#include "warmcmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;
    int cmd;
    int (*main)(const opts_t *o);
    const char *summary; /* NULL: not listed (internal) */
} command;

static const command k_commands[] = {
    {"bench", CMD_BENCH, run_bench, "verify, then time each config beside cuBLAS (no CONFIG: the default walk)"},
    {"verify", CMD_VERIFY, run_verify, "check each config at many shapes, beta = 0 and beta != 0"},
    {"compile", CMD_COMPILE, compile_main, "compile only (no GPU needed); print registers, spills, shared memory"},
    {"tune", CMD_TUNE, tune_main, "search a space of tile parameters; log, rank, and write the best config"},
    {"merge", CMD_MERGE, merge_main, "join tune logs (shards, machines) and rank their points again"},
    {"cache", CMD_CACHE, info_cache, "info | clear: what the CUBIN cache holds, or empty it"},
    {"info", CMD_INFO, info_main, "the GPU, its peaks, and the driver, NVRTC and cuBLAS versions"},
    {"pick", CMD_PICK, pickcmd_main, "the config --auto would run at each shape, the candidates weighed and why (no GPU needed)"},
    {"warm", CMD_WARM, warm_main, "compile every wisdom entry of the GPU into the CUBIN cache, in parallel"},
    {"__worker", CMD_WORKER, serve_main, NULL},
};
#define NCOMMANDS (sizeof k_commands / sizeof k_commands[0])

static void usage_main(FILE *f)
{
    fprintf(f, "usage: engine <command> [options] [CONFIG...]\n"
               "\n"
               "Turns JSON tile configs into GPU kernels at run time (NVRTC), verifies them against cuBLAS\n"
               "and times them beside it.\n"
               "\n"
               "commands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (k_commands[i].summary)
            fprintf(f, "  %-9s %s\n", k_commands[i].name, k_commands[i].summary);
    fprintf(f, "\n"
               "CONFIG is a path to a .json file, a shipped config's name (ldg_wider2), a directory of\n"
               "configs, or @LIST, a file of config paths one per line. `engine COMMAND --help` lists\n"
               "every option.\n"
               "\n"
               "exit codes: 0 ok; 1 a verification failed; 2 bad input (usage, config, constraint, shape,\n"
               "arch, a config that fails to compile, a corrupt log); 3 CUDA or system failure (no driver or\n"
               "GPU, out of memory, kernel fault, a kernel that timed out). With several configs a bad one is\n"
               "reported and skipped, and the exit code is the worst outcome.\n");
}

static void out_of_memory(size_t n)
{
    fprintf(stderr, "engine: out of host memory allocating %zu bytes\n", n);
    exit(EXIT_SYSTEM);
}

int main(int argc, char **argv)
{
    util_set_oom(out_of_memory);
    err_t err;
    err_clear(&err);
    if (paths_init(argv[0], &err)) { /* no host memory for the directories' names: exit 3, as xoom's */
        err_print(stderr, &err);
        return err.code;
    }
    jitlog_init(false);
    int rc;
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage_main(argc < 2 ? stderr : stdout);
        paths_free();
        return argc < 2 ? EXIT_INPUT : EXIT_OK;
    }
    const command *c = NULL;
    for (size_t i = 0; i < NCOMMANDS && !c; i++)
        if (strcmp(k_commands[i].name, argv[1]) == 0)
            c = &k_commands[i];
    if (!c) {
        fprintf(stderr, "engine: unknown command \"%s\" (commands: bench, verify, compile, tune, merge, cache, info, pick, warm)\n",
                argv[1]);
        paths_free();
        return EXIT_INPUT;
    }
    opts_t o;
    rc = cli_parse(c->cmd, c->name, argc - 1, argv + 1, &o);
    if (rc == 0)
        rc = c->main(&o);
    else if (rc < 0)
        rc = EXIT_OK; /* --help */
    cli_free(&o);
    paths_free();
    return rc;
}
