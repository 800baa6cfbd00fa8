/* Streaming dense couplings (seed 000, Sec. VIII): a dSB solve whose n x n
 * one-bit coupling matrix never rests anywhere.  Frames of one row's column
 * block arrive in column-block-major order; the solver keeps only O(B n)
 * state (positions, momenta, signs, int32 mismatch counters) and reuses each
 * frame across the B replicas.  K updates take K + 1 passes over the matrix:
 * pass p evaluates the couplings of the signs after p updates, records their
 * energy, and (p < K) advances the state one dSB step; the last pass records
 * the final energy only.
 *
 * The first part of this header is arithmetic shared by the CPU reference and
 * the GPU kernels (DSB_HD, like dsb/core.h): frame geometry, the two instances'
 * coupling bits, the coupling sum of Eq. (10), and the sign-bitmap checksum.
 * The second part is the host API of the CPU reference (src/dsb/stream.c).
 *
 * Bits: u_ij = 1 for J_ij = +1.  The transmitted diagonal is u_ii = 1 and the
 * padding bits (columns >= n of the last column block) are 0, in the frames
 * and in the sign tiles alike, so the mismatch count c_i over the whole padded
 * row gives  sum_{j != i} J_ij s_j = n - 2 c_i - s_i   (Eq. (10)). */
#ifndef DSB_STREAM_H
#define DSB_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "dsb/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DSB_STREAM_PAYLOAD 4032u                        /* P_f: bytes of couplings a frame */
#define DSB_STREAM_FRAME (64u + DSB_STREAM_PAYLOAD)     /* 4096: header + payload */
#define DSB_STREAM_COLS (8u * DSB_STREAM_PAYLOAD)       /* C_b = 32,256 couplings */
#define DSB_STREAM_WORDS (DSB_STREAM_PAYLOAD / 4u)      /* 1008 32-bit words */
/* |a_i| <= n - 1 must stay below 2^24 for the exact FP32 conversion of
 * Prop. 1(iii) (the paper measures up to 10^7). */
#define DSB_STREAM_MAX_N (1u << 24)
/* Replicas whose sign tiles of one column block (B x 4032 B) a GPU block
 * keeps in shared memory: 32 x 4032 B = 126 KiB. */
#define DSB_STREAM_MAX_REPLICAS 32u

/* The matrix: one of the two generated instances (Sec. VIII-B), or a stream
 * file (one pass's frames, written by `dsb stream-write` or any tool that
 * follows docs/formats.md). */
typedef enum {
    DSB_STREAM_MATTIS = 1,
    DSB_STREAM_RANDOM = 2,
    DSB_STREAM_FILE = 3
} dsb_stream_instance;

/* ---- geometry (Eq. (9)) ----------------------------------------------------- */
DSB_HD static inline uint32_t dsb_stream_blocks(uint32_t n)
{
    return (n + DSB_STREAM_COLS - 1u) / DSB_STREAM_COLS;
}
/* Sign words of one replica on the frame grid: blocks x 1008 (zero padded). */
DSB_HD static inline uint64_t dsb_stream_grid_words(uint32_t n)
{
    return (uint64_t)dsb_stream_blocks(n) * DSB_STREAM_WORDS;
}
DSB_HD static inline uint64_t dsb_stream_frames(uint32_t n)
{
    return (uint64_t)n * dsb_stream_blocks(n);
}
/* V(n) = n ceil(n / C_b) P_f: the payload bytes of one pass, padding included. */
DSB_HD static inline uint64_t dsb_stream_pass_bytes(uint32_t n)
{
    return dsb_stream_frames(n) * DSB_STREAM_PAYLOAD;
}
/* The payload rate of `frames` frames in `seconds`, Gb/s (0 when no time was measured): the
 * rate every report of the streaming solver gives, headers left out. */
