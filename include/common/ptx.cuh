/* The one inline-PTX header of the project (Hopper, sm_90a): mbarriers, bulk
 * and tensor copies (TMA) into shared memory, cluster helpers, fences and the
 * tensor-core instructions.  Every function is a thin wrapper around one PTX
 * instruction (or a tiny loop around one); shared-memory addresses are 32-bit
 * shared-window addresses from ptx_smem().  Include only from .cu files. */
#ifndef COMMON_PTX_CUH
#define COMMON_PTX_CUH

#include <stdint.h>
#include <cuda.h> /* CUtensorMap (type only; libcuda is never linked) */

#define PTX_DEV static __device__ __forceinline__

/* 32-bit shared-window address of a generic pointer into shared memory. */
PTX_DEV uint32_t ptx_smem(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }
/* ... and back: the generic pointer of a shared-memory address. */
PTX_DEV void *ptx_smem_generic(uint32_t a) { return __cvta_shared_to_generic(a); }

/* ---- mbarrier ------------------------------------------------------------ */

/* Initialise a 64-bit mbarrier with the number of arrivals one phase needs. */
PTX_DEV void ptx_mbar_init(uint32_t bar, uint32_t count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

/* Make mbarrier initialisation visible to the other CTAs of the cluster (and to the async proxy). */
PTX_DEV void ptx_fence_mbar_init(void)
{
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

/* Arrive once on a local mbarrier. */
PTX_DEV void ptx_mbar_arrive(uint32_t bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

/* Arrive once and add `bytes` to the transaction count the current phase waits for. */
PTX_DEV void ptx_mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
                 : "memory");
}

/* Arrive on the mbarrier at the same offset in CTA `rank` of the cluster, with the instruction's default semantics
 * (release at CTA scope), as a consumer hands a multicast ring slot back: what it must order before the producer's
 * next copy into the slot is its own reads of the slot, complete once their values are in registers (ldmatrix) or
 * the wgmma group has been waited for.  .release.cluster made ptxas put a MEMBAR.ALL.GPU before every such arrive
 * (Nsight Compute: with clusters of two, half of all warp samples sat in it, ~1 us a slot). */
PTX_DEV void ptx_mbar_arrive_cluster(uint32_t bar, uint32_t rank)
{
    asm volatile("{\n\t.reg .b32 ra;\n\t"
                 "mapa.shared::cluster.u32 ra, %0, %1;\n\t"
                 "mbarrier.arrive.shared::cluster.b64 _, [ra];\n\t}" ::"r"(bar),
                 "r"(rank)
                 : "memory");
}

/* One test of whether the phase with parity `parity` has completed (1) or not (0). */
PTX_DEV uint32_t ptx_mbar_try_wait(uint32_t bar, uint32_t parity)
{
    uint32_t ok;
    asm volatile("{\n\t.reg .pred p;\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(ok)
                 : "r"(bar), "r"(parity)
                 : "memory");
    return ok;
}

/* Spin until the phase with parity `parity` has completed. */
PTX_DEV void ptx_mbar_wait(uint32_t bar, uint32_t parity)
{
    while (!ptx_mbar_try_wait(bar, parity)) {
    }
}

/* ---- bulk copies (TMA) ------------------------------------------------------ */

/* 1-D bulk copy of `bytes` (multiple of 16, 16-byte aligned) from global memory (also a mapped
 * host pointer) into this CTA's shared memory; completes `bytes` transactions on `bar`. */
PTX_DEV void ptx_bulk_g2s(uint32_t dst, const void *src, uint32_t bytes, uint32_t bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}

/* 1-D bulk copy delivered to the same offsets (data and mbarrier) in every CTA of `mask`. */
PTX_DEV void ptx_bulk_g2s_multicast(uint32_t dst, const void *src, uint32_t bytes, uint32_t bar,
                                    uint16_t mask)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1], %2, [%3], %4;" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar), "h"(mask)
                 : "memory");
}

/* ---- L2 cache hints: a policy (createpolicy) attached to a copy's L2 reads ---- */

/* Lines read under this policy are evicted first: data streamed once (the weights A). */
PTX_DEV uint64_t ptx_l2_evict_first(void)
{
    uint64_t p;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
    return p;
}

/* Lines read under this policy are evicted last: data re-read by every SM (B, the activations). */
PTX_DEV uint64_t ptx_l2_evict_last(void)
{
    uint64_t p;
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
    return p;
}

