/* Thirty-fifth session's probe (an experiment record, not part of the build): which CTAs can enter an SM that holds
 * small CTAs of a kernel before them?  The engine's step (s34 stamps, s35 call 1): after a whole-K GEMM the
 * activation's CTAs (344 of 256 threads, 24 registers, up to 3 an SM) enter early beside it and wait; the next GEMM
 * (the split kernel: 320 threads, 168 registers, ~150 KiB in the engine) never entered an SM holding one, with or
 * without the cluster attribute, with one activation CTA an SM or three.  Guesses: (a) shared memory (228 KiB an SM,
 * 1 KiB reserved a CTA); (b) registers by SM sub-partition: 10 warps of 168 registers put 3 warps (16128 of 16384
 * registers) on two of the four quarters, so a quarter holding any small warp has no room.
 * Sequence per case, as in the step: k_spin "pre" (PRE KiB of shared memory, 132 CTAs of 320 threads, spins 30 us,
 * triggers its dependents at its top), k_spin "hold" (132 h CTAs of 256 threads, no shared memory, a PDL dependent of
 * pre, spins 60 us, triggers at its top), "big" (132 CTAs, S KiB, a PDL dependent of hold): k_spin (few registers) or
 * k_regs (168 registers) of 320 or 256 threads.  Printed: big's CTAs that entered an SM while a hold CTA was there, and
 * hold's that entered an SM while a pre CTA was there.
 * Build: nvcc -O2 -gencode=arch=compute_90a,code=sm_90a -o s35-fit s35-fit.cu */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(x)                                                                                                          \
    do {                                                                                                               \
        cudaError_t e_ = (x);                                                                                          \
        if (e_ != cudaSuccess) {                                                                                       \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));                              \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

static __device__ __forceinline__ unsigned long long gt(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* ts[b]: entry, exit, smid */
__global__ void k_spin(unsigned long long *ts, unsigned long long spin_ns)
{
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    const unsigned long long t0 = gt();
    while (gt() - t0 < spin_ns) {
    }
    if (threadIdx.x == 0) {
        unsigned s;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
        ts[3 * blockIdx.x] = t0, ts[3 * blockIdx.x + 1] = gt(), ts[3 * blockIdx.x + 2] = s;
    }
}

/* 168 registers a thread (ptxas -v: 168), 320 threads at most: the split kernel's footprint */
#define NACC 160
__global__ void __launch_bounds__(320, 1) k_regs(unsigned long long *ts, unsigned long long spin_ns)
{
    extern __shared__ unsigned char sm[];
    const unsigned long long t0 = gt();
    float a[NACC];
#pragma unroll
    for (int i = 0; i < NACC; i++) a[i] = (float)((threadIdx.x + i) & 255);
    float x = (float)(spin_ns & 7) * 0.5f;
#pragma unroll 1
    for (int it = 0; it < 4; it++) {
#pragma unroll
        for (int i = 0; i < NACC; i++) a[i] = fmaf(a[i], x, a[(i + 7) % NACC]);
    }
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < NACC; i++) s += a[i] * (float)(i + 1);
    if (threadIdx.x == 0) {
        unsigned m;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(m));
        sm[0] = (unsigned char)s;
        ts[3 * blockIdx.x] = t0, ts[3 * blockIdx.x + 1] = gt() + (sm[0] == 255 && s == 1.5f), ts[3 * blockIdx.x + 2] = m;
    }
}

static void launch(const void *k, unsigned grid, unsigned thr, size_t smem, int pdl, unsigned long long *ts,
                   unsigned long long ns, cudaStream_t st)
{
    cudaLaunchConfig_t cfg = {0};
    cudaLaunchAttribute at[1];
    cfg.gridDim = dim3(grid), cfg.blockDim = dim3(thr), cfg.dynamicSmemBytes = smem, cfg.stream = st;
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = at, cfg.numAttrs = pdl ? 1 : 0;
    void *args[] = {&ts, &ns};
    CK(cudaLaunchKernelExC(&cfg, k, args));
}

static void sortd(double *v, int n)
{
    for (int a = 1; a < n; a++) {
        const double t = v[a];
        int c = a;
        for (; c > 0 && v[c - 1] > t; c--) v[c] = v[c - 1];
        v[c] = t;
    }
}