DSB_HD static inline double dsb_stream_payload_gbps(uint64_t frames, double seconds)
{
    return seconds > 0 ? 8.0 * (double)frames * DSB_STREAM_PAYLOAD / seconds / 1e9 : 0.0;
}
/* Frame f of a pass in column-block-major order: block f / n, row f % n. */
DSB_HD static inline void dsb_stream_frame_coords(uint64_t f, uint32_t n, uint32_t *row,
                                                  uint32_t *block)
{
    *block = (uint32_t)(f / n);
    *row = (uint32_t)(f % n);
}
/* Mask of the columns < n in global sign word gw (32 columns each). */
DSB_HD static inline uint32_t dsb_stream_valid_mask(uint32_t n, uint64_t gw)
{
    uint64_t first = gw * 32u;
    if (first >= n) return 0u;
    uint64_t left = n - first;
    return left >= 32u ? 0xFFFFFFFFu : ((1u << left) - 1u);
}

/* ---- the instances' coupling bits (Sec. VIII-B) -----------------------------
 * Keys separate the domains of one seed: the random couplings' pair hash and
 * the Mattis sign vector eta. */
DSB_HD static inline uint64_t dsb_stream_key(uint64_t seed, dsb_stream_instance kind)
{
    return dsb_mix64(seed ^ (kind == DSB_STREAM_MATTIS ? 0x4D41545449535EE7ull
                                                       : 0x52414E444F4D4A4Aull));
}
/* eta_j = +1 when the bit is 1. */
DSB_HD static inline uint32_t dsb_stream_eta_bit(uint64_t key, uint32_t j)
{
    return (uint32_t)(dsb_mix64(key ^ (uint64_t)j) >> 63);
}
/* Random instance: J_ij = J_ji = +1 when the hash of (seed, {i, j}) has its top
 * bit set, for i != j; the transmitted diagonal is +1. */
DSB_HD static inline uint32_t dsb_stream_random_bit(uint64_t key, uint32_t i, uint32_t j)
{
    if (i == j) return 1u;
    uint32_t lo = i < j ? i : j, hi = i < j ? j : i;
    return (uint32_t)(dsb_mix64(key ^ (((uint64_t)lo << 32) | hi)) >> 63);
}
/* Word gw (columns 32 gw .. 32 gw + 31) of eta, zero beyond n. */
DSB_HD static inline uint32_t dsb_stream_eta_word(uint64_t key, uint32_t n, uint64_t gw)
{
    uint32_t mask = dsb_stream_valid_mask(n, gw), w = 0;
    for (uint32_t b = 0; b < 32u; b++)
        if (mask >> b & 1u) w |= dsb_stream_eta_bit(key, (uint32_t)(gw * 32u + b)) << b;
    return w;
}
/* Mattis row i, word gw: J_ij = eta_i eta_j is +1 where eta_j equals eta_i
 * (the diagonal included), given eta's word gw. */
DSB_HD static inline uint32_t dsb_stream_mattis_word(uint32_t eta_i, uint32_t eta_word,
                                                     uint32_t n, uint64_t gw)
{
    return (eta_i ? eta_word : ~eta_word) & dsb_stream_valid_mask(n, gw);
}
DSB_HD static inline uint32_t dsb_stream_random_word(uint64_t key, uint32_t i, uint32_t n,
                                                     uint64_t gw)
{
    uint32_t mask = dsb_stream_valid_mask(n, gw), w = 0;
    for (uint32_t b = 0; b < 32u; b++)
        if (mask >> b & 1u) w |= dsb_stream_random_bit(key, i, (uint32_t)(gw * 32u + b)) << b;
    return w;
}

/* ---- Eq. (10) and the records -------------------------------------------------
 * Coupling sum of row i from its mismatch count c_i over the padded row; the
 * diagonal correction -s_i has the opposite sign of Prop. 1(i) because the
 * stream carries u_ii = 1. */
DSB_HD static inline int32_t dsb_stream_coupling_sum(uint32_t n, int32_t mismatches, int32_t s_i)
{
    return (int32_t)n - 2 * mismatches - s_i;
}
/* The 64-bit spin-bitmap checksum is the sum (mod 2^64) over the bitmap's
 * 64-bit words k (sign words 2k and 2k+1, the last one zero-extended) of
 * this term; a sum, so GPU blocks can add their words in any order. */
