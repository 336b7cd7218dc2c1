/* test_sha256.c — FIPS 180-4 / NIST example vectors, the padding boundaries, streaming in uneven
 * pieces against one-shot. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "sha256.h"

static void hex_of(const void *data, size_t n, char out[65])
{
    uint8_t d[SHA256_DIGEST_LEN];
    sha256(data, n, d);
    sha256_hex(d, out);
}

static void test_empty(void **state)
{
    (void)state;
    char hex[65];
    hex_of("", 0, hex);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    hex_of(NULL, 0, hex);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

static void test_abc(void **state)
{
    (void)state;
    char hex[65];
    hex_of("abc", 3, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void test_448_bits(void **state)
{
    (void)state;
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    assert_int_equal(strlen(m), 56);
    char hex[65];
    hex_of(m, strlen(m), hex);
    assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void test_896_bits(void **state)
{
    (void)state;
    const char *m = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrs"
                    "mnopqrstnopqrstu";
    assert_int_equal(strlen(m), 112);
    char hex[65];
    hex_of(m, strlen(m), hex);
    assert_string_equal(hex, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

/* One million 'a', fed in pieces whose sizes cycle through values on both sides of the block size,
 * so the buffer is entered partly full, filled exactly, and bypassed. */
static void test_million_a(void **state)
{
    (void)state;
    static const size_t pieces[] = {1, 63, 64, 65, 1000, 7, 128, 0, 200};
    const size_t total = 1000000;
    char *a = malloc(1000);
    memset(a, 'a', 1000);
    sha256_ctx c;
    sha256_init(&c);
    size_t done = 0;
    for (size_t i = 0; done < total; i++) {
        size_t n = pieces[i % (sizeof pieces / sizeof pieces[0])];
        if (n > total - done)
            n = total - done;
        sha256_update(&c, a, n);
        done += n;
    }
    uint8_t d[SHA256_DIGEST_LEN];
    char hex[65];
    sha256_final(&c, d);
    sha256_hex(d, hex);
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(a);
}

/* Lengths where the padding changes shape: the 0x80 byte and the 8-byte length fit in the last
 * block (<= 55 bytes used) or need one more. Expected digests from Python's hashlib. */
static void test_padding_boundaries(void **state)
{
    (void)state;
    static const struct {
        size_t n;
        const char *hex;
    } cases[] = {
        {55, "e7313d333c272e639f790978283f9eb392e843d0f29b7016828bb1daa4aac70b"},
        {56, "4324d65f3c103567f5589c710bc08f8523f929a9272e3af36fc968e52abc6c27"},
        {57, "35df609437dcfea3279283ab79fd554e2bf78f8f7ae2de532d8ee300b09e8f73"},
        {63, "81c80242132f230c3bd41b3e63bbcff16107339549214a99614ff26664625055"},
        {64, "39e3d7b6b5d075d37d053ad89b24b41bef4f3c29760c84447cab3f3be1882241"},
        {65, "aacca6ff74fdbb296d165a45cecfa04e5127bc008770fbbdd48006f2d2fae95e"},
        {119, "9ce7368e4daf32341631b492e80359dc9f594b48453cd0dd5bf0b19279cc177e"},
        {120, "7836b787757e95e58b3ca5aec90b1b004e8deba1e50e9675af9cabf1a13a04b5"},
        {128, "d2742f1f4ac6bb7ca2b239ee18402ba8b3f9f8e652d2a72973c2b9ba11c08cf6"},
        {300, "04773f8726c81cafcfa1a09a82664b98b00d2021031a1715bca1154f2dad3472"},
    };
    uint8_t msg[300];
    for (size_t i = 0; i < sizeof msg; i++)
        msg[i] = (uint8_t)(i * 7 + 3);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char hex[65];
        hex_of(msg, cases[i].n, hex);
        assert_string_equal(hex, cases[i].hex);
    }
}

static uint32_t xorshift(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* Every length 0..300 (five blocks and change): random splits and byte-at-a-time give the one-shot
 * digest. */
static void test_chunked_equals_oneshot(void **state)
{
    (void)state;
    uint32_t seed = 0x2545f491;
    uint8_t msg[300];
    for (size_t len = 0; len <= sizeof msg; len++) {
        for (size_t i = 0; i < len; i++)
            msg[i] = (uint8_t)xorshift(&seed);
        uint8_t want[SHA256_DIGEST_LEN], got[SHA256_DIGEST_LEN];
        sha256(msg, len, want);

        for (int trial = 0; trial < 4; trial++) {
            sha256_ctx c;
            sha256_init(&c);
            size_t done = 0;
            while (done < len) {
                size_t n = xorshift(&seed) % 140; /* 0 included: empty updates are legal */
                if (n > len - done)
                    n = len - done;
                sha256_update(&c, msg + done, n);
                done += n;
            }
            sha256_final(&c, got);
            assert_memory_equal(got, want, sizeof want);
        }

        sha256_ctx c;
        sha256_init(&c);
        for (size_t i = 0; i < len; i++)
            sha256_update(&c, msg + i, 1);
        sha256_final(&c, got);
        assert_memory_equal(got, want, sizeof want);
    }
}

static void test_hex(void **state)
{
    (void)state;
    uint8_t d[SHA256_DIGEST_LEN];
    for (int i = 0; i < SHA256_DIGEST_LEN; i++)
        d[i] = (uint8_t)(i * 8 + 0x0f);
    char hex[65];
    memset(hex, 'x', sizeof hex);
    sha256_hex(d, hex);
    assert_int_equal(strlen(hex), 64);
    assert_string_equal(hex, "0f171f272f373f474f575f676f777f878f979fa7afb7bfc7cfd7dfe7eff7ff07");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_abc),
        cmocka_unit_test(test_448_bits),
        cmocka_unit_test(test_896_bits),
        cmocka_unit_test(test_million_a),
        cmocka_unit_test(test_padding_boundaries),
        cmocka_unit_test(test_chunked_equals_oneshot),
        cmocka_unit_test(test_hex),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