int main(void)
{
    int sms, optin;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
    int per_sm, reserved;
    CK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, 0));
    CK(cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, 0));
    printf("# %d SMs, %d B a block (opt-in), %d B an SM, %d B reserved a block\n", sms, optin, per_sm, reserved);
    CK(cudaFuncSetAttribute(k_spin, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    unsigned long long *pre, *hold, *big;
    CK(cudaMallocManaged(&pre, 3 * 8 * 1024));
    CK(cudaMallocManaged(&hold, 3 * 8 * 1024));
    CK(cudaMallocManaged(&big, 3 * 8 * 1024));
    CK(cudaFuncSetAttribute(k_regs, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
    struct cs {
        const char *name;
        unsigned pre_kib, big_kib, big_thr;
        int regs;
    } cases[] = {{"smem 150", 200, 150, 320, 0},          {"smem 200", 200, 200, 320, 0},
                 {"smem 226", 200, 226, 320, 0},          {"smem 227", 200, 227, 320, 0},
                 {"regs168 x320 150", 200, 150, 320, 1}, {"regs168 x256 150", 200, 150, 256, 1},
                 {"pre 227, smem 150", 227, 150, 320, 0}, {"pre 227, regs x320", 227, 150, 320, 1}};
    printf("%-20s %2s | %8s %8s | %8s %8s | %s\n", "case", "h", "big_in", "of", "hold_in", "of",
           "us from pre's first exit: big entry min / median, hold entry min / median, hold end median");
    for (unsigned ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (int h = 1; h <= 3; h += 2)
            for (int rep = 0; rep < 2; rep++) {
                const struct cs *c = &cases[ci];
                const size_t P = c->pre_kib * 1024u > (unsigned)optin ? (size_t)optin : c->pre_kib * 1024u;
                const size_t S = c->big_kib * 1024u > (unsigned)optin ? (size_t)optin : c->big_kib * 1024u;
                const unsigned gh = (unsigned)(sms * h);
                launch((const void *)k_spin, sms, 320, P, 0, pre, 30000ull, st);
                launch((const void *)k_spin, gh, 256, 0, 1, hold, 60000ull, st);
                launch(c->regs ? (const void *)k_regs : (const void *)k_spin, sms, c->big_thr, S, 1, big, 0ull, st);
                CK(cudaStreamSynchronize(st));
                unsigned long long pre_x0 = ~0ull, hend[1024] = {0}, pend[1024] = {0};
                int hcount[1024] = {0}, pcount[1024] = {0};
                for (int b = 0; b < sms; b++) {
                    const unsigned m = (unsigned)pre[3 * b + 2];
                    if (pre[3 * b + 1] < pre_x0) pre_x0 = pre[3 * b + 1];
                    if (pre[3 * b + 1] > pend[m]) pend[m] = pre[3 * b + 1];
                    pcount[m]++;
                }
                int hin = 0, in = 0;
                double be[1024], he[1024], hx[1024];
                for (unsigned b = 0; b < gh; b++) {
                    const unsigned m = (unsigned)hold[3 * b + 2];
                    if (hold[3 * b + 1] > hend[m]) hend[m] = hold[3 * b + 1];
                    hcount[m]++;
                    if (pcount[m] && hold[3 * b] < pend[m]) hin++;
                    he[b] = ((double)hold[3 * b] - (double)pre_x0) / 1e3;
                    hx[b] = ((double)hold[3 * b + 1] - (double)pre_x0) / 1e3;
                }
                for (int b = 0; b < sms; b++) {
                    const unsigned m = (unsigned)big[3 * b + 2];
                    if (hcount[m] && big[3 * b] < hend[m]) in++;
                    be[b] = ((double)big[3 * b] - (double)pre_x0) / 1e3;
                }
                sortd(be, sms), sortd(he, (int)gh), sortd(hx, (int)gh);
                printf("%-20s %2d | %8d %8d | %8d %8u | %.1f / %.1f, %.1f / %.1f, %.1f\n", c->name, h, in, sms, hin, gh,
                       be[0], be[sms / 2], he[0], he[gh / 2], hx[gh / 2]);
            }
    return 0;
}
