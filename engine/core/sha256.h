/* sha256.h — SHA-256 (FIPS 180-4), streaming and one-shot. Used for the on-disk CUBIN cache: the key
 * that names an entry and the checksum that proves its payload intact. No global state: any number of
 * contexts may be in use at once, from any thread. */
#ifndef ENGINE_SHA256_H
#define ENGINE_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_LEN 32 /* bytes */
#define SHA256_HEX_LEN 64    /* characters, without the terminating NUL */

typedef struct {
    uint32_t h[8];   /* intermediate hash value H0..H7 */
    uint64_t bytes;  /* message length so far, in bytes (the padding encodes it in bits, mod 2^64) */
    uint8_t buf[64]; /* the message block being filled */
    size_t nbuf;     /* bytes held in buf, 0..63 between calls */
} sha256_ctx;

/* Start a new message. */
void sha256_init(sha256_ctx *c);
/* Append n bytes of data to the message (data may be NULL when n is 0). Any split of a message
 * into calls gives the same digest. */
void sha256_update(sha256_ctx *c, const void *data, size_t n);
/* Pad, write the 32-byte digest to out, and wipe the context; sha256_init it again to reuse it. */
void sha256_final(sha256_ctx *c, uint8_t out[SHA256_DIGEST_LEN]);
/* Digest of one buffer. */
void sha256(const void *data, size_t n, uint8_t out[SHA256_DIGEST_LEN]);
/* The digest as 64 lowercase hex characters and a terminating NUL. */
void sha256_hex(const uint8_t digest[SHA256_DIGEST_LEN], char out[SHA256_HEX_LEN + 1]);

#endif
