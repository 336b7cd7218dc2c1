/* jsonloc.h — where in a JSON text a member lives.
 *
 * jansson reports line and column only for syntax errors; once a document is parsed its values
 * carry no position. Config errors must still point at the offending member
 * ("configs/x.json:4:9: ..."), so we scan the original text again, which jansson has already
 * validated, and find the member by its path of object keys. */
#ifndef ENGINE_JSONLOC_H
#define ENGINE_JSONLOC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Find the member reached by the object keys path[0..depth) and store the 1-based line and column
 * of its key (want_key) or of its value. Returns 0 when found, -1 otherwise (line/col untouched). */
int jsonloc_find(const char *text, const char *const *path, size_t depth, bool want_key, int *line,
                 int *col);

/* The same as a byte offset, starting from the value at byte offset start of text instead of the
 * top (so members of array elements can be reached: see jsonloc_element). depth 0 gives the
 * offset of that value itself. Returns 0 when found, -1 otherwise (off untouched). */
int jsonloc_offset(const char *text, size_t start, const char *const *path, size_t depth, bool want_key,
                   size_t *off);

/* Byte offset of element index (0-based) of the array that is the value at byte offset start of
 * text. Returns 0 when the array has that element, -1 otherwise (off untouched). */
int jsonloc_element(const char *text, size_t start, size_t index, size_t *off);

/* Byte offset of the element after the one at byte offset elem of an array, for walking a long
 * array in one pass (jsonloc_element from the start each time is quadratic). Returns 0 when there
 * is one, -1 at the array's end (next untouched). */
int jsonloc_next_element(const char *text, size_t elem, size_t *next);

/* Line and column (1-based, counting UTF-8 characters) of byte offset off in text. */
void jsonloc_position(const char *text, size_t off, int *line, int *col);

/* The same, moved on from byte offset from (where *line, *col are) to to >= from. */
void jsonloc_advance(const char *text, size_t from, size_t to, int *line, int *col);

/* What a value is, in the words of error messages: "an object", "an integer", "a number with a
 * fraction", "null", ... (configs, tune logs and wisdom files all say it the same way). */
const char *jsonloc_kind(const json_t *v);

#endif
