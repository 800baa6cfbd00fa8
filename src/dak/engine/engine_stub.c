/* dak engine without CUDA: every device entry point reports "not built". */
#include <stdlib.h>
#include <string.h>

#include "dak/engine.h"

#define NB "dak engine: not built (configured without CUDA)"

int dak_engine_create(dak_engine **e, const dak_eng_model *m, uint32_t batch, uint32_t max_len, uint64_t seed,
                      const dak_eng_opts *o, cm_err *err)
{
    (void)m, (void)batch, (void)max_len, (void)seed, (void)o;
    *e = NULL;
    return cm_fail(err, NB);
}
void dak_engine_destroy(dak_engine *e) { (void)e; }
int dak_engine_available(void) { return 0; }
void dak_engine_mem(const dak_engine *e, uint64_t *hbm, uint64_t *host)
{
    (void)e;
    *hbm = *host = 0;
}
void dak_engine_load_times(const dak_engine *e, dak_eng_load_times *t)
{
    (void)e;
    memset(t, 0, sizeof *t);
}
uint32_t dak_engine_grouped(const dak_engine *e)
{
    (void)e;
    return 0;
}
int dak_engine_setup(dak_engine *e, const dak_eng_place *pl, dak_eng_mode mode, uint32_t prompt, uint32_t tokens,
                     cm_err *err)
{
    (void)e, (void)pl, (void)mode, (void)prompt, (void)tokens;
    return cm_fail(err, NB);
}
int dak_engine_step(dak_engine *e, uint32_t t, int sync, cm_err *err)
{
    (void)e, (void)t, (void)sync;
    return cm_fail(err, NB);
}
int dak_engine_logits(dak_engine *e, float *logits, cm_err *err)
{
    (void)e, (void)logits;
    return cm_fail(err, NB);
}
int dak_engine_tokens(dak_engine *e, int32_t *tok, uint32_t steps, cm_err *err)
{
    (void)e, (void)tok, (void)steps;
    return cm_fail(err, NB);
}
int dak_engine_kv(dak_engine *e, uint32_t layer, uint16_t *k, uint16_t *v, cm_err *err)
{
    (void)e, (void)layer, (void)k, (void)v;
    return cm_fail(err, NB);
}
int dak_engine_run(dak_engine *e, double *tpot_s, cm_err *err)
{
    (void)e, (void)tpot_s;
    return cm_fail(err, NB);
}
int dak_engine_breakdown(dak_engine *e, uint32_t reps, dak_eng_breakdown *b, cm_err *err)
{
    (void)e, (void)reps, (void)b;
    return cm_fail(err, NB);
}
int dak_engine_stamps(dak_engine *e, uint32_t layer, dak_eng_stamps ops[DAK_ENG_STAMPED_OPS], uint32_t *n, cm_err *err)
{
    (void)e, (void)layer, (void)ops;
    *n = 0;
    return cm_fail(err, NB);
}