DSB_HD static inline uint64_t dsb_stream_checksum_term(uint64_t k, uint64_t word64)
{
    return dsb_mix64(word64 ^ (k * 0xD6E8FEB86659FD93ull));
}
/* The run id carried in every streamed frame's request id: the instance and
 * seed, so that a receiver refuses frames of another matrix. */
DSB_HD static inline uint32_t dsb_stream_run_id(uint64_t seed, dsb_stream_instance kind)
{
    return (uint32_t)(dsb_stream_key(seed, kind) >> 32);
}
/* Default coupling gain of the streamed runs: xi = 0.5 / sqrt(n) (Sec. VIII-B). */
#define DSB_STREAM_DEFAULT_DT 1.1f
#define DSB_STREAM_DEFAULT_SEED 42u

/* ---- host API: the CPU reference (src/dsb/stream.c) ------------------------- */

typedef struct {
    uint32_t n;
    uint32_t replicas;          /* B, 1 .. DSB_STREAM_MAX_REPLICAS */
    uint32_t updates;           /* K >= 1 dSB steps; K + 1 passes */
    float dt;                   /* 1.1 in the paper's runs */
    float xi;                   /* 0 = 0.5 / sqrt(n) */
    uint64_t seed;              /* instance and initial states (42 in the paper) */
    dsb_stream_instance instance;
    const char *file;           /* DSB_STREAM_FILE: its path (dsb_stream_params_from_file);
                                   NULL for a receiver of someone else's frames (file_run_id) */
    uint32_t file_run_id;       /* DSB_STREAM_FILE: the run id its frames carry */
} dsb_stream_params;

/* One pass: the energies of the signs the pass evaluated (before its update)
 * and the checksums of the signs after it (equal to the incoming ones on the
 * final pass). */
typedef struct {
    uint32_t pass;
    int updated;                /* 1 on passes 0 .. K-1 */
    uint32_t best_replica;      /* lowest 2E, lowest index on ties */
    int64_t best_energy2;
    int64_t *energy2;           /* B entries */
    uint64_t *checksum;         /* B entries */
    uint64_t frames;            /* frames consumed (== dsb_stream_frames(n)) */
    uint64_t bad_frames;        /* rejected by the frame check, counted */
    double seconds;             /* the pass's frame consumption */
    /* The best replica's spins after the pass (bit i = 1 for s_i = +1, ceil(n/32)
     * words), valid during the on_pass call; the CPU gives them every pass, the
     * GPU on the final one (NULL on the others). */
    const uint32_t *best_signs;
} dsb_stream_record;

/* The resident state: x, y (B x n), signs on the frame grid (B x blocks x
 * 1008 words), mismatch counters (B x n). */
typedef struct dsb_stream_state dsb_stream_state;

void dsb_stream_params_default(dsb_stream_params *p);
int dsb_stream_params_check(const dsb_stream_params *p, cm_err *err);
float dsb_stream_xi(const dsb_stream_params *p);
const char *dsb_stream_instance_name(dsb_stream_instance k);
/* "mattis" or "random"; -1 if neither. */
int dsb_stream_instance_parse(const char *s, dsb_stream_instance *out);
/* Mattis: 2E of the ground state s = +-eta, -n(n-1); the random instance and
 * files have no known ground state (returns 0). */
int dsb_stream_known_ground(const dsb_stream_params *p, int64_t *energy2);
/* The run id the run's frames carry: the file's, or the instance and seed's. */
uint32_t dsb_stream_params_run_id(const dsb_stream_params *p);

/* ---- stream files ----------------------------------------------------------------
 * A stream file is one pass of the matrix: T = n ceil(n/32256) STREAM frames of
 * 4096 bytes, frame f (row f mod n, column block f div n) at offset 4096 f,
 * the pass field 0, the same request id (the run id) in every frame.  Sets
 * p->instance = FILE, p->file, p->n and p->file_run_id from the file after
 * checking its size and its first frame (every frame is checked as it is read). */