/* ptx_bulk_g2s with an L2 cache policy. */
PTX_DEV void ptx_bulk_g2s_hint(uint32_t dst, const void *src, uint32_t bytes, uint32_t bar, uint64_t pol)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar), "l"(pol)
                 : "memory");
}

/* ptx_bulk_g2s_multicast with an L2 cache policy. */
PTX_DEV void ptx_bulk_g2s_multicast_hint(uint32_t dst, const void *src, uint32_t bytes, uint32_t bar, uint16_t mask,
                                         uint64_t pol)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster.L2::cache_hint [%0], [%1], %2, [%3], %4, %5;" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar), "h"(mask), "l"(pol)
                 : "memory");
}

/* ptx_tma_3d_g2s with an L2 cache policy. */
PTX_DEV void ptx_tma_3d_g2s_hint(uint32_t dst, const CUtensorMap *map, int c0, int c1, int c2, uint32_t bar,
                                 uint64_t pol)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%2, %3, %4}], [%5], %6;" ::"r"(dst),
                 "l"((uint64_t)(uintptr_t)map), "r"(c0), "r"(c1), "r"(c2), "r"(bar), "l"(pol)
                 : "memory");
}

/* 2-D tensor copy of one box at element coordinates (c0 inner, c1 outer) described by a
 * __grid_constant__ tensor map into this CTA's shared memory, completing on `bar`. */
PTX_DEV void ptx_tma_2d_g2s(uint32_t dst, const CUtensorMap *map, int c0, int c1, uint32_t bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
                 "l"((uint64_t)(uintptr_t)map), "r"(c0), "r"(c1), "r"(bar)
                 : "memory");
}

/* 3-D tensor copy of one box at coordinates (c0 innermost, c1, c2), completing on `bar`. */
PTX_DEV void ptx_tma_3d_g2s(uint32_t dst, const CUtensorMap *map, int c0, int c1, int c2, uint32_t bar)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(dst),
                 "l"((uint64_t)(uintptr_t)map), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
                 : "memory");
}

/* 4-D tensor copy of one box (c3 outermost), completing on `bar`; with an L2 cache policy (the packed A's
 * boxes of a ring slot in one copy: gemm_split.cu issue_a). */
PTX_DEV void ptx_tma_4d_g2s_hint(uint32_t dst, const CUtensorMap *map, int c0, int c1, int c2, int c3, uint32_t bar,
                                 uint64_t pol)
{
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%2, %3, %4, %5}], [%6], %7;" ::"r"(dst),
                 "l"((uint64_t)(uintptr_t)map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar), "l"(pol)
                 : "memory");
}
PTX_DEV void ptx_tma_4d_g2s(uint32_t dst, const CUtensorMap *map, int c0, int c1, int c2, int c3, uint32_t bar)
{
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];" ::"r"(dst),
                 "l"((uint64_t)(uintptr_t)map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
                 : "memory");
}

/* Same box delivered to the same offsets in every CTA of the cluster named in `mask`. */
PTX_DEV void ptx_tma_2d_g2s_multicast(uint32_t dst, const CUtensorMap *map, int c0, int c1,
                                      uint32_t bar, uint16_t mask)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
                 "l"((uint64_t)(uintptr_t)map), "r"(c0), "r"(c1), "r"(bar), "h"(mask)
                 : "memory");
}

/* Orders this thread's generic-proxy global accesses (and what it acquired) before its later
 * async-proxy (bulk copy) accesses to global memory. */
PTX_DEV void ptx_fence_proxy_async_global(void)
{
    asm volatile("fence.proxy.async.global;" ::: "memory");
}

/* Fetch a tensor map's descriptor into the TMA unit's cache ahead of first use. */
PTX_DEV void ptx_prefetch_tensormap(const CUtensorMap *map)
{
    asm volatile("prefetch.tensormap [%0];" ::"l"((uint64_t)(uintptr_t)map) : "memory");
}

