/* select.h — the selection model: which measured config to run at a shape that wisdom holds no
 * entry for.
 *
 * Nearest-neighbour lookup in log(M, N, K) alone (wisdom.h) weighs the three sides equally; what
 * decides a config's speed is how its tiles fill the GPU at the shape, how deep K runs per tile and
 * which paths the shape's alignment allows. So for a shape without an exact entry the candidates
 * are the configs of the SELECT_K entries nearest in log distance (each entry's config with its
 * overrides, measured at the entry's own shape), and each is given an estimated time there:
 *
 *   blocks  = the main launch's grid (the template's plan at the shape), w warps each, at most
 *             cdiv(M, tm) cdiv(N, tn) in x and y (blocks of a grid rounded up to supertiles idle),
 *             `occ` of them resident per SM (the entry's measured occupancy, else estimated)
 *   n       = cdiv(blocks, SMs)                         blocks on the busiest SM
 *   busy    = min(1, min(n, occ) * w / SELECT_WSAT)     how well n concurrent blocks fill an SM
 *   work    = n * 2 rup(M, tm) rup(N, tn) rup(K, tk) / blocks    padded flops of the busiest SM
 *             (tm x tn x tk: the template's "model" tile)
 *   t       = work / (peak per SM * eff * busy) + cdiv(n, occ) * SELECT_T_ROUND
 *           + for each launch besides the main one: SELECT_T_LAUNCH + its bytes / DRAM rate (select_extra_time)
 *           + atomics (the template's count of elements added with atomics) * SELECT_T_ATOMIC / SMs
 *           + M N (bytes of an element) / DRAM rate         writing C, which no tile shape avoids
 *   times the template's "slow" percentage where the shape takes a narrower path.
 * A strided batch of B products is planned as such (the packed layout of the problem's op and B
 * products: the templates put the batch in grid z), so blocks counts every product's tiles and work
 * and C's bytes are B times one product's: 512 products of 128^3 fill 132 SMs with tiles that one
 * product would leave mostly idle.
 *
 * eff, the one unknown per candidate, is fitted so that the model gives the entry's measured time at
 * the entry's own shape (its op and batch): each candidate carries its own efficiency, and the model moves it to the new
 * shape by tiles, waves, fill and depth. Writing C is a term of its own, so that an entry measured
 * where K is small (C's bytes a large part of its time) is not credited with a low compute rate. The lowest score, the estimate times (1 + SELECT_DIST_PENALTY
 * x the entry's log distance), wins: the further from where it was fitted, the less it is trusted. The constants were fitted on the
 * H100 over five random shape suites (bench/random_shapes.sh, seeds 1, 5, 11, 13, 17, every shipped
 * entry timed at every shape: bench/data/h100-random-*-oracle-*.jsonl), leaving one seed out at a
 * time with the others' best entries in wisdom (their points are shipped: <device>.dev-seeds.json),
 * and are judged on other seeds (docs/NOTES.md, "Selection that generalises"). Needs no GPU: the SM count, the arch's limits and the
 * wisdom are enough (`engine pick`). */
#ifndef ENGINE_SELECT_H
#define ENGINE_SELECT_H

#include "config.h"
#include "err.h"
#include "shape.h"
#include "template.h"
#include "wisdom.h"

#include <stdbool.h>
#include <stddef.h>

#define SELECT_K 8            /* entries weighed: the nearest ones */
#define SELECT_WSAT 24.0      /* warps an SM needs resident to run at full rate */
#define SELECT_T_ROUND 1e-6   /* s: start and end of each round of resident blocks */
#define SELECT_T_LAUNCH 2e-6  /* s: each extra launch (scale_c, reduce, pack_b) */
#define SELECT_T_ATOMIC 1e-9  /* s: one atomic addition into C, per SM */
#define SELECT_EFF_UNKNOWN 0.5 /* efficiency of an entry that was never measured (tflops 0) */
#define SELECT_DIST_PENALTY 1.0 /* an estimate counts (1 + this x distance) times, distance in natural-log
                                 * units (0.69 a doubling of a side): far from the entry it was fitted
                                 * at, the model is trusted less */
#define SELECT_ALIGN_PENALTY 0.25 /* and (1 + this x operands) times, for each of A, B, C whose alignment
                                   * class differs from the problem's where a leading dimension or a
                                   * pointer set either (select_align_operands): three operands
                                   * off count about as a doubling of a side (1.75 against 1.69) */