int dsb_stream_params_from_file(dsb_stream_params *p, const char *path, cm_err *err);
/* Writes the matrix of p (a generated instance) as a stream file. */
int dsb_stream_write_instance(const dsb_stream_params *p, const char *path, int progress,
                              cm_err *err);
/* Writes a dense J (n x n int8, row-major, symmetric, zero diagonal, every
 * off-diagonal entry +-1) as a stream file whose run id is run_id. */
int dsb_stream_write_matrix(const int8_t *J, uint32_t n, uint32_t run_id, const char *path,
                            cm_err *err);

/* ---- feeds: where a run's frames come from ------------------------------------
 * The same for every producer of frames (the CPU run, the GPU's host source,
 * the network generator): the generated instances' bits (the Mattis eta
 * bitmap made once) or the stream file's frames. */
typedef struct dsb_stream_feed dsb_stream_feed;
int dsb_stream_feed_open(const dsb_stream_params *p, dsb_stream_feed **out, cm_err *err);
/* Frame f of the pass (column-block-major), sent by `queue` (header field),
 * into out (DSB_STREAM_FRAME bytes).  Safe to call from several threads.
 * Returns 0, or -1 with a message (a file that cannot be read, or whose frame
 * f is not the frame expected there). */
int dsb_stream_feed_get(dsb_stream_feed *s, uint32_t pass, uint64_t f, uint16_t queue,
                        uint8_t *out, cm_err *err);
void dsb_stream_feed_close(dsb_stream_feed *s);

/* Builds frame (row, block) of `pass` into out (DSB_STREAM_FRAME bytes): the
 * wire header of dsb/wire.h and the row's coupling bits.  eta is the Mattis
 * sign bitmap on the frame grid (dsb_stream_eta_bitmap), NULL for random. */
void dsb_stream_build_frame(uint8_t *out, const dsb_stream_params *p, const uint32_t *eta,
                            uint32_t pass, uint32_t row, uint32_t block, uint16_t queue,
                            uint64_t seq);
/* The 64-byte STREAM header alone (dsb/wire.h) into out. */
void dsb_stream_put_header(uint8_t *out, uint32_t n, uint32_t run_id, uint32_t pass,
                           uint32_t row, uint32_t block, uint16_t queue, uint64_t seq);
/* eta on the frame grid (dsb_stream_grid_words(n) words, zero padding); free(). */
uint32_t *dsb_stream_eta_bitmap(const dsb_stream_params *p);

/* Allocates the state at the initial positions dsb_initial_state(seed, b, i). */
int dsb_stream_state_create(const dsb_stream_params *p, dsb_stream_state **out, cm_err *err);
void dsb_stream_state_free(dsb_stream_state *s);
/* Checks a received frame against the run (dsb_wire_stream_check, and the run
 * id) and, if it is good, adds its mismatches for every replica to the row's
 * counters (dsb_stream_accumulate).  Returns DSB_WR_NONE or the reason it was
 * rejected (the caller counts it).  Frames of distinct rows may be consumed
 * concurrently. */
int dsb_stream_consume(dsb_stream_state *s, uint32_t pass, const uint8_t *frame, size_t len);
/* The accumulation alone, for a frame already checked: payload = its 4032
 * bytes (any alignment). */
void dsb_stream_accumulate(dsb_stream_state *s, uint32_t row, uint32_t block,
                           const uint8_t *payload);
/* Forgets the pass's accumulation so far (a receiver that must have the pass
 * sent again). */
void dsb_stream_discard_pass(dsb_stream_state *s);
/* Ends a pass: coupling sums (Eq. (10)), energies, the dSB step when
 * `update`, checksums, counters cleared.  Fills rec (its arrays allocated by
 * dsb_stream_record_init). */