/* Order this thread's generic-proxy shared-memory accesses before later async-proxy ones. */
PTX_DEV void ptx_fence_proxy_async(void)
{
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

/* Named barrier `id` (1..15) among `count` threads (a multiple of 32) of this CTA. */
PTX_DEV void ptx_bar_sync(uint32_t id, uint32_t count)
{
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}

/* Global nanosecond timer (same clock on every SM; coarse ticks). */
PTX_DEV uint64_t ptx_globaltimer(void)
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* Index of the SM this thread runs on (%smid: fixed for a CTA's life; the range can have
 * gaps, %nsmid bounds it). */
PTX_DEV uint32_t ptx_smid(void)
{
    uint32_t s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return s;
}

/* ---- clusters --------------------------------------------------------------- */

/* Rank of this CTA inside its cluster. */
PTX_DEV uint32_t ptx_cluster_rank(void)
{
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

/* Number of CTAs in this cluster. */
PTX_DEV uint32_t ptx_cluster_size(void)
{
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
    return r;
}

/* Index (x) of this cluster in the grid. */
PTX_DEV uint32_t ptx_cluster_id_x(void)
{
    uint32_t r;
    asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(r));
    return r;
}

/* Whole-cluster barrier: every thread of every CTA arrives (release) and waits (acquire). */
PTX_DEV void ptx_cluster_sync(void)
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n\t"
                 "barrier.cluster.wait.acquire.aligned;" ::
                     : "memory");
}

/* ---- tensor cores ------------------------------------------------------------ */

/* Four 8x8 b16 matrices from shared memory; lane i gives the row address for matrix i/8. */
PTX_DEV void ptx_ldmatrix_x4(uint32_t addr, uint32_t *r0, uint32_t *r1, uint32_t *r2, uint32_t *r3)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(*r0), "=r"(*r1), "=r"(*r2), "=r"(*r3)
                 : "r"(addr));
}

/* Two 8x8 b16 matrices (lanes 0..15 give the row addresses). */
PTX_DEV void ptx_ldmatrix_x2(uint32_t addr, uint32_t *r0, uint32_t *r1)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];"
                 : "=r"(*r0), "=r"(*r1)
                 : "r"(addr));
}

