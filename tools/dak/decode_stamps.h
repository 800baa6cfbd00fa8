/* dak decode --diag-times FILE: one layer's timeline from the engine's stamps (dak_engine_stamps). */
#ifndef DAK_TOOL_DECODE_STAMPS_H
#define DAK_TOOL_DECODE_STAMPS_H

#include <stdint.h>

#include "common/error.h"
#include "dak/engine.h"

/* Prints, for each operation of layer `layer`'s last step, the earliest / median / latest CTA at every stamp (us
 * from the layer's first CTA entry), and writes every CTA's stamps to `path` as JSON (ns from the same origin;
 * -1 where a stamp was not taken). */
int decode_stamps_write(dak_engine *e, uint32_t layer, const char *path, cm_err *err);

#endif
