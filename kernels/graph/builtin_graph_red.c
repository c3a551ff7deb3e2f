/* The graph template's reductions: the shape of a reduction kernel and its
 * loops, and the norm statistics. Three shapes, all summing in double in a
 * fixed order:
 * - a block per output (the general one), the block's threads strided over
 *   the reduced values, then a tree in shared memory;
 * - a thread per output, serial over the reduced values, where the
 *   innermost dimension is kept (a reduction over channels): a warp's
 *   loads are then consecutive. A block per output of 32 threads there
 *   read 22 values 900 floats apart, a sector each;
 * - norm statistics, and sums, means, maxima and minima with few outputs,
 *   split over P blocks each (a batch norm has one statistic per channel:
 *   16 blocks for 2^28 values on level 2's 072), the partial results
 *   combined in order by a last kernel.
 * Parameter red: -1 (default) picks by size, 0 a block per output always,
 * 1 the other shapes wherever they apply (tests at small sizes). */
#include "kernels/graph/builtin_graph.h"

#include <stdio.h>
#include <string.h>

#include "kernels/builtin_util.h"
#include "gen/graph_red_cuh.h"

/* thread per output: at most this many values a thread, at least this
 * many outputs (threads) */
#define RED_THREAD_MAX_R 4096
#define RED_THREAD_MIN_OUTS 8192
/* split statistics: about this many blocks in all, each at least
 * RED_SPLIT_MIN_CHUNK values */
#define RED_SPLIT_BLOCKS 1024
#define RED_SPLIT_MIN_CHUNK 8192
#define RED_SPLIT_MAX_P 256

void gr_make_view(struct gr_rview *v, const long long *shape, int rank, unsigned redmask)
{
	long long st[GR_MAX_RANK], acc = 1;

	for (int j = rank - 1; j >= 0; j--) {
		st[j] = acc;
		acc *= shape[j];
	}
	v->n = 0;
	for (int j = 0; j < rank; j++) {
		int r = (redmask >> j) & 1, k = v->n - 1;
		if (shape[j] == 1)
			continue;
		if (k >= 0 && v->red[k] == r && v->stride[k] == shape[j] * st[j]) {
			v->size[k] *= shape[j];
			v->stride[k] = st[j];
		} else {
			v->size[v->n] = shape[j];
			v->stride[v->n] = st[j];
			v->red[v->n++] = r;
		}
	}
}

void gr_view_counts(const struct gr_rview *v, long long *R, long long *outs)
{
	*R = *outs = 1;
	for (int j = 0; j < v->n; j++)
		*(v->red[j] ? R : outs) *= v->size[j];
}

int gr_red_thread(const struct gr_plan *p, const struct gr_rview *v)
{
	long long R, outs;

	gr_view_counts(v, &R, &outs);
	if (p->red == 0 || v->n == 0 || v->red[v->n - 1] || R < 2)
		return 0;
	return p->red == 1 || (R <= RED_THREAD_MAX_R && outs >= RED_THREAD_MIN_OUTS);
}

/* The decomposition of output o into its base offset (head), and the loop
 * over the reduced values r in [r0, r1) reading `const double a` (loop;
 * the caller closes it). thread: r serial from r0 in one thread, else
 * strided over the block's threads. */
static void loops(const struct gr_rview *v, const char *o, const char *r0, const char *r1, int thread,
		  const char *src, struct buf *head, struct buf *loop)
{
	int nk = 0, nr = 0;
	long long ks[GR_MAX_RANK], kst[GR_MAX_RANK], rs[GR_MAX_RANK], rst[GR_MAX_RANK];

	for (int j = 0; j < v->n; j++) {
		if (v->red[j]) {
			rs[nr] = v->size[j];
			rst[nr++] = v->stride[j];
		} else {
			ks[nk] = v->size[j];
			kst[nk++] = v->stride[j];
		}
	}
	buf_addf(head, "    const long long o = %s;\n    long long base = 0, u = o;\n", o);
	for (int j = nk - 1; j >= 0; j--)
		buf_addf(head, "    base += (u %% %lldLL) * %lldLL; u /= %lldLL;\n", ks[j], kst[j], ks[j]);
	if (thread)
		buf_addf(loop, "    for (long long r = %s; r < %s; r++) {\n", r0, r1);
	else
		buf_addf(loop, "#pragma unroll 4\n"
			    "    for (long long r = %s + threadIdx.x; r < %s; r += blockDim.x) {\n", r0, r1);
	if (nr == 1) {
		buf_addf(loop, "        const long long off = base + r * %lldLL;\n", rst[0]);
	} else {
		buf_adds(loop, "        long long rq = r, off = base;\n");
		for (int j = nr - 1; j >= 0; j--)
			buf_addf(loop, "        off += (rq %% %lldLL) * %lldLL; rq /= %lldLL;\n", rs[j], rst[j],
				 rs[j]);
	}
	buf_addf(loop, "        const double a = (double)%s[off];\n", src);
}