/* D(16x8, f32) += A(16x16, bf16, row) * B(16x8, bf16, col), warp-wide. */
PTX_DEV void ptx_mma_bf16_16816(float *d, const uint32_t *a, uint32_t b0, uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* Integer tensor-core products for the dSB coupling sums (seed 000, Prop. 1), exact in s32.
 * Fragments (PTX ISA, mma.m16n8k32 / m16n8k128; g = lane / 4, t = lane % 4):
 *   s8 A 16x32 row: a0 (row g, k 4t..4t+3), a1 (row g+8, same k), a2 (row g, k 16+4t..),
 *                   a3 (row g+8, k 16+4t..);  B 32x8 col: b0 (col g, k 4t..), b1 (col g, k 16+4t..)
 *   b1 A 16x128 row: a0 (row g, bits 32t..32t+31), a1 (row g+8, same bits);
 *                    B 128x8 col: b0 (col g, bits 32t..32t+31)
 *   D 16x8: d0, d1 (row g, cols 2t, 2t+1), d2, d3 (row g+8, cols 2t, 2t+1).
 * Not volatile: pure functions of their operands, so the compiler may schedule them. */

/* D += A(16x32, s8) * B(32x8, s8), s32 accumulate. */
PTX_DEV void ptx_mma_s8_16832(int32_t *d, const uint32_t *a, uint32_t b0, uint32_t b1)
{
    asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* D += popc(A(16x128 bits) AND B(128x8 bits)) per (row, col).  (sm_90 has no
 * native .xor.popc: ptxas lowers it to two of these behind a call.) */
PTX_DEV void ptx_mma_b1_and_168128(int32_t *d, uint32_t a0, uint32_t a1, uint32_t b0)
{
    asm("mma.sync.aligned.m16n8k128.row.col.s32.b1.b1.s32.and.popc "
        "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
        : "r"(a0), "r"(a1), "r"(b0));
}

/* Element offset of (row, 16-byte chunk) in a 128-byte-row tile written by TMA with
 * CU_TENSOR_MAP_SWIZZLE_128B (tile base 1024-byte aligned): chunk ^= row % 8. */
PTX_DEV uint32_t ptx_swz128(uint32_t row, uint32_t chunk)
{
    return row * 128u + ((chunk ^ (row & 7u)) << 4);
}


/* ---- grid-level ordering (appended for the split GEMM's fix-up and PDL) ----------- */

/* 32-bit load with acquire semantics at GPU scope (a flag another CTA released). */
PTX_DEV uint32_t ptx_ld_acquire_gpu_u32(const uint32_t *p)
{
    uint32_t v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

/* Atomic add without return, release semantics at GPU scope: after a CTA barrier it
 * publishes every store of the CTA that preceded the barrier (cumulative release). */
PTX_DEV void ptx_red_release_gpu_add_u32(uint32_t *p, uint32_t v)
{
    asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

/* Wrapping increments without return, at GPU scope: old >= lim ? 0 : old + 1 (red.inc), so that a
 * counter taken through lim + 1 increments is back at 0.  The release form, after a CTA barrier,
 * publishes every store of the CTA that preceded the barrier (as ptx_red_release_gpu_add_u32). */
PTX_DEV void ptx_red_release_gpu_inc_u32(uint32_t *p, uint32_t lim)
{
    asm volatile("red.release.gpu.global.inc.u32 [%0], %1;" ::"l"(p), "r"(lim) : "memory");
}
PTX_DEV void ptx_red_relaxed_gpu_inc_u32(uint32_t *p, uint32_t lim)
{
    asm volatile("red.relaxed.gpu.global.inc.u32 [%0], %1;" ::"l"(p), "r"(lim) : "memory");
}

/* Programmatic dependent launch (sm_90): let the next kernel in the stream, launched with
 * the programmatic-serialization attribute, be scheduled once every CTA of this grid has
 * executed this or exited. */
PTX_DEV void ptx_griddep_launch_dependents(void) { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }

/* Wait until the grids this one depends on have completed and their memory is visible
 * (returns at once when the kernel was not launched as a programmatic dependent). */
PTX_DEV void ptx_griddep_wait(void) { asm volatile("griddepcontrol.wait;" ::: "memory"); }

/* Brings the line holding p into L1 (prefetch.global.L1): a later load of it hits L1; nothing waits. */
PTX_DEV void ptx_prefetch_l1(const void *p) { asm volatile("prefetch.global.L1 [%0];" ::"l"(p)); }


/* Atomic add returning the old value, acquire-release at GPU scope (a counter whose last
 * arriver then reads what the others published). */
PTX_DEV uint32_t ptx_atom_acq_rel_gpu_add_u32(uint32_t *p, uint32_t v)
{
    uint32_t old;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
    return old;
}

/* ---- split-K accumulation (appended for the split GEMM's panel path) ------------------ */

/* Fire-and-forget add of four fp32 values into 16 contiguous, 16-byte aligned bytes of global
 * memory, performed at L2 (relaxed, GPU scope; sm_90). */
PTX_DEV void ptx_red_add_v4_f32(float *p, float a, float b, float c, float d)
{
    asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(a), "f"(b), "f"(c), "f"(d)
                 : "memory");
}

/* ---- register pinning (appended for the dSB tensor-core step loop) ------------------ */

/* v unchanged, through an empty asm the compiler cannot see into: a value derived from
 * %tid.x (an operand offset of a lane) is then kept in its register across a loop, where
 * otherwise the compiler re-derives it from S2R SR_TID.X in every iteration. */
PTX_DEV uint32_t ptx_keep_u32(uint32_t v)
{
    asm volatile("" : "+r"(v));
    return v;
}

/* ---- warpgroup MMA (appended for the split GEMM's wgmma consumer, sm_90a) -------------- */
/* wgmma.mma_async is issued by the 4 warps of a warpgroup together (warps 4i..4i+3, every lane,
 * uniform control flow).  Operands come from shared memory through 64-bit matrix descriptors
 * (PTX ISA, "Matrix Descriptor Format"): bits 0-13 start address >> 4, 16-29 leading-dimension
 * byte offset >> 4, 32-45 stride-dimension byte offset >> 4, 49-51 base offset, 62-63 swizzle
 * (1 = 128B).  The f32 accumulator of m64nNk16: warp w of the warpgroup holds rows 16w..16w+15;
 * d[4j..4j+3] is n8 tile j in the mma.sync m16n8 C layout (g = lane / 4, t = lane % 4):
 * d[4j], d[4j+1] at (row g, cols 8j + 2t, +1), d[4j+2], d[4j+3] at (row g + 8, same cols). */

/* Descriptor of a K-major operand with 128-byte swizzle: rows of 128 B, 8-row groups `sbo` bytes
 * apart, starting at shared address `addr` (the swizzle atom 1024-aligned; LBO unused: 1). */
PTX_DEV uint64_t ptx_wgmma_desc_sw128(uint32_t addr, uint32_t sbo)
{
    return (uint64_t)((addr & 0x3ffffu) >> 4) | ((uint64_t)1u << 16) | ((uint64_t)((sbo & 0x3ffffu) >> 4) << 32) |
           ((uint64_t)1u << 62);
}

/* Order this thread's earlier register accesses (accumulators) before the next wgmma.mma_async. */
PTX_DEV void ptx_wgmma_fence(void) { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }

/* Close the wgmma.mma_async operations issued since the last commit into one group. */
PTX_DEV void ptx_wgmma_commit(void) { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }

/* Wait until at most N (0 or 1 here) committed wgmma groups are pending. */
PTX_DEV void ptx_wgmma_wait0(void) { asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory"); }
PTX_DEV void ptx_wgmma_wait1(void) { asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory"); }

/* D(64 x n, f32: d[n / 2] per thread) += A(64x16 bf16, K-major, desc a) * B(16 x n bf16, K-major, desc b):
 * ptx_wgmma_m64n<n>k16_bf16 for n = 8, 16, .., 128 and 256, one instruction each (the shape is in the opcode),
 * generated by PTX_WGMMA_BF16 below.  d[4j..4j+3] is n8 tile j (the layout above), so a narrower shape uses the
 * first n / 2 registers of a wider one's.  Users: the split GEMM's wide tiles (n64, n128, n256; n40..n56 where the
 * B box is N rounded up to 8 rows, dak_gemm_opts.bnw), the whole-K tiles of gemm_whole.cu (n8..n64 at N <= 64;
 * n72..n128 in k_whole_sw, whose n is a CTA's rows of A).  The scale-d predicate is set from 1: accumulate. */

/* The first 4k accumulators as "+f" operands (PTX_WG_D<k>) and as the template's list of them (PTX_WG_R<k>); the
 * template's references to the inputs after them: descriptors a and b (PTX_WG_AB<k>) and scale-d (PTX_WG_P<k>) */
#define PTX_WG_F4(i) "+f"(d[i]), "+f"(d[(i) + 1]), "+f"(d[(i) + 2]), "+f"(d[(i) + 3])
#define PTX_WG_D1 PTX_WG_F4(0)
#define PTX_WG_D2 PTX_WG_D1, PTX_WG_F4(4)
#define PTX_WG_D3 PTX_WG_D2, PTX_WG_F4(8)
#define PTX_WG_D4 PTX_WG_D3, PTX_WG_F4(12)
#define PTX_WG_D5 PTX_WG_D4, PTX_WG_F4(16)
#define PTX_WG_D6 PTX_WG_D5, PTX_WG_F4(20)
#define PTX_WG_D7 PTX_WG_D6, PTX_WG_F4(24)
#define PTX_WG_D8 PTX_WG_D7, PTX_WG_F4(28)
#define PTX_WG_D9 PTX_WG_D8, PTX_WG_F4(32)
#define PTX_WG_D10 PTX_WG_D9, PTX_WG_F4(36)
#define PTX_WG_D11 PTX_WG_D10, PTX_WG_F4(40)
#define PTX_WG_D12 PTX_WG_D11, PTX_WG_F4(44)
#define PTX_WG_D13 PTX_WG_D12, PTX_WG_F4(48)
#define PTX_WG_D14 PTX_WG_D13, PTX_WG_F4(52)
#define PTX_WG_D15 PTX_WG_D14, PTX_WG_F4(56)
#define PTX_WG_D16 PTX_WG_D15, PTX_WG_F4(60)
#define PTX_WG_D17 PTX_WG_D16, PTX_WG_F4(64)
#define PTX_WG_D18 PTX_WG_D17, PTX_WG_F4(68)
#define PTX_WG_D19 PTX_WG_D18, PTX_WG_F4(72)
#define PTX_WG_D20 PTX_WG_D19, PTX_WG_F4(76)
#define PTX_WG_D21 PTX_WG_D20, PTX_WG_F4(80)
#define PTX_WG_D22 PTX_WG_D21, PTX_WG_F4(84)
#define PTX_WG_D23 PTX_WG_D22, PTX_WG_F4(88)
#define PTX_WG_D24 PTX_WG_D23, PTX_WG_F4(92)
#define PTX_WG_D25 PTX_WG_D24, PTX_WG_F4(96)
#define PTX_WG_D26 PTX_WG_D25, PTX_WG_F4(100)
#define PTX_WG_D27 PTX_WG_D26, PTX_WG_F4(104)
#define PTX_WG_D28 PTX_WG_D27, PTX_WG_F4(108)
#define PTX_WG_D29 PTX_WG_D28, PTX_WG_F4(112)
#define PTX_WG_D30 PTX_WG_D29, PTX_WG_F4(116)
#define PTX_WG_D31 PTX_WG_D30, PTX_WG_F4(120)
#define PTX_WG_D32 PTX_WG_D31, PTX_WG_F4(124)
#define PTX_WG_R1 "%0, %1, %2, %3"
#define PTX_WG_R2 PTX_WG_R1 ", %4, %5, %6, %7"
#define PTX_WG_R3 PTX_WG_R2 ", %8, %9, %10, %11"
#define PTX_WG_R4 PTX_WG_R3 ", %12, %13, %14, %15"
#define PTX_WG_R5 PTX_WG_R4 ", %16, %17, %18, %19"
#define PTX_WG_R6 PTX_WG_R5 ", %20, %21, %22, %23"
#define PTX_WG_R7 PTX_WG_R6 ", %24, %25, %26, %27"
#define PTX_WG_R8 PTX_WG_R7 ", %28, %29, %30, %31"
#define PTX_WG_R9 PTX_WG_R8 ", %32, %33, %34, %35"
#define PTX_WG_R10 PTX_WG_R9 ", %36, %37, %38, %39"
#define PTX_WG_R11 PTX_WG_R10 ", %40, %41, %42, %43"
#define PTX_WG_R12 PTX_WG_R11 ", %44, %45, %46, %47"
#define PTX_WG_R13 PTX_WG_R12 ", %48, %49, %50, %51"
#define PTX_WG_R14 PTX_WG_R13 ", %52, %53, %54, %55"
#define PTX_WG_R15 PTX_WG_R14 ", %56, %57, %58, %59"
#define PTX_WG_R16 PTX_WG_R15 ", %60, %61, %62, %63"
#define PTX_WG_R17 PTX_WG_R16 ", %64, %65, %66, %67"
#define PTX_WG_R18 PTX_WG_R17 ", %68, %69, %70, %71"
#define PTX_WG_R19 PTX_WG_R18 ", %72, %73, %74, %75"
#define PTX_WG_R20 PTX_WG_R19 ", %76, %77, %78, %79"
#define PTX_WG_R21 PTX_WG_R20 ", %80, %81, %82, %83"
#define PTX_WG_R22 PTX_WG_R21 ", %84, %85, %86, %87"
#define PTX_WG_R23 PTX_WG_R22 ", %88, %89, %90, %91"
#define PTX_WG_R24 PTX_WG_R23 ", %92, %93, %94, %95"
#define PTX_WG_R25 PTX_WG_R24 ", %96, %97, %98, %99"
#define PTX_WG_R26 PTX_WG_R25 ", %100, %101, %102, %103"
#define PTX_WG_R27 PTX_WG_R26 ", %104, %105, %106, %107"
#define PTX_WG_R28 PTX_WG_R27 ", %108, %109, %110, %111"
#define PTX_WG_R29 PTX_WG_R28 ", %112, %113, %114, %115"
#define PTX_WG_R30 PTX_WG_R29 ", %116, %117, %118, %119"
#define PTX_WG_R31 PTX_WG_R30 ", %120, %121, %122, %123"
#define PTX_WG_R32 PTX_WG_R31 ", %124, %125, %126, %127"
#define PTX_WG_AB1 "%4, %5"
#define PTX_WG_AB2 "%8, %9"
#define PTX_WG_AB3 "%12, %13"
#define PTX_WG_AB4 "%16, %17"
#define PTX_WG_AB5 "%20, %21"
#define PTX_WG_AB6 "%24, %25"
#define PTX_WG_AB7 "%28, %29"
#define PTX_WG_AB8 "%32, %33"
#define PTX_WG_AB9 "%36, %37"
#define PTX_WG_AB10 "%40, %41"
#define PTX_WG_AB11 "%44, %45"
#define PTX_WG_AB12 "%48, %49"
#define PTX_WG_AB13 "%52, %53"
#define PTX_WG_AB14 "%56, %57"
#define PTX_WG_AB15 "%60, %61"
#define PTX_WG_AB16 "%64, %65"
#define PTX_WG_AB32 "%128, %129"
#define PTX_WG_P1 "%6"
#define PTX_WG_P2 "%10"
#define PTX_WG_P3 "%14"
#define PTX_WG_P4 "%18"
#define PTX_WG_P5 "%22"
#define PTX_WG_P6 "%26"
#define PTX_WG_P7 "%30"
#define PTX_WG_P8 "%34"
#define PTX_WG_P9 "%38"
#define PTX_WG_P10 "%42"
#define PTX_WG_P11 "%46"
#define PTX_WG_P12 "%50"
#define PTX_WG_P13 "%54"
#define PTX_WG_P14 "%58"
#define PTX_WG_P15 "%62"
#define PTX_WG_P16 "%66"
#define PTX_WG_P32 "%130"
#define PTX_WGMMA_BF16(n, k)                                                                                   \
    PTX_DEV void ptx_wgmma_m64n##n##k16_bf16(float *d, uint64_t a, uint64_t b)                                 \
    {                                                                                                          \
        asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, " PTX_WG_P##k ", 0;\n\t"                           \
                     "wgmma.mma_async.sync.aligned.m64n" #n "k16.f32.bf16.bf16 {" PTX_WG_R##k "}, " PTX_WG_AB##k  \
                     ", p, 1, 1, 0, 0;\n\t}"                                                                   \
                     : PTX_WG_D##k                                                                             \
                     : "l"(a), "l"(b), "r"(1u)                                                                 \
                     : "memory");                                                                              \
    }
PTX_WGMMA_BF16(8, 1)
PTX_WGMMA_BF16(16, 2)
PTX_WGMMA_BF16(24, 3)
PTX_WGMMA_BF16(32, 4)
PTX_WGMMA_BF16(40, 5)
PTX_WGMMA_BF16(48, 6)
PTX_WGMMA_BF16(56, 7)
PTX_WGMMA_BF16(64, 8)
PTX_WGMMA_BF16(72, 9)
PTX_WGMMA_BF16(80, 10)
PTX_WGMMA_BF16(88, 11)
PTX_WGMMA_BF16(96, 12)
PTX_WGMMA_BF16(104, 13)
PTX_WGMMA_BF16(112, 14)
PTX_WGMMA_BF16(120, 15)
PTX_WGMMA_BF16(128, 16)
PTX_WGMMA_BF16(256, 32)

/* Pins n (a compile-time constant after inlining: 32, 64 or 128) accumulator registers in place
 * across a wgmma.wait (no read moved above it, no write below the next issue): an empty asm that
 * reads and writes each of them. */
PTX_DEV void ptx_wgmma_fence_acc(float *d, const int n)
{
#pragma unroll
    for (int i = 0; i < n; i++) asm volatile("" : "+f"(d[i])::"memory");
}

/* D(64 x 8 wn) += A * B for wn = 1..16 n8 groups: one of the sixteen widths n8..n128, by a branch that is uniform
 * over the warpgroup (wn a constant where the caller inlines it: a run-time one puts a warpgroup.arrive before every
 * wgmma, ptxas C7519). */
PTX_DEV void ptx_wgmma_m64n8xk16_bf16(float *d, uint64_t a, uint64_t b, uint32_t wn)
{
    switch (wn) {
    case 1: ptx_wgmma_m64n8k16_bf16(d, a, b); break;
    case 2: ptx_wgmma_m64n16k16_bf16(d, a, b); break;
    case 3: ptx_wgmma_m64n24k16_bf16(d, a, b); break;
    case 4: ptx_wgmma_m64n32k16_bf16(d, a, b); break;
    case 5: ptx_wgmma_m64n40k16_bf16(d, a, b); break;
    case 6: ptx_wgmma_m64n48k16_bf16(d, a, b); break;
    case 7: ptx_wgmma_m64n56k16_bf16(d, a, b); break;
    case 8: ptx_wgmma_m64n64k16_bf16(d, a, b); break;
    case 9: ptx_wgmma_m64n72k16_bf16(d, a, b); break;
    case 10: ptx_wgmma_m64n80k16_bf16(d, a, b); break;
    case 11: ptx_wgmma_m64n88k16_bf16(d, a, b); break;
    case 12: ptx_wgmma_m64n96k16_bf16(d, a, b); break;
    case 13: ptx_wgmma_m64n104k16_bf16(d, a, b); break;
    case 14: ptx_wgmma_m64n112k16_bf16(d, a, b); break;
    case 15: ptx_wgmma_m64n120k16_bf16(d, a, b); break;
    default: ptx_wgmma_m64n128k16_bf16(d, a, b); break;
    }
}


#endif
