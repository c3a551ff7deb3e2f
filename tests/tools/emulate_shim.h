// CUDA built-ins emulated on the host for tests/tools/emulate_refs.py.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <ucontext.h>
// A block's threads are fibers run round-robin: each runs until it yields
// (a warp shuffle step, or waiting at __syncthreads); a barrier opens when
// every live thread waits at it.
struct kf_dim3 { unsigned x, y, z; };
static kf_dim3 threadIdx, blockIdx, blockDim, gridDim;
#define KF_MAXT 1024
#define KF_STACK (128 * 1024)
#if defined(__x86_64__) && !defined(KF_EMU_UCONTEXT)
// swapcontext saves and restores the signal mask, a system call at each of
// the millions of switches a kernel makes; the fibers need only the
// callee-saved registers and the FP control words (System V x86-64).
extern "C" void kf_switch(void **save_sp, void *to_sp);
asm(".pushsection .text\n.globl kf_switch\n.type kf_switch,@function\nkf_switch:\n"
    "pushq %rbp\npushq %rbx\npushq %r12\npushq %r13\npushq %r14\npushq %r15\n"
    "subq $8, %rsp\nstmxcsr (%rsp)\nfnstcw 4(%rsp)\n"
    "movq %rsp, (%rdi)\nmovq %rsi, %rsp\n"
    "ldmxcsr (%rsp)\nfldcw 4(%rsp)\naddq $8, %rsp\n"
    "popq %r15\npopq %r14\npopq %r13\npopq %r12\npopq %rbx\npopq %rbp\nret\n"
    ".size kf_switch, .-kf_switch\n.popsection\n");
static void *kf_main_sp, *kf_sp[KF_MAXT];
#define KF_TO_MAIN(t) kf_switch(&kf_sp[t], kf_main_sp)
#define KF_TO_FIBER(t) kf_switch(&kf_main_sp, kf_sp[t])
#else
static ucontext_t kf_main_ctx, kf_ctx[KF_MAXT];
#define KF_TO_MAIN(t) swapcontext(&kf_ctx[t], &kf_main_ctx)
#define KF_TO_FIBER(t) swapcontext(&kf_main_ctx, &kf_ctx[t])
#endif
static char *kf_stacks;
static int kf_cur, kf_done[KF_MAXT], kf_at_bar[KF_MAXT];
static unsigned long kf_bar_gen;
static const std::function<void()> *kf_fn;
static double kf_shfl[KF_MAXT];
static unsigned char kf_dyn_smem[1 << 20];
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__
#define __shared__ static
static void kf_yield() { KF_TO_MAIN(kf_cur); }
static inline void __syncthreads()
{
    unsigned long g = kf_bar_gen;
    kf_at_bar[kf_cur] = 1;
    while (kf_bar_gen == g)
        kf_yield();
}
static inline long long min(long long a, long long b) { return a < b ? a : b; }
static inline long long max(long long a, long long b) { return a > b ? a : b; }
struct AnyPtr { void *p; template <class T> operator T *() const { return (T *)p; } };
// launch-block expressions over loop variables (C's 64-bit arithmetic)
static inline long long kf_e_ceil_div(long long a, long long b) { return a / b + (a % b != 0); }
static inline long long kf_e_min(long long a, long long b) { return a < b ? a : b; }
static inline long long kf_e_max(long long a, long long b) { return a > b ? a : b; }
static void kf_entry()
{
    (*kf_fn)();
    kf_done[kf_cur] = 1;
    KF_TO_MAIN(kf_cur); // never resumed
    abort();
}
// A fresh fiber on stack t: kf_entry runs at its first switch.
static void kf_fiber_init(int t)
{
#if defined(__x86_64__) && !defined(KF_EMU_UCONTEXT)
    // the frame kf_switch pops: control words, six registers, the return
    // address (16-byte aligned, as after a call)
    unsigned long *sp = (unsigned long *)(kf_stacks + (size_t)(t + 1) * KF_STACK) - 2;
    *sp = (unsigned long)(void *)kf_entry;
    sp -= 7;
    for (int i = 1; i < 7; i++) sp[i] = 0;
    unsigned cw[2];
    asm volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(cw[0]), "=m"(cw[1]));
    memcpy(sp, cw, 8);
    kf_sp[t] = sp;