void gr_red_loops(const struct gr_rview *v, int thread, const char *src, struct buf *head,
		  struct buf *loop, long long *R, long long *outs)
{
	char r1[32];

	gr_view_counts(v, R, outs);
	snprintf(r1, sizeof(r1), "%lldLL", *R);
	if (thread) {
		loops(v, "blockIdx.x * (long long)blockDim.x + threadIdx.x", "0", r1, 1, src, head, loop);
		buf_addf(head, "    if (o >= %lldLL) return;\n", *outs);
	} else {
		loops(v, "blockIdx.x", "0", r1, 0, src, head, loop);
	}
}

long long gr_red_block(long long R)
{
	long long b = 32;

	while (b < R && b < 256)
		b *= 2;
	return b;
}

/* How many blocks each statistic splits over (1: none). */
static long long split_parts(const struct gr_plan *p, long long R, long long nstat)
{
	long long P;

	if (p->red == 0)
		return 1;
	if (p->red == 1)
		return R >= 64 ? (R / 32 < 8 ? R / 32 : 8) : 1;
	P = (RED_SPLIT_BLOCKS + nstat - 1) / nstat;
	if (P > R / RED_SPLIT_MIN_CHUNK)
		P = R / RED_SPLIT_MIN_CHUNK;
	return P > RED_SPLIT_MAX_P ? RED_SPLIT_MAX_P : P < 2 ? 1 : P;
}

static int one_kernel(struct gr_plan *p, const char *kind, const struct gr_rview *v, const char *xs,
		      const char *sb, double eps, const char *name, struct buf *err)
{
	struct buf head = BUF_INIT, loop = BUF_INIT, body = BUF_INIT, args = BUF_INIT, grid = BUF_INIT;
	long long R, nstat, bs;
	int rc;

	gr_red_loops(v, 0, "x", &head, &loop, &R, &nstat);
	bs = gr_red_block(R);
	buf_addf(&body, "    /* %s norm statistics of %lld values each, one block per statistic */\n"
		    "    __shared__ double sh[%lld];\n%s    double s = 0.0;\n%s        s += a;\n    }\n"
		    "    const double mean = block_sum(s, sh) / %lld.0;\n"
		    "    double q = 0.0;\n%s        q += (a - mean) * (a - mean);\n    }\n"
		    "    const double var = block_sum(q, sh) / %lld.0;\n"
		    "    if (threadIdx.x == 0) {\n        stats[2 * o] = mean;\n"
		    "        stats[2 * o + 1] = 1.0 / sqrt(var + %.17g);\n    }\n",
		 kind, R, bs, head.s, loop.s, R, loop.s, R, eps);
	buf_addf(&args, "%s, %s", xs, sb);
	buf_addf(&grid, "%lld", nstat);
	rc = gr_kernel(p, name, "const float* __restrict__ x, double* __restrict__ stats", body.s, grid.s,
		       bs, args.s, err);
	buf_release(&head);
	buf_release(&loop);
	buf_release(&body);
	buf_release(&args);
	buf_release(&grid);
	return rc;
}

/* A split's loops: output o = blockIdx.x / P reads chunk k = blockIdx.x % P
 * of its R values, [k ch, min(R, (k + 1) ch)). */