void dsb_stream_end_pass(dsb_stream_state *s, uint32_t pass, int update, uint32_t threads,
                         dsb_stream_record *rec);
/* Spin bits of replica b on the frame grid (read-only view). */
const uint32_t *dsb_stream_signs(const dsb_stream_state *s, uint32_t b);

void dsb_stream_record_init(dsb_stream_record *r, uint32_t replicas);
void dsb_stream_record_free(dsb_stream_record *r);
/* The checksum of a sign bitmap of n bits (words as in dsb_stream_signs). */
uint64_t dsb_stream_checksum(const uint32_t *signs, uint32_t n);

/* Where a receiver's frames go (the network source, include/dsb/stream_net.h):
 * the CPU state (dsb_stream_cpu_sink), a ring consumed by a CPU thread
 * (dsb_stream_ring_sink, include/dsb/stream_ring.h) or the GPU
 * (dsb_stream_gpu_sink, include/dsb/stream_gpu.h).  The receiver checks every
 * frame first (wire check, run id) and calls
 *   frame     for each good frame of the pass being received (the whole
 *             4096-byte frame, header included), returning DSB_STREAM_TAKEN,
 *             or DSB_STREAM_DUPLICATE (only a sink with `dedup`) or
 *             DSB_STREAM_NO_ROOM (a ring whose window the frame is beyond:
 *             not taken, counted; the attempt will lack it);
 *   end_pass  once every frame of the pass is in: finish the pass (energies,
 *             the step when `update`, checksums) and fill rec's energies,
 *             checksums, best replica and best_signs; 0, or -1 with a message
 *             (the run stops);
 *   discard   when the attempt lost frames and the pass will be sent again:
 *             forget what the attempt consumed (before the receiver asks for
 *             the pass again, so the next attempt's frames find the sink ready).
 * end_pass and discard are called by one thread at a time with no frame call
 * in progress; frame calls come from one thread, or from several at once when
 * the sink sets `concurrent`.  Without `dedup` the receiver keeps a bitmap of
 * the pass (T bits) so that a duplicate never reaches the sink.  A sink whose
 * frame() is dsb_stream_ring_put on a ring (include/dsb/stream_ring.h) may
 * name it in `ring`: the receiver may then place frames there itself,
 * received straight into their places (dsb_stream_ring_reserve / _commit),
 * instead of calling frame() (NULL: every frame goes through frame()). */
enum { DSB_STREAM_TAKEN = 0, DSB_STREAM_DUPLICATE = 1, DSB_STREAM_NO_ROOM = 2 };
struct dsb_stream_ring;
typedef struct {
    void *ctx;
    int (*frame)(void *ctx, uint32_t row, uint32_t block, const uint8_t *frame);
    int (*end_pass)(void *ctx, uint32_t pass, int update, dsb_stream_record *rec, cm_err *err);
    void (*discard)(void *ctx);
    int dedup;      /* frame() tells duplicates itself */
    int concurrent; /* frame() may run on several threads at once */
    struct dsb_stream_ring *ring; /* frame() puts into this ring (NULL: not a ring) */
} dsb_stream_sink;

/* The sink that consumes into the CPU state s (dsb_stream_accumulate,
 * dsb_stream_end_pass, dsb_stream_discard_pass). */
void dsb_stream_cpu_sink(dsb_stream_state *s, dsb_stream_sink *sink);

/* A whole run on the CPU with frames generated in process (source `gen`):
 * `threads` workers (0 = online cores) each build and consume the frames of
 * their rows.  on_pass (may be NULL) is called after every pass; a non-zero
 * return stops the run.  progress: a line with rate and ETA on stderr. */
typedef int (*dsb_stream_pass_fn)(const dsb_stream_record *rec, void *ctx);
int dsb_stream_run_cpu(const dsb_stream_params *p, uint32_t threads, int progress,
                       dsb_stream_pass_fn on_pass, void *ctx, cm_err *err);

#ifdef __cplusplus
}
#endif

#endif /* DSB_STREAM_H */
