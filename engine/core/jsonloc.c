/* jsonloc.c — a forgiving re-scan of an already-valid JSON text, to find members by path. */
#include "jsonloc.h"

#include <string.h>

typedef struct {
    const char *text;
    const char *p;
} scan;

static void ws(scan *s)
{
    while (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r')
        s->p++;
}

/* Skip a string starting at its opening quote; copy its decoded-enough body into buf (escapes are
 * kept as the escaped character, \uXXXX as '?', which is enough to compare ASCII keys). */
static void skip_string(scan *s, char *buf, size_t len)
{
    size_t n = 0;
    s->p++; /* opening quote */
    while (*s->p && *s->p != '"') {
        char c = *s->p++;
        if (c == '\\' && *s->p) {
            c = *s->p++;
            if (c == 'u') {
                for (int i = 0; i < 4 && *s->p; i++)
                    s->p++;
                c = '?';
            }
        }
        if (buf && n + 1 < len)
            buf[n++] = c;
    }
    if (*s->p == '"')
        s->p++;
    if (buf)
        buf[n] = '\0';
}

static void skip_value(scan *s)
{
    ws(s);
    if (*s->p == '"') {
        skip_string(s, NULL, 0);
        return;
    }
    if (*s->p == '{' || *s->p == '[') {
        int depth = 0;
        while (*s->p) {
            if (*s->p == '"') {
                skip_string(s, NULL, 0);
                continue;
            }
            if (*s->p == '{' || *s->p == '[')
                depth++;
            else if (*s->p == '}' || *s->p == ']') {
                depth--;
                if (depth == 0) {
                    s->p++;
                    return;
                }
            }
            s->p++;
        }
        return;
    }
    while (*s->p && *s->p != ',' && *s->p != '}' && *s->p != ']' && *s->p != ' ' && *s->p != '\n' &&
           *s->p != '\r' && *s->p != '\t')
        s->p++;
}

void jsonloc_position(const char *text, size_t off, int *line, int *col)
{
    *line = 1;
    *col = 1;
    jsonloc_advance(text, 0, off, line, col);
}

void jsonloc_advance(const char *text, size_t from, size_t to, int *line, int *col)
{
    int l = *line, c = *col;
    for (size_t i = from; i < to && text[i]; i++) {
        unsigned char ch = (unsigned char)text[i];
        if (ch == '\n') {
            l++;
            c = 1;
        } else if ((ch & 0xC0) != 0x80) {
            c++;
        }
    }
    *line = l;
    *col = c;
}

int jsonloc_offset(const char *text, size_t start, const char *const *path, size_t depth, bool want_key, size_t *off)
{
    scan s = {text, text + start};
    ws(&s);
    if (depth == 0) {
        *off = (size_t)(s.p - text);
        return 0;
    }
    for (size_t level = 0; level < depth; level++) {
        ws(&s);
        if (*s.p != '{')
            return -1;
        s.p++;
        bool found = false;
        for (;;) {
            ws(&s);
            if (*s.p != '"')
                return -1;
            const char *key_at = s.p;
            char key[256];
            skip_string(&s, key, sizeof key);
            ws(&s);
            if (*s.p != ':')
                return -1;
            s.p++;
            ws(&s);
            if (strcmp(key, path[level]) == 0) {
                if (level + 1 == depth) {
                    *off = (size_t)((want_key ? key_at : s.p) - text);
                    return 0;
                }
                found = true;
                break;
            }
            skip_value(&s);
            ws(&s);
            if (*s.p != ',')
                return -1;
            s.p++;
        }
        if (!found)
            return -1;
    }
    return -1;
}

int jsonloc_element(const char *text, size_t start, size_t index, size_t *off)
{
    scan s = {text, text + start};
    ws(&s);
    if (*s.p != '[')
        return -1;
    s.p++;
    for (size_t i = 0;; i++) {
        ws(&s);
        if (*s.p == ']' || *s.p == '\0')
            return -1;
        if (i == index) {
            *off = (size_t)(s.p - text);
            return 0;
        }
        skip_value(&s);
        ws(&s);
        if (*s.p != ',')
            return -1;
        s.p++;
    }
}

int jsonloc_next_element(const char *text, size_t elem, size_t *next)
{
    scan s = {text, text + elem};
    skip_value(&s);
    ws(&s);
    if (*s.p != ',')
        return -1;
    s.p++;
    ws(&s);
    if (*s.p == ']' || *s.p == '\0')
        return -1;
    *next = (size_t)(s.p - text);
    return 0;
}

int jsonloc_find(const char *text, const char *const *path, size_t depth, bool want_key, int *line,
                 int *col)
{
    size_t off;
    if (depth == 0 || jsonloc_offset(text, 0, path, depth, want_key, &off) != 0)
        return -1;
    jsonloc_position(text, off, line, col);
    return 0;
}

const char *jsonloc_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        return "an integer";
    case JSON_REAL:
        return "a number with a fraction";
    case JSON_TRUE:
        return "true";
    case JSON_FALSE:
        return "false";
    default:
        return "null";
    }
}