/* The GPU the model is for. */
typedef struct {
    int arch;           /* target, as arch_parse gives it */
    bool arch_guessed;  /* no --arch: candidates load for their template's target (arch_for_template) */
    int sms;            /* streaming multiprocessors */
    double clock_hz;    /* SM clock the peaks are taken at (it cancels out of the fitted efficiency) */
    double dram_bps;    /* for the extra launches' bytes */
    int64_t smem_limit; /* per-block opt-in shared memory */
} select_gpu;

/* The model's figures for the GPU of `arch` (the arch table's limits), `sms` SMs. */
void select_gpu_init(select_gpu *g, int arch, int sms, double clock_hz);

/* One candidate: a wisdom entry's config with its overrides. */
typedef struct {
    const wisdom_entry *entry;
    const wisdom_file *file;
    char *path;         /* the config's path, resolved (pick.c) */
    char *label;        /* name[OVERRIDES] */
    config_t cfg;       /* a shallow copy of an earlier candidate's when cfg_shared (same config, same set) */
    bool cfg_shared;
    bool loaded;        /* cfg holds the config; false: it did not load (err_text says why), never chosen */
    char err_text[256];
    int occ;            /* blocks per SM: the entry's "occ", else an estimate */
    bool occ_estimated;
    double t_entry;     /* s, the entry's measured time at its shape; 0: not measured */
    double eff;         /* fitted efficiency (see above) */
    double logs[4];     /* log M, N, K and batch of the entry (0 counted as 1): the distance without a log a lookup */
    layout_align align; /* the entry's alignment class (wisdom_align) */
    layout_align align_pk; /* the packed layout's at the entry's op, batch and shape */
    bool align_packed;  /* align is align_pk (wisdom_align_packed) */
} select_cand;

typedef struct {
    select_gpu gpu;
    dtype_t dtype;
    int op;             /* the op estimates are planned in (2 ta + tb, layout.h; 0: NN): the caller sets it
                         * after select_init (pick.c: the problem's) */
    int exact_op;       /* -1 (select_init's): an entry of any op at the very shape is exact; else only
                         * one of this op (pick.c: an op's few entries weighed with the NN ones, whose
                         * shapes say nothing exact of the op) */
    select_cand *cands;
    size_t ncands;
} select_t;

/* Load the candidates: entries[i] of files[i] with its config at paths[i] (taken over, freed by
 * select_free). A config that does not load is kept as a candidate that is never chosen, with its
 * reason; one that did not load for lack of host memory fails the whole: -1 with ERR_ALLOC in err
 * (select_free s then, as always). */
int select_init(select_t *s, const select_gpu *g, dtype_t dtype, const wisdom_entry *const *entries,
                const wisdom_file *const *files, char **paths, size_t n, err_t *err);
void select_free(select_t *s);

/* Estimated seconds of candidate c at the shape (a batch of `batch` products, 0 or 1: one), in s->op;
 * < 0 when it cannot run it (a plan refused). select_estimate is one product. */
double select_estimate_batch(const select_t *s, size_t c, const shape_t *sh, int64_t batch);
double select_estimate(const select_t *s, size_t c, const shape_t *sh);

/* Seconds the model gives the launches of plan p besides its main one: each SELECT_T_LAUNCH plus its
 * bytes at g's DRAM rate, the elements its "traffic" gives (template.h), else two a thread (a
 * scale_c or reduce pass that reads and writes an element each). */
double select_extra_time(const select_gpu *g, const plan_t *p);

typedef struct {
    size_t cand;    /* index into cands */
    double dist;    /* log distance of its entry from the shape */
    double t_est;   /* s; < 0: cannot run the shape */
    int align_off;  /* operands whose alignment class counts against it (select_align_operands) */
} select_weighed;

typedef struct {
    size_t chosen;  /* index into cands */
    bool exact;     /* an entry of this very shape: no model */
    select_weighed w[SELECT_K];
    size_t nw;      /* candidates weighed (0 when exact) */
    int64_t batch;  /* products of the problem chosen for (1: one) */
    layout_align align; /* the problem's alignment class chosen for */
    layout_align align_pk; /* the packed layout's at the problem's op, batch and shape */
    bool align_packed;  /* align is align_pk */
} select_result;

/* A weighed candidate's score: its estimate, discounted for distance and for operands of another
 * alignment class (above). */
double select_score(const select_weighed *w);

/* What select_pick_in and its kin, and select_tile_variant, return when the host had no memory
 * for their scratch arrays (try_* memory: the library's ENGINE_ERROR_OUT_OF_MEMORY). */
#define SELECT_NOMEM (-2)

