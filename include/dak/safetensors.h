/* safetensors checkpoints, the Hugging Face format (pure C):
 *   8 bytes   the header's length N, unsigned little-endian
 *   N bytes   a JSON object: for each tensor "name": {"dtype": "BF16", "shape": [d0, ..], "data_offsets":
 *             [begin, end]} (byte offsets into the data that follows), and optionally "__metadata__" (strings)
 *   the data  every tensor's bytes, little-endian, row-major; the tensors cover it without holes or overlap.
 * A model is one such file, or shards listed by model.safetensors.index.json ({"weight_map": {"name":
 * "file", ..}}).  Every check below fails with the file, the tensor and what was expected. */
#ifndef DAK_SAFETENSORS_H
#define DAK_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define DAK_ST_MAX_DIM 8
#define DAK_ST_MAX_HEADER (UINT64_C(64) << 20) /* larger headers are refused (the reader's JSON limit) */

/* The element types the readers convert; other types are listed (their names kept) but not read. */
typedef enum { DAK_ST_BF16 = 0, DAK_ST_F16, DAK_ST_F32, DAK_ST_OTHER } dak_st_dtype;

typedef struct {
    char *name;
    dak_st_dtype dtype;
    char dtype_name[12]; /* as the header spells it ("BF16", "I8", ..) */
    uint32_t elem_bytes; /* 0 for a type this reader does not know */
    uint32_t ndim;
    uint64_t shape[DAK_ST_MAX_DIM];
    uint32_t file;   /* index of the shard that holds it */
    uint64_t offset; /* of its first byte in that file */
    uint64_t bytes;
} dak_st_tensor;

typedef struct dak_st dak_st;

/* Opens a checkpoint: a .safetensors file, or a folder holding model.safetensors.index.json (shards) or
 * model.safetensors.  Reads and checks every header (sizes, types, shapes against byte ranges, ranges inside
 * the file, no holes or overlaps, no name twice, every name of the index in the shard it names). */
int dak_st_open(dak_st **st, const char *path, cm_err *err);
void dak_st_close(dak_st *st);

size_t dak_st_count(const dak_st *st);
/* Tensors in name order. */
const dak_st_tensor *dak_st_at(const dak_st *st, size_t i);
/* The tensor named `name`, or NULL. */
const dak_st_tensor *dak_st_find(const dak_st *st, const char *name);
/* The shard file that holds tensors with t->file == i. */
const char *dak_st_file(const dak_st *st, uint32_t i);
/* Elements of a tensor (the product of its shape; 1 for a scalar). */
uint64_t dak_st_elems(const dak_st_tensor *t);

/* Elements [first, first + n) of tensor t (row-major), converted: BF16 as it is, F16 and F32 rounded to the
 * nearest bf16 (ties to even; NaN stays NaN); other types are refused.  dst in host memory. */
int dak_st_read_bf16(const dak_st *st, const dak_st_tensor *t, uint64_t first, uint64_t n, uint16_t *dst, cm_err *err);
/* The same as fp32 (exact for all three types). */
int dak_st_read_f32(const dak_st *st, const dak_st_tensor *t, uint64_t first, uint64_t n, float *dst, cm_err *err);

/* Large reads in parallel: a read of at least DAK_ST_PARALLEL_MIN file bytes is split into contiguous pieces of at
 * least DAK_ST_PIECE_MIN bytes, each read (pread) and converted by its own thread into its part of dst; smaller
 * reads stay on the caller's thread.  The values are those of one thread, and a piece that fails fails the whole
 * read with the one-thread message (file, bytes, offset, reason) of that piece's range (the first in the file when
 * several fail). */
#define DAK_ST_PARALLEL_MIN (UINT64_C(8) << 20)
#define DAK_ST_PIECE_MIN (UINT64_C(2) << 20)
#define DAK_ST_MAX_THREADS 64u
/* The most threads one read may use, for the whole process: n, or 0 for the default, min(8, online CPUs); 1 reads
 * everything on the caller's thread.  Refused (-1) above DAK_ST_MAX_THREADS.  Reads under way keep their count. */
int dak_st_set_threads(unsigned n, cm_err *err);
/* The count the setting gives now (the default resolved). */
unsigned dak_st_threads(void);
/* The pieces a read of `bytes` file bytes is split into now (1: read on the caller's thread). */
unsigned dak_st_read_pieces(uint64_t bytes);

/* IEEE half to float (subnormals, infinities and NaN included). */
float dak_f16_to_f32(uint16_t h);

/* Writing (tests, and synthetic checkpoints): tensors in the given order, each one's bytes produced by
 * fill(arg, i, buf) into a buffer of its size. */
typedef struct {
    const char *name;
    dak_st_dtype dtype; /* BF16, F16 or F32 */
    uint32_t ndim;
    uint64_t shape[DAK_ST_MAX_DIM];
} dak_st_out;
typedef int (*dak_st_fill_fn)(void *arg, size_t i, void *buf, cm_err *err);
int dak_st_write(const char *path, const dak_st_out *t, size_t n, dak_st_fill_fn fill, void *arg, cm_err *err);

#endif
