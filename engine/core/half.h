/* half.h — bfloat16 and IEEE binary16 on the host: their bits to and from float, rounding to
 * nearest even as the GPU's cvt.rn does. Inputs of the half dtypes are drawn, compared and measured
 * through these (verify.h, accuracy.h). */
#ifndef ENGINE_HALF_H
#define ENGINE_HALF_H

#include <stdint.h>
#include <string.h>

/* A float's bits and back. */
static inline uint32_t f32_bits(float x)
{
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}
static inline float f32_from_bits(uint32_t b)
{
    float x;
    memcpy(&x, &b, sizeof x);
    return x;
}

/* bfloat16: the top 16 bits of a float. */
float bf16_to_float(uint16_t h);
uint16_t float_to_bf16(float x); /* NaN stays NaN (quiet), Inf Inf, past the largest finite Inf */

/* binary16: 1 sign, 5 exponent (bias 15), 10 fraction bits; subnormals below 2^-14. */
float f16_to_float(uint16_t h);
uint16_t float_to_f16(float x);

#endif
