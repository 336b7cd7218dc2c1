/* config.h — a JSON tile config, read strictly and validated against its template before anything
 * is compiled or any GPU work starts.
 *
 *   {"name": "bank_pad_vec", "template": "blocktile", "dtype": "f32",
 *    "params": {"BM": 64, ...}, "description": "...", "accuracy": "f32"}
 *
 * name and template are required; dtype defaults to "f32", params to {}, description to "", accuracy
 * (the class verification holds the kernel to: "f32", "f64" or "tf32") to the template's, else the
 * dtype's own. */
#ifndef ENGINE_CONFIG_H
#define ENGINE_CONFIG_H

#include "accuracy.h"
#include "err.h"
#include "template.h"

#include <stdbool.h>
#include <stdint.h>

/* One override: `--set KEY=VALUE`, or KEY=VALUE on an @LIST line (entries.h). */
typedef struct {
    char *text; /* as given: "BM=128" */
    char *key;
    int64_t value;
    const char *file; /* the @LIST file that gave it, borrowed (it outlives the load); NULL: --set */
    int line;         /* its line there: the override's errors name FILE:LINE, where it is fixed */
} param_set;

/* Parse "KEY=VALUE" (VALUE a whole integer). Sets err (EXIT_INPUT) on a malformed override.
 * param_set_parse_at: the same for an override of FILE's LINE (file NULL: the command line's --set),
 * which its errors, here and when a config is loaded with it, name. */
int param_set_parse(const char *text, param_set *out, err_t *err);
int param_set_parse_at(const char *text, const char *file, int line, param_set *out, err_t *err);
void param_set_free(param_set *s);

typedef enum { FROM_DEFAULT = 0, FROM_FILE, FROM_SET } param_origin;

typedef struct {
    char *path;        /* as given on the command line */
    char *text;        /* the file, kept to locate members for error messages */
    char *name;
    char *description;
    dtype_t dtype;
    template_t tpl;
    int64_t *values;     /* final value of each template param, aligned with tpl.params */
    param_origin *origin;
    char *overrides;     /* "--set BM=128 --set TM=4" as applied (for reruns), or "" */
    char *label;         /* name, or name[BM=128,TM=4] when overridden: what rows show */
    int64_t compile_cost; /* the template's estimate of its NVRTC time (>= 1), to order compiles */
    acc_kind accuracy;    /* "accuracy": the class verification holds it to (accuracy.h) */
    int arch;             /* the target it was loaded and checked for, which its kernels are built for */
} config_t;

/* Load path, apply the overrides that name this template's params (every override must name one),
 * apply dtype_override when not NULL, and check every rule of the template. arch is the target,
 * visible to constraints as ARCH. On failure err names the file and the line/column of the member
 * at fault and the rule it breaks; cfg is left empty. */
int config_load(const char *path, const param_set *sets, size_t nsets, const char *dtype_override,
                int arch, config_t *cfg, err_t *err);
/* The same where arch was guessed from the GPU rather than named by --arch: the target becomes
 * arch_for_template's for the config's template (sm_90a for an "arch_specific" one on sm_90). */
int config_load_guess(const char *path, const param_set *sets, size_t nsets, const char *dtype_override, int arch,
                      bool guessed, config_t *cfg, err_t *err);
/* The same from a config's text in memory (path names it in errors; the fuzzers use this). */
int config_parse(const char *path, const char *text, size_t len, const param_set *sets, size_t nsets,
                 const char *dtype_override, int arch, config_t *cfg, err_t *err);
/* The same where arch was guessed (config_load_guess). */
int config_parse_guess(const char *path, const char *text, size_t len, const param_set *sets, size_t nsets,
                       const char *dtype_override, int arch, bool guessed, config_t *cfg, err_t *err);
void config_free(config_t *cfg);

/* The params as "BM=64 BN=64 ..." (every param, in template order), newly allocated in try_*
 * memory (util.h): NULL when the host has none. */
char *config_params_try(const config_t *cfg);
/* The plan request of cfg at target `to` (template_plan): its template, path (errors), name
 * (the pasted source), values and dtype. */
plan_req config_plan_req(const config_t *cfg, const plan_target *to);

#endif