#else
    getcontext(&kf_ctx[t]);
    kf_ctx[t].uc_stack.ss_sp = kf_stacks + (size_t)t * KF_STACK;
    kf_ctx[t].uc_stack.ss_size = KF_STACK;
    kf_ctx[t].uc_link = nullptr;
    makecontext(&kf_ctx[t], kf_entry, 0);
#endif
}
static void kf_launch(kf_dim3 g, kf_dim3 b, const std::function<void()> &fn)
{
    gridDim = g;
    blockDim = b;
    int nt = (int)(b.x * b.y * b.z);
    if (!kf_stacks) kf_stacks = (char *)malloc((size_t)KF_MAXT * KF_STACK);
    kf_fn = &fn;
    for (unsigned bz = 0; bz < g.z; bz++)
        for (unsigned by = 0; by < g.y; by++)
            for (unsigned bx = 0; bx < g.x; bx++) {
                blockIdx = { bx, by, bz };
                for (int t = 0; t < nt; t++) {
                    kf_fiber_init(t);
                    kf_done[t] = kf_at_bar[t] = 0;
                }
                for (;;) {
                    int live = 0, waiting = 0;
                    for (int t = 0; t < nt; t++) {
                        if (kf_done[t]) continue;
                        kf_cur = t;
                        threadIdx = { t % b.x, t / b.x % b.y, t / (b.x * b.y) };
                        KF_TO_FIBER(t);
                        if (!kf_done[t]) { live++; waiting += kf_at_bar[t]; }
                    }
                    if (!live) break;
                    if (waiting == live) {
                        kf_bar_gen++;
                        for (int t = 0; t < nt; t++) kf_at_bar[t] = 0;
                    }
                }
            }
}
static void *kf_load(const char *path, size_t bytes)
{
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(2); }
    unsigned char h[10];
    if (fread(h, 1, 10, f) != 10) exit(2);
    fseek(f, 10 + (h[8] | h[9] << 8), SEEK_SET);
    void *p = malloc(bytes + 1);
    if (fread(p, 1, bytes, f) != bytes) { fprintf(stderr, "%s: short\n", path); exit(2); }
    fclose(f);
    return p;
}
// Common device built-ins the templates use.
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
#define __noinline__
static const int warpSize = 32;
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(8) float2 { float x, y; };
struct alignas(16) int4 { int x, y, z, w; };
static inline float4 make_float4(float x, float y, float z, float w) { return { x, y, z, w }; }
static inline float2 make_float2(float x, float y) { return { x, y }; }
static inline float min(float a, float b) { return a < b ? a : b; }
static inline float max(float a, float b) { return a > b ? a : b; }
static inline double min(double a, double b) { return a < b ? a : b; }
static inline double max(double a, double b) { return a > b ? a : b; }
static inline int min(int a, int b) { return a < b ? a : b; }
static inline int max(int a, int b) { return a > b ? a : b; }
static inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
static inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
template <class T> static inline T __ldg(const T *p) { return *p; }
template <class T> static inline T __ldcs(const T *p) { return *p; }
template <class T> static inline T __ldcg(const T *p) { return *p; }
template <class T> static inline void __stcs(T *p, T v) { *p = v; }
template <class T> static inline void __stcg(T *p, T v) { *p = v; }
static inline float __fdividef(float a, float b) { return a / b; }
static inline float __frcp_rn(float a) { return 1.0f / a; }
static inline float __fsqrt_rn(float a) { return sqrtf(a); }
static inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __saturatef(float x) { return x < 0 ? 0 : x > 1 ? 1 : x; }
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
static inline int __float_as_int(float f) { int i; memcpy(&i, &f, 4); return i; }
static inline unsigned __float_as_uint(float f) { unsigned i; memcpy(&i, &f, 4); return i; }
static inline float __uint_as_float(unsigned i) { float f; memcpy(&f, &i, 4); return f; }
static inline int __float2int_rn(float f) { return (int)nearbyintf(f); }
static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
static inline void __threadfence() {}
static inline void __threadfence_block() {}
// Fibers run round-robin, so atomics need no locking.
template <class T> static inline T atomicAdd(T *p, T v) { T o = *p; *p = o + v; return o; }
template <class T> static inline T atomicMax(T *p, T v) { T o = *p; if (v > o) *p = v; return o; }
template <class T> static inline T atomicMin(T *p, T v) { T o = *p; if (v < o) *p = v; return o; }
template <class T> static inline T atomicExch(T *p, T v) { T o = *p; *p = v; return o; }
template <class T> static inline T atomicCAS(T *p, T c, T v) { T o = *p; if (o == c) *p = v; return o; }
// Warp shuffles: every lane of the warp posts its value, yields, reads its
// source lane's, yields (lanes of one warp run in lock step between yields).
template <class T> static inline T kf_shfl_from(T v, int src)
{
    unsigned t = kf_cur, base = t - t % 32, nt = blockDim.x * blockDim.y * blockDim.z;
    kf_shfl[t] = (double)v;
    kf_yield();
    T r = src >= 0 && src < 32 && base + src < nt ? (T)kf_shfl[base + src] : v;
    kf_yield();
    return r;
}
template <class T> static inline T __shfl_sync(unsigned, T v, int src, int w = 32)
{ int lane = kf_cur % 32; return kf_shfl_from(v, (lane & ~(w - 1)) + (src % w)); }
template <class T> static inline T __shfl_xor_sync(unsigned, T v, int m, int w = 32)
{ int lane = kf_cur % 32; int s = lane ^ m; return kf_shfl_from(v, (s & ~(w - 1)) == (lane & ~(w - 1)) ? s : lane); }
template <class T> static inline T __shfl_up_sync(unsigned, T v, unsigned d, int w = 32)
{ int lane = kf_cur % 32; return kf_shfl_from(v, (lane % w) >= (int)d ? lane - (int)d : lane); }
template <class T> static inline T kf_shfl_down_any(T v, unsigned d, int w)
{ int lane = kf_cur % 32; return kf_shfl_from(v, (lane % w) + (int)d < w ? lane + (int)d : lane); }
static inline double __shfl_down_sync(unsigned, double v, unsigned d, int w = 32) { return kf_shfl_down_any(v, d, w); }
static inline float __shfl_down_sync(unsigned, float v, unsigned d, int w = 32) { return kf_shfl_down_any(v, d, w); }
static inline int __shfl_down_sync(unsigned, int v, unsigned d, int w = 32) { return kf_shfl_down_any(v, d, w); }
static inline long long __shfl_down_sync(unsigned, long long v, unsigned d, int w = 32) { return kf_shfl_down_any(v, d, w); }
static inline unsigned __shfl_down_sync(unsigned, unsigned v, unsigned d, int w = 32) { return kf_shfl_down_any(v, d, w); }
static inline unsigned __ballot_sync(unsigned, int pred)
{
    unsigned t = kf_cur, base = t - t % 32, nt = blockDim.x * blockDim.y * blockDim.z, r = 0;
    kf_shfl[t] = pred ? 1.0 : 0.0;
    kf_yield();
    for (unsigned l = 0; l < 32 && base + l < nt; l++)
        if (kf_shfl[base + l] != 0.0) r |= 1u << l;
    kf_yield();
    return r;
}
static inline void __syncwarp(unsigned = 0xffffffffu) { kf_yield(); }
// glibc declares these names without exporting them: map them to libm's.
#define __expf(x) expf(x)
#define __logf(x) logf(x)
#define __log2f(x) log2f(x)
#define __exp2f(x) exp2f(x)
#define __exp10f(x) exp10f(x)
#define __powf(a, b) powf(a, b)
#define __tanhf(x) tanhf(x)
#define __sinf(x) sinf(x)
#define __cosf(x) cosf(x)
