/* template_impl.h — what template.c lends template_rules.c (the reading of a template's block: its
 * loader, the placing of its errors, ERR_ALLOC for memory the host did not have). Not part of the
 * module's interface: include it from template*.c only. */
#ifndef ENGINE_TEMPLATE_IMPL_H
#define ENGINE_TEMPLATE_IMPL_H

#include "template.h"

#include "jsonrd.h"

#include <jansson.h>

typedef struct {
    const template_t *t;
    jsonrd rd;      /* the parameter block, placed in the file; errors point at members' keys */
    jsonrd_obj top; /* the block's object */
    /* RULES_FILE beside the template, read and checked whole when a shared set is first named;
     * NULL until then. */
    char *rules_path, *rules_text;
    json_t *rules;
} loader;

/* An error at the member path[0..depth) of the block (the nearest that can be found). */
#define load_fail(ld, path, depth, ...) jsonrd_fail_path(&(ld)->rd, path, depth, true, __VA_ARGS__)

/* The host had no memory for what the template holds: ERR_ALLOC, -1. */
static inline int no_memory(loader *ld, const char *what)
{
    return err_set(ld->rd.err, ERR_ALLOC, ld->t->path, 0, 0, "no host memory %s", what), -1;
}

/* "constraints" or "requires" (arr, at key of the block; NULL: none) into out[0..n): rules written
 * in place and shared sets named from RULES_FILE. 0, or -1 with the error in ld->rd.err. */
int template_load_rules(loader *ld, json_t *arr, const char *key, tpl_rule **out, size_t *n);

#endif
