/* bf16 <-> float for host and device (round to nearest even; a NaN stays a NaN): the one place dak converts, used by
 * the split attention, the engine, its CPU reference and the checkpoint reader. */
#ifndef DAK_BF16_H
#define DAK_BF16_H

#include <stdint.h>

#include "common/hd.h"

static inline CM_HD float dak_bf16_to_f32(uint16_t b)
{
    union {
        uint32_t u;
        float f;
    } x;
    x.u = (uint32_t)b << 16;
    return x.f;
}
static inline CM_HD uint16_t dak_f32_to_bf16(float f)
{
    union {
        uint32_t u;
        float f;
    } x;
    x.f = f;
    if ((x.u & 0x7f800000u) == 0x7f800000u && (x.u & 0x007fffffu)) return (uint16_t)((x.u >> 16) | 0x40u);
    x.u += 0x7fffu + ((x.u >> 16) & 1u);
    return (uint16_t)(x.u >> 16);
}

#endif
