// Runs the GPU fill kernels (problem/philox.cuh + engine/cuda/inputs.cuh) on
// the host: a block's threads are POSIX threads, __syncthreads a barrier,
// the __d*_rn intrinsics plain IEEE double ops (built with
// -ffp-contract=off). Checks the kernels' own logic (indexing, the
// softmax reduction order) against the CPU generator without a GPU.
// stdin: one line per tensor "name t kind dtype post a b rows cols numel";
// stdout: {"name": {"index": [...], "bits": [...]}, ...} (all elements).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <pthread.h>
#include <vector>

#define __CUDACC__ 1
struct kf_dim3 { unsigned x, y, z; };
static thread_local kf_dim3 threadIdx, blockIdx;
static kf_dim3 blockDim, gridDim;
static pthread_barrier_t kf_bar;
#define __global__
#define __device__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __shared__ static
static inline void __syncthreads() { pthread_barrier_wait(&kf_bar); }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline double __ddiv_rn(double a, double b) { return a / b; }
static inline double __dsqrt_rn(double a) { return std::sqrt(a); }
static inline long long __double_as_longlong(double d) { long long u; memcpy(&u, &d, 8); return u; }
static inline double __longlong_as_double(long long u) { double d; memcpy(&d, &u, 8); return d; }
static inline float __double2float_rn(double d) { return (float)d; }
static inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
static inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }

#include "problem/philox.cuh"
#include "engine/cuda/inputs.cuh"

struct job {
	unsigned block, thread;
	void (*run)(void *);
	void *arg;
};

struct soft_args {
	void *dst; long long nrows; unsigned long long seed; int t, kind, dtype, post;
	double a, b; long long rows, cols;
};

static void run_soft(void *p)
{
	soft_args *s = (soft_args *)p;
	kf_fill_softmax_rows(s->dst, s->nrows, s->seed, s->t, s->kind, s->dtype, s->post, s->a, s->b,
			     s->rows, s->cols);
}

static void *thread_main(void *p)
{
	job *j = (job *)p;
	blockIdx = { j->block, 0, 0 };
	threadIdx = { j->thread, 0, 0 };
	j->run(j->arg);
	return nullptr;
}

int main()
{
	char name[64];
	int t, kind, dtype, post;
	double a, b;
	long long rows, cols, numel;
	unsigned long long seed = 20261122ull;
	bool first = true;
	printf("{");
	while (scanf("%63s %d %d %d %d %lf %lf %lld %lld %lld", name, &t, &kind, &dtype, &post, &a, &b,
		     &rows, &cols, &numel) == 10) {
		size_t es = dtype == KF_DT_F32 || dtype == KF_DT_I32 ? 4 : dtype == KF_DT_I64 ? 8 :
			    dtype == KF_DT_BOOL ? 1 : 2;
		std::vector<unsigned char> buf(numel * es, 0xA5);
		void *dst = buf.data();
		if (kf_post_is_rowwise(post)) {
			// 3 blocks of 256 threads, grid-stride over rows
			soft_args s = { dst, numel / cols, seed, t, kind, dtype, post, a, b, rows, cols };
			blockDim = { 256, 1, 1 };
			gridDim = { 3, 1, 1 };
			for (unsigned blk = 0; blk < 3; blk++) {
				pthread_barrier_init(&kf_bar, nullptr, 256);
				std::vector<pthread_t> th(256);
				std::vector<job> jobs(256);
				for (unsigned k = 0; k < 256; k++) {
					jobs[k] = { blk, k, run_soft, &s };
					pthread_create(&th[k], nullptr, thread_main, &jobs[k]);
				}
				for (unsigned k = 0; k < 256; k++)
					pthread_join(th[k], nullptr);
				pthread_barrier_destroy(&kf_bar);
			}
		} else {
			// 5 blocks of 64 threads, grid-stride
			blockDim = { 64, 1, 1 };
			gridDim = { 5, 1, 1 };
			for (unsigned blk = 0; blk < 5; blk++)
				for (unsigned k = 0; k < 64; k++) {
					blockIdx = { blk, 0, 0 };
					threadIdx = { k, 0, 0 };
					kf_fill_elementwise(dst, numel, seed, t, kind, dtype, post, a, b, rows, cols);
				}
		}
		printf("%s\"%s\": {\"index\": [", first ? "" : ", ", name);
		for (long long i = 0; i < numel; i++)
			printf("%s%lld", i ? ", " : "", i);
		printf("], \"bits\": [");
		for (long long i = 0; i < numel; i++) {
			unsigned long long v = 0;
			for (size_t j = 0; j < es; j++)
				v |= (unsigned long long)buf[i * es + j] << (8 * j);
			printf("%s\"%llx\"", i ? ", " : "", v);
		}
		printf("]}");
		first = false;
	}
	printf("}\n");
	return 0;
}