/* The choice for sh: the exact entry when there is one (the first in candidate order), else the
 * lowest score among the SELECT_K nearest entries whose config can run sh (those refused are passed
 * over). Returns -1 when no candidate can run sh, SELECT_NOMEM when the host had no memory. */
int select_pick(const select_t *s, const shape_t *sh, select_result *r);
/* The same for a strided batch of `batch` products (0 or 1: one): an exact entry has the shape and
 * the batch; the distance has the batch as a fourth coordinate (select_distance). */
int select_pick_batch(const select_t *s, const shape_t *sh, int64_t batch, select_result *r);
/* The same for a problem whose operands have alignment class `al` (layout.h, elements; NULL: the
 * packed layout's at sh): an exact entry has the class too, and the others' scores count the
 * operands select_align_operands names. */
int select_pick_align(const select_t *s, const shape_t *sh, int64_t batch, const layout_align *al, select_result *r);
/* The same where the problem's layout is known (lay, of s->op and `batch` products at sh; NULL: one
 * of class al): every candidate is planned in it, so an entry whose template refuses it (tc32 takes
 * no transpose without SWAP) is never chosen, not even an exact one. */
int select_pick_in(const select_t *s, const shape_t *sh, int64_t batch, const layout_align *al, const layout_t *lay,
                   select_result *r);

/* Of A, B, C, how many have another alignment class in candidate c than in the problem (al; pk:
 * the packed layout's at the problem's shape). An operand whose class is the packed layout's on
 * both sides (the entry's at its shape, the problem's at its own) is not counted: the model plans
 * every candidate packed, at the entry's shape when it fits the efficiency and at the problem's when
 * it estimates, so what a shape's row lengths do to the vector paths it already sees; what a leading
 * dimension or a pointer did, it does not. */
int select_align_operands(const select_cand *c, const layout_align *al, const layout_align *pk);

/* A config one step from a candidate's in one tuning dimension: --auto-tune times these beside the
 * model's candidates, so a shape whose nearest entries were tuned at another depth of split or
 * another tile is repaired by one tune (select_neighbours). */
typedef struct {
    char key[16];  /* the param changed: SPLITK, BM, BN, BK or STAGES */
    int64_t value; /* its new value */
    char key2[16]; /* a second param scaled with it ("" none): a tile side's THREADS or warp tile */
    int64_t value2;
    double t_est;  /* s: the model's estimate with the candidate's efficiency, occupancy scaled */
} select_variant;

/* The variants of candidate c's config that its template allows (params, constraints) and that plan
 * at sh in layout lay (of s->op and lay->batch products; NULL: packed), fastest estimate first;
 * writes at most max to out and returns how many. SPLITK (where >= 1) is halved, doubled and
 * quadrupled, BM, BN and BK halved and doubled (a tile side with THREADS, or its warp tile WM / WN,
 * by the same factor where the side alone breaks a rule), STAGES one less and one more. */
size_t select_neighbours(const select_t *s, size_t c, const shape_t *sh, const layout_t *lay, select_variant *out,
                         size_t max, bool *nomem);

/* v's overrides as text, "BM=64" or "BM=64,THREADS=64" (what a label, --explain and a plan's
 * description show); returns buf. */
char *select_variant_text(const select_variant *v, char *buf, size_t len);

/* The chosen candidate of r with a tile side halved (its BM or BN at half; a side with THREADS or its
 * warp tile where alone it breaks a rule), where the model estimates that variant at least `gain`
 * times faster at sh than the candidate itself: the shape pads the candidate's tile (M or N well
 * under its BM or BN: 64 tokens through a 128-row tile). Only halving, and only where a quarter
 * of the tile or more is padding (the side's own rounding up): there the model's padding term is
 * the first-order effect; the fastest such variant. 1: one, in out; 0: none (or an exact choice);
 * SELECT_NOMEM: the host had no memory to look. */
int select_tile_variant(const select_t *s, const select_result *r, const shape_t *sh, const layout_t *lay, double gain,
                         select_variant *out);

/* Log distance of entry e from sh at `batch` products: wisdom_distance with ln(batch ratio) as a
 * fourth coordinate, so 512 products of 128^3 are as far from one as 128x128x128 from 65536x128x128
 * would be: the model counts the batch's blocks (waves), the distance only says how far the
 * entry's fitted efficiency is carried. */
double select_distance(const wisdom_entry *e, const shape_t *sh, int64_t batch);

/* Why the choice won, for people: one line per candidate weighed, newly allocated (try_* memory,
 * util.h: NULL when the host had none). */
char *select_explain(const select_t *s, const shape_t *sh, const select_result *r);

#endif
