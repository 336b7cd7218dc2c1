/* template_rules.h — a template's rules ("constraints", "requires") and the reader of its block
 * that loads them: template.c reads the block through a rules_loader and hands each rule array
 * here; rules written in place and shared sets named from RULES_FILE (rules.json beside the
 * templates) come back as tpl_rule. Below template.c: nothing here knows template_t. */
#ifndef ENGINE_TEMPLATE_RULES_H
#define ENGINE_TEMPLATE_RULES_H

#include "err.h"
#include "jsonrd.h"

#include <jansson.h>
#include <stddef.h>

typedef struct {
    char *rule; /* expression that must be non-zero */
    char *why;  /* the reason, appended to the error */
} tpl_rule;

#endif

/* The loader's part, for template.c and template_rules.c only (they define TEMPLATE_LOADER before
 * any include): every other module includes this header through template.h, for tpl_rule. */
#if defined(TEMPLATE_LOADER) && !defined(ENGINE_TEMPLATE_LOADER_H)
#define ENGINE_TEMPLATE_LOADER_H

/* The reading of one template's block. */
typedef struct {
    const char *path; /* the template's file, which errors name */
    const char *dir;  /* its directory, where RULES_FILE is looked for */
    jsonrd rd;        /* the parameter block, placed in the file; errors point at members' keys */
    jsonrd_obj top;   /* the block's object */
    /* RULES_FILE beside the template, read and checked whole when a shared set is first named;
     * NULL until then. */
    char *rules_path, *rules_text;
    json_t *rules;
} rules_loader;

/* An error at the member path[0..depth) of the block (the nearest that can be found). */
#define load_fail(ld, path, depth, ...) jsonrd_fail_path(&(ld)->rd, path, depth, true, __VA_ARGS__)

/* The host had no memory for what the template holds: ERR_ALLOC, -1. */
static inline int no_memory(rules_loader *ld, const char *what)
{
    return err_set(ld->rd.err, ERR_ALLOC, ld->path, 0, 0, "no host memory %s", what), -1;
}

/* "constraints" or "requires" (arr, at key of the block; NULL: none) into out[0..n): rules written
 * in place and shared sets named from RULES_FILE. 0, or -1 with the error in ld->rd.err. */
int template_load_rules(rules_loader *ld, json_t *arr, const char *key, tpl_rule **out, size_t *n);

#endif
