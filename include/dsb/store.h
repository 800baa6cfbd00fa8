/* The model store of the dsb service (seed 000, Sec. III and V-C): 64 slots of
 * at most 512 KiB packed image each.  LOAD fragments of one generation are
 * tracked by index in a bitmap; duplicates are ignored; a fragment of the
 * already complete generation re-sends the acknowledgement; a new generation
 * replaces the current one only once it is complete (copy-on-complete), and a
 * SOLVE that acquired a generation keeps it until it releases it (reference
 * count), however many replacements happen meanwhile.
 *
 * Thread safety: dsb_store_load and dsb_store_acquire may be called from any
 * thread (one mutex per slot); dsb_store_release from any thread. */
#ifndef DSB_STORE_H
#define DSB_STORE_H

#include <stdatomic.h>
#include <stdint.h>

#include "dsb/model.h"
#include "dsb/wire.h"

typedef struct dsb_store dsb_store;

/* One complete generation of one slot; immutable once published. */
typedef struct {
    dsb_model model; /* model.xi_default is the gain the LOAD carried */
    uint32_t generation;
    uint16_t id;
    atomic_int refs;
} dsb_store_model;

typedef enum {
    DSB_LOAD_STORED = 0, /* new fragment of the generation in progress; no reply */
    DSB_LOAD_DUPLICATE,  /* fragment already held; ignored, no reply */
    DSB_LOAD_COMPLETED,  /* this fragment completed the generation: send LOAD_ACK */
    DSB_LOAD_REACK,      /* fragment of the current complete generation: re-send LOAD_ACK */
    DSB_LOAD_REJECTED    /* reason set; answer LOAD_ACK with an error status */
} dsb_load_action;

typedef struct {
    dsb_load_action action;
    dsb_wire_reason reason;       /* for DSB_LOAD_REJECTED */
    uint32_t frags_received;      /* of the fragment's generation */
    uint32_t current_generation;  /* the slot's complete generation after this call */
} dsb_store_load_out;

dsb_store *dsb_store_create(void);
/* Frees every slot; models still acquired stay valid until released. */
void dsb_store_destroy(dsb_store *s);

/* Applies one LOAD fragment that dsb_wire_decode accepted. */
void dsb_store_load(dsb_store *s, const dsb_wire_load *l, const uint8_t *payload,
                    dsb_store_load_out *out);

/* Takes a reference to slot `id`'s current generation for a SOLVE of n
 * variables; `generation` 0 accepts the current one, another value must
 * match it.  NULL with *why = UNKNOWN_MODEL, MODEL_INCOMPLETE, WRONG_N or
 * WRONG_GENERATION otherwise. */
const dsb_store_model *dsb_store_acquire(dsb_store *s, uint16_t id, uint32_t n,
                                         uint32_t generation, dsb_wire_reason *why);
void dsb_store_release(const dsb_store_model *m);

/* The slot's current complete generation (0 = none). */
uint32_t dsb_store_generation(dsb_store *s, uint16_t id);
/* Number of models alive (current + still referenced old generations). */
int dsb_store_live_models(void);

#endif