static void split_loops(const struct gr_rview *v, long long P, struct buf *head, struct buf *loop)
{
	long long R, outs, ch;
	char o[64], r0[64], r1[96];

	gr_view_counts(v, &R, &outs);
	ch = (R + P - 1) / P;
	snprintf(o, sizeof(o), "blockIdx.x / %lldLL", P);
	snprintf(r0, sizeof(r0), "(blockIdx.x %% %lldLL) * %lldLL", P, ch);
	snprintf(r1, sizeof(r1), "min(%lldLL, (blockIdx.x %% %lldLL + 1) * %lldLL)", R, P, ch);
	loops(v, o, r0, r1, 0, "x", head, loop);
}

/* A split's first kernel: each block's partial result over its chunk
 * (from init, step per value a, block_<comb> across the block) to
 * part[blockIdx.x]; what names it in a comment. */
static int part_kernel(struct gr_plan *p, const char *name, const char *what, const struct gr_rview *v,
		       long long P, const char *xs, const char *pb, const char *init, const char *step,
		       const char *comb, const struct buf *head, const struct buf *loop, struct buf *err)
{
	struct buf body = BUF_INIT, args = BUF_INIT, grid = BUF_INIT;
	long long R, outs;
	int rc;

	gr_view_counts(v, &R, &outs);
	bt_cuh_fill(&body, graph_red_cuh, "part_kernel", "WHAT", what, "R", BT_INT(R),
		    "P", BT_INT(P), "CHUNK", BT_INT((R + P - 1) / P), "HEAD", head->s, "INIT", init,
		    "LOOP", loop->s, "STEP", step, "COMB", comb, NULL);
	buf_addf(&args, "%s, %s", xs, pb);
	buf_addf(&grid, "%lld", outs * P);
	rc = gr_kernel(p, name, "const float* __restrict__ x, double* __restrict__ part", body.s, grid.s,
		       256, args.s, err);
	buf_release(&body);
	buf_release(&args);
	buf_release(&grid);
	return rc;
}

/* Split: part[o * P + k] the sum of chunk k, part[nstat * P + o * P + k]
 * its squares about the mean (every block adds the P sums in the same
 * order), then a thread per statistic. */
static int split_kernels(struct gr_plan *p, int gi, const char *kind, const struct gr_rview *v,
			 const char *xs, const char *sb, double eps, long long P, struct buf *err)
{
	struct buf head = BUF_INIT, loop = BUF_INIT, body = BUF_INIT, args = BUF_INIT, grid = BUF_INIT;
	long long R, nstat;
	char name[48], pb[32], what[64];
	int rc, b;

	gr_view_counts(v, &R, &nstat);
	if ((b = gr_take_buf(p, 2 * nstat * P, 1, err)) < 0)
		return b;
	gr_buf_name(p, b, pb, sizeof(pb));
	split_loops(v, P, &head, &loop);
	snprintf(name, sizeof(name), "g%d_norm_sums", gi);
	snprintf(what, sizeof(what), "%s norm statistics, sums", kind);
	rc = part_kernel(p, name, what, v, P, xs, pb, "0.0", "s += a;", "sum", &head, &loop, err);
	if (rc)
		goto out;
	buf_addf(&args, "%s, %s", xs, pb);
	buf_addf(&grid, "%lld", nstat * P);
	bt_cuh_fill(&body, graph_red_cuh, "squares", "HEAD", head.s, "P", BT_INT(P), "R", BT_INT(R),
		    "LOOP", loop.s, "QOFF", BT_INT(nstat * P), NULL);
	snprintf(name, sizeof(name), "g%d_norm_squares", gi);
	rc = gr_kernel(p, name, "const float* __restrict__ x, double* __restrict__ part", body.s, grid.s,
		       256, args.s, err);
	if (rc)
		goto out;
	buf_reset(&body);
	buf_reset(&args);
	buf_reset(&grid);
	buf_addf(&body, "    /* mean and 1 / sqrt(biased variance + eps), a thread per statistic */\n"
		    "    const long long o = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
		    "    if (o >= %lldLL) return;\n"
		    "    double t = 0.0, q = 0.0;\n"
		    "    for (int k = 0; k < %lld; k++) t += part[o * %lldLL + k];\n"
		    "    for (int k = 0; k < %lld; k++) q += part[%lldLL + o * %lldLL + k];\n"
		    "    stats[2 * o] = t / %lld.0;\n"
		    "    stats[2 * o + 1] = 1.0 / sqrt(q / %lld.0 + %.17g);\n",
		 nstat, P, P, P, nstat * P, P, R, R, eps);
	buf_addf(&args, "%s, %s", pb, sb);
	buf_addf(&grid, "%lld", (nstat + 255) / 256);
	snprintf(name, sizeof(name), "g%d_norm_stats", gi);
	rc = gr_kernel(p, name, "const double* __restrict__ part, double* __restrict__ stats", body.s,
		       grid.s, 256, args.s, err);
out:
	p->buf_busy[b] = 0;
	buf_release(&head);
	buf_release(&loop);
	buf_release(&body);
	buf_release(&args);
	buf_release(&grid);
	return rc;
}

