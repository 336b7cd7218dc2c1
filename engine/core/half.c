/* half.c — see half.h. */
#include "half.h"

#include <math.h>

float bf16_to_float(uint16_t h) { return f32_from_bits((uint32_t)h << 16); }

uint16_t float_to_bf16(float x)
{
    uint32_t b = f32_bits(x);
    if (isnan(x))
        return (uint16_t)((b >> 16) | 0x0040u);
    /* Add half of the lowest kept bit, less one unless that bit is odd (ties to even); a carry into
     * the exponent is the rounding up it is. */
    b += 0x7FFFu + ((b >> 16) & 1u);
    return (uint16_t)(b >> 16);
}

float f16_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1Fu, frac = h & 0x3FFu;
    if (exp == 0x1F)
        return f32_from_bits(sign | 0x7F800000u | (frac << 13));
    if (exp == 0) /* zero or subnormal: frac * 2^-24, exact in float */
        return (sign ? -1.0f : 1.0f) * ldexpf((float)frac, -24);
    return f32_from_bits(sign | ((exp + 112u) << 23) | (frac << 13));
}

uint16_t float_to_f16(float x)
{
    uint32_t b = f32_bits(x);
    uint16_t sign = (uint16_t)((b >> 16) & 0x8000u);
    float a = fabsf(x);
    if (isnan(x))
        return (uint16_t)(sign | 0x7E00u);
    if (a >= 65520.0f) /* past the largest finite (65504) by half a unit or more: Inf */
        return (uint16_t)(sign | 0x7C00u);
    if (a < 0x1p-14f) {
        /* Subnormal: a multiple of 2^-24. a * 2^24 is exact in float; rintf rounds to nearest even. */
        return (uint16_t)(sign | (uint16_t)rintf(a * 0x1p24f));
    }
    uint32_t ab = f32_bits(a);
    /* Normal: drop 13 fraction bits, ties to even; a carry moves into the exponent (to 0x7C00 = Inf
     * only from values at or above 65520, handled above). */
    ab += 0xFFFu + ((ab >> 13) & 1u);
    return (uint16_t)(sign | (uint16_t)(((ab >> 13) - (112u << 10)) & 0x7FFFu));
}
