/* wisdom_impl.h — what wisdom.c lends wisdom_write.c (the reading and the writing halves of
 * wisdom.h share the entry's copy and free, and the rules of a shape's and a parameter's text).
 * Not part of the module's interface: include it from wisdom*.c only. */
#ifndef ENGINE_WISDOM_IMPL_H
#define ENGINE_WISDOM_IMPL_H

#include "wisdom.h"

#include <stdbool.h>
#include <stddef.h>

void wisdom_entry_free(wisdom_entry *e);
/* A deep copy: dst owns its strings and sets. -1 (dst empty) when the host has no memory for it. */
int wisdom_entry_copy(wisdom_entry *dst, const wisdom_entry *src);
void wisdom_file_free(wisdom_file *f);
/* "MxNxK". */
void wisdom_format_shape(const shape_t *s, char *buf, size_t len);
/* A key of "set": a parameter name, as --set takes it (letters, digits, _). */
bool wisdom_param_name_ok(const char *s);

#endif