int gr_norm_stats(struct gr_plan *p, int gi, const char *kind, const struct gr_rview *v,
		  const char *xs, const char *sb, double eps, struct buf *err)
{
	long long R, nstat, P;
	char name[48];

	gr_view_counts(v, &R, &nstat);
	gr_helpers(p, GR_H_SUM);
	P = split_parts(p, R, nstat);
	if (P > 1)
		return split_kernels(p, gi, kind, v, xs, sb, eps, P, err);
	snprintf(name, sizeof(name), "g%d_norm_stats", gi);
	return one_kernel(p, kind, v, xs, sb, eps, name, err);
}

/* sum, mean, max or min over few outputs of many values each: a block per
 * chunk writes its partial result to part[o * P + k], then a thread per
 * output combines the P in order and stores through the epilogue. */
int gr_reduce_split(struct gr_plan *p, int gi, const char *fn, const struct gr_rview *v,
		    const char *xs, const struct gr_epi *e, struct buf *err)
{
	struct buf head = BUF_INIT, loop = BUF_INIT, body = BUF_INIT, args = BUF_INIT, grid = BUF_INIT;
	struct buf sig = BUF_INIT;
	long long R, outs, P;
	int sum = !strcmp(fn, "sum") || !strcmp(fn, "mean"), mx = !strcmp(fn, "max"), rc, b;
	char name[48], pb[32], val[64];
	const char *init = sum ? "0.0" : mx ? "(double)__int_as_float((int)0xff800000)" :
				   "(double)__int_as_float(0x7f800000)";
	const char *step = sum ? "s += a;" : mx ? "if (a > s || a != a) s = a;" : "if (a < s || a != a) s = a;";

	if (!sum && !mx && strcmp(fn, "min"))
		return 1;
	gr_view_counts(v, &R, &outs);
	if ((P = split_parts(p, R, outs)) < 2)
		return 1;
	gr_helpers(p, sum ? GR_H_SUM : mx ? GR_H_MAX : GR_H_MIN);
	if ((b = gr_take_buf(p, outs * P, 1, err)) < 0)
		return b;
	gr_buf_name(p, b, pb, sizeof(pb));
	split_loops(v, P, &head, &loop);
	snprintf(name, sizeof(name), "g%d_%s_part", gi, fn);
	rc = part_kernel(p, name, fn, v, P, xs, pb, init, step, sum ? "sum" : fn, &head, &loop, err);
	if (rc)
		goto out;
	bt_cuh_fill(&body, graph_red_cuh, "combine", "P", BT_INT(P), "OUTS", BT_INT(outs),
		    "INIT", init, "STEP", step, NULL);
	snprintf(val, sizeof(val), !strcmp(fn, "mean") ? "(float)(s / %lld.0)" : "(float)s", R);
	gr_store_elem(&body, "    ", "o", val, e);
	gr_sig(&sig, p, "const double* __restrict__ part, ", e);
	buf_addf(&args, "%s, ", pb);
	gr_args(&args, p, gi, "", e);
	buf_addf(&grid, "%lld", (outs + 255) / 256);
	snprintf(name, sizeof(name), "g%d_%s", gi, fn);
	rc = gr_kernel(p, name, sig.s, body.s, grid.s, 256, args.s, err);
out:
	p->buf_busy[b] = 0;
	buf_release(&head);
	buf_release(&loop);
	buf_release(&body);
	buf_release(&args);
	buf_release(&grid);
	buf_release(&sig);
	return rc;
}
