/* The graph oracle (family "graph", docs/graph-ir.md) on small hand-built
 * specs: every op and fn against values computed here by brute force from
 * the generated inputs (oracle_input), the chunked and threaded paths, the
 * sampler, and graphs the parser must refuse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/oracle_graph_fixture.h"

/* ---- linear, matmul */

static void test_linear(void **state)
{
	struct tg g;
	double want[2 * 3 * 4];
	(void)state;
	tg_load(&g, IN("x", "[2,3,5]") "," IN("w", "[4,5]") "," IN("b", "[4]"), "[2,3,4]",
		"{\"out\":\"y\",\"op\":\"linear\",\"in\":[\"x\",\"w\",\"b\"],\"shape\":[2,3,4]}");
	for (int r = 0; r < 6; r++)
		for (int n = 0; n < 4; n++) {
			double s = X(&g, "b", n);
			for (int k = 0; k < 5; k++)
				s += X(&g, "x", r * 5 + k) * X(&g, "w", n * 5 + k);
			want[r * 4 + n] = s;
		}
	expect(&g, want, 24, "linear");
	tg_free(&g);
}

static void test_matmul(void **state)
{
	struct tg g;
	double want[2 * 3 * 3 * 5];
	(void)state;
	/* a [2,1,3,4] @ b [3,4,5]: batch [2,1] and [3] broadcast to [2,3] */
	tg_load(&g, IN("a", "[2,1,3,4]") "," IN("b", "[3,4,5]"), "[2,3,3,5]",
		"{\"out\":\"y\",\"op\":\"matmul\",\"in\":[\"a\",\"b\"],\"shape\":[2,3,3,5]}");
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 3; j++)
			for (int m = 0; m < 3; m++)
				for (int n = 0; n < 5; n++) {
					double s = 0;
					for (int k = 0; k < 4; k++)
						s += X(&g, "a", (i * 3 + m) * 4 + k) * X(&g, "b", (j * 4 + k) * 5 + n);
					want[((i * 3 + j) * 3 + m) * 5 + n] = s;
				}
	expect(&g, want, 90, "matmul");
	tg_free(&g);
}

/* ---- conv: the definition, by gather (plain) and by scatter (transposed) */

struct cgeo {
	int sd, tr, bias;
	long long N, Ci, Co, G, in[3], k[3], s[3], p[3], d[3], op[3], out[3];
};

static void cgeo_out(struct cgeo *q)
{
	for (int i = 0; i < 3; i++)
		q->out[i] = q->tr ? (q->in[i] - 1) * q->s[i] - 2 * q->p[i] + q->d[i] * (q->k[i] - 1) +
					    q->op[i] + 1
				  : (q->in[i] + 2 * q->p[i] - q->d[i] * (q->k[i] - 1) - 1) / q->s[i] + 1;
}

static void conv_ref(struct tg *g, const struct cgeo *q, double *out)
{
	long long cpi = q->Ci / q->G, cpo = q->Co / q->G, O = q->out[0] * q->out[1] * q->out[2];
	long long I = q->in[0] * q->in[1] * q->in[2], KK = q->k[0] * q->k[1] * q->k[2];

	for (long long n = 0; n < q->N; n++)
		for (long long co = 0; co < q->Co; co++)
			for (long long o = 0; o < O; o++)
				out[(n * q->Co + co) * O + o] = q->bias ? X(g, "b", co) : 0;
	for (long long n = 0; n < q->N; n++)
		for (long long ci = 0; ci < q->Ci; ci++)
			for (long long col = 0; col < cpo; col++)
				for (long long i = 0; i < (q->tr ? I : O); i++)
					for (long long k = 0; k < KK; k++) {
						long long a[3] = { i / (q->tr ? q->in[1] * q->in[2] : q->out[1] * q->out[2]),
								   i / (q->tr ? q->in[2] : q->out[2]) % (q->tr ? q->in[1] : q->out[1]),
								   i % (q->tr ? q->in[2] : q->out[2]) };
						long long kk[3] = { k / (q->k[1] * q->k[2]), k / q->k[2] % q->k[1], k % q->k[2] };
						long long t[3], grp = ci / cpi, co = grp * cpo + col, flat = 0;
						int ok = 1;
						for (int x = 0; x < 3; x++) {
							/* plain: input = o s - p + k d; transposed: output = i s - p + k d */
							t[x] = a[x] * q->s[x] - q->p[x] + kk[x] * q->d[x];
							ok &= t[x] >= 0 && t[x] < (q->tr ? q->out[x] : q->in[x]);
						}
						if (!ok)
							continue;
						if (q->tr) {
							flat = (t[0] * q->out[1] + t[1]) * q->out[2] + t[2];
							out[(n * q->Co + co) * O + flat] +=
								X(g, "x", (n * q->Ci + ci) * I + i) *
								X(g, "w", (ci * cpo + col) * KK + k);
						} else {
							/* gather: ci's group gives the output channels col of that group */
							flat = (t[0] * q->in[1] + t[1]) * q->in[2] + t[2];
							out[(n * q->Co + co) * O + i] +=
								X(g, "x", (n * q->Ci + ci) * I + flat) *
								X(g, "w", (co * cpi + ci % cpi) * KK + k);
						}
					}
}

static void fmt_list(struct buf *b, const char *key, const long long *v, int sd)
{
	buf_addf(b, ",\"%s\":[", key);
	for (int i = 0; i < sd; i++)
		buf_addf(b, "%s%lld", i ? "," : "", v[3 - sd + i]);
	buf_addc(b, ']');
}

static void fmt_shape(struct buf *b, long long a, long long c, const long long *sp, int sd)
{
	buf_addf(b, "[%lld,%lld", a, c);
	for (int i = 0; i < sd; i++)
		buf_addf(b, ",%lld", sp[3 - sd + i]);
	buf_addc(b, ']');
}

static void run_conv(struct cgeo *q, const char *what)
{
	struct buf in = BUF_INIT, gr = BUF_INIT, xs = BUF_INIT, ws = BUF_INIT, ys = BUF_INIT;
	struct tg g;
	double *want;
	long long O;

	for (int i = 0; i < 3 - q->sd; i++) {
		q->in[i] = q->k[i] = q->s[i] = q->d[i] = 1;
		q->p[i] = q->op[i] = 0;
	}
	cgeo_out(q);
	O = q->N * q->Co * q->out[0] * q->out[1] * q->out[2];
	fmt_shape(&xs, q->N, q->Ci, q->in, q->sd);
	fmt_shape(&ws, q->tr ? q->Ci : q->Co, q->tr ? q->Co / q->G : q->Ci / q->G, q->k, q->sd);
	fmt_shape(&ys, q->N, q->Co, q->out, q->sd);
	buf_addf(&in, "{\"name\":\"x\",\"role\":\"input\",\"dtype\":\"float32\",\"shape\":%s,"
		 "\"dist\":{\"kind\":\"uniform\",\"low\":-1,\"high\":1}},"
		 "{\"name\":\"w\",\"role\":\"param\",\"dtype\":\"float32\",\"shape\":%s,"
		 "\"dist\":{\"kind\":\"uniform\",\"low\":-1,\"high\":1}}", xs.s, ws.s);
	if (q->bias)
		buf_addf(&in, ",{\"name\":\"b\",\"role\":\"param\",\"dtype\":\"float32\","
			 "\"shape\":[%lld],\"dist\":{\"kind\":\"uniform\",\"low\":-1,\"high\":1}}",
			 q->Co);
	/* three graphs: the conv's elements one by one; a softmax along the
	 * last dim (whole rows of one channel); a batch norm (whole boxes) */
	for (int form = 0; form < 3; form++) {
		buf_reset(&gr);
		buf_addf(&gr, "{\"out\":\"%s\",\"op\":\"conv\",\"in\":[\"x\",\"w\"%s],\"shape\":%s,"
			 "\"dims\":%d", form ? "c" : "y", q->bias ? ",\"b\"" : "", ys.s, q->sd);
		fmt_list(&gr, "stride", q->s, q->sd);
		fmt_list(&gr, "padding", q->p, q->sd);
		fmt_list(&gr, "dilation", q->d, q->sd);
		if (q->tr) {
			fmt_list(&gr, "output_padding", q->op, q->sd);
			buf_adds(&gr, ",\"transposed\":true");
		}
		buf_addf(&gr, ",\"groups\":%lld}", q->G);
		if (form == 1)
			buf_addf(&gr, ",{\"out\":\"y\",\"op\":\"softmax\",\"in\":[\"c\"],\"dim\":-1,"
				 "\"shape\":%s}", ys.s);
		if (form == 2)
			buf_addf(&gr, ",{\"out\":\"y\",\"op\":\"norm\",\"kind\":\"batch\",\"in\":[\"c\"],"
				 "\"eps\":0.01,\"shape\":%s}", ys.s);
		tg_load(&g, in.s, ys.s, gr.s);
		want = calloc((size_t)O, sizeof(double));
		conv_ref(&g, q, want);
		if (form == 1) { /* rows of the last axis */
			long long W = q->out[2];
			for (long long r = 0; r < O / W; r++) {
				double m = -INFINITY, s = 0;
				for (long long j = 0; j < W; j++)
					m = fmax(m, want[r * W + j]);
				for (long long j = 0; j < W; j++)
					s += exp(want[r * W + j] - m);
				for (long long j = 0; j < W; j++)
					want[r * W + j] = exp(want[r * W + j] - m) / s;
			}
		}
		if (form == 2) { /* per channel over N and space */
			long long S = q->out[0] * q->out[1] * q->out[2];
			for (long long co = 0; co < q->Co; co++) {
				double s = 0, v = 0, m;
				for (long long n = 0; n < q->N; n++)
					for (long long j = 0; j < S; j++)
						s += want[(n * q->Co + co) * S + j];
				m = s / (double)(q->N * S);
				for (long long n = 0; n < q->N; n++)
					for (long long j = 0; j < S; j++)
						v += pow(want[(n * q->Co + co) * S + j] - m, 2);
				for (long long n = 0; n < q->N; n++)
					for (long long j = 0; j < S; j++)
						want[(n * q->Co + co) * S + j] = (want[(n * q->Co + co) * S + j] - m) /
										  sqrt(v / (double)(q->N * S) + 0.01);
			}
		}
		expect(&g, want, O, what);
		free(want);
		tg_free(&g);
	}
	buf_release(&in);
	buf_release(&gr);
	buf_release(&xs);
	buf_release(&ws);
	buf_release(&ys);
}

static void test_conv(void **state)
{
	(void)state;
	/* 1d: groups, stride, padding, dilation, 12 out channels (blocks of 8 and 4) */
	struct cgeo c1 = { 1, 0, 1, 2, 4, 12, 2, { 0, 0, 19 }, { 0, 0, 3 }, { 0, 0, 2 },
			   { 0, 0, 1 }, { 0, 0, 2 }, { 0 }, { 0 } };
	run_conv(&c1, "conv1d");
	/* 2d: width 21 (lanes in blocks of 8 and a tail), asymmetric stride/pad/dilation */
	struct cgeo c2 = { 2, 0, 0, 2, 3, 6, 3, { 0, 7, 21 }, { 0, 3, 2 }, { 0, 2, 1 },
			   { 0, 0, 1 }, { 0, 1, 2 }, { 0 }, { 0 } };
	run_conv(&c2, "conv2d");
	/* 3d, padding */
	struct cgeo c3 = { 3, 0, 1, 1, 2, 9, 1, { 4, 5, 6 }, { 2, 3, 2 }, { 1, 1, 2 },
			   { 1, 0, 1 }, { 1, 1, 1 }, { 0 }, { 0 } };
	run_conv(&c3, "conv3d");
	/* transposed 1d: stride 3, padding, dilation, output_padding, groups 2 */
	struct cgeo t1 = { 1, 1, 1, 2, 4, 6, 2, { 0, 0, 9 }, { 0, 0, 3 }, { 0, 0, 3 },
			   { 0, 0, 1 }, { 0, 0, 2 }, { 0, 0, 1 }, { 0 } };
	run_conv(&t1, "convT1d");
	/* transposed 2d: stride 2, output_padding 1, 10 out channels */
	struct cgeo t2 = { 2, 1, 0, 1, 3, 10, 1, { 0, 5, 11 }, { 0, 3, 4 }, { 0, 2, 2 },
			   { 0, 1, 1 }, { 0, 1, 1 }, { 0, 1, 1 }, { 0 } };
	run_conv(&t2, "convT2d");
	/* transposed 3d, stride 1 and 2 mixed, groups 3 */
	struct cgeo t3 = { 3, 1, 1, 2, 3, 6, 3, { 3, 4, 5 }, { 2, 3, 3 }, { 1, 2, 1 },
			   { 0, 1, 1 }, { 1, 1, 1 }, { 0, 1, 0 }, { 0 } };
	run_conv(&t3, "convT3d");
	/* rows of 40 with 2 channels, and strided rows of one channel per group */
	struct cgeo c4 = { 2, 0, 1, 1, 2, 2, 1, { 0, 3, 40 }, { 0, 2, 3 }, { 0, 1, 1 },
			   { 0, 1, 1 }, { 0, 1, 1 }, { 0 }, { 0 } };
	run_conv(&c4, "conv2d 2 channels");
	struct cgeo c5 = { 1, 0, 0, 2, 3, 3, 3, { 0, 0, 50 }, { 0, 0, 3 }, { 0, 0, 2 },
			   { 0, 0, 1 }, { 0, 0, 1 }, { 0 }, { 0 } };
	run_conv(&c5, "conv1d depthwise strided");
	struct cgeo t4 = { 2, 1, 1, 1, 2, 1, 1, { 0, 4, 20 }, { 0, 3, 3 }, { 0, 2, 2 },
			   { 0, 1, 1 }, { 0, 1, 1 }, { 0, 1, 1 }, { 0 } };
	run_conv(&t4, "convT2d 1 channel");
}

/* ---- sum/mean of a conv over all spatial dims: by linearity (fast) when the
 * reduce reads the conv itself over exactly its spatial dims, else plainly */

struct rsum {
	const char *fn;   /* sum, mean, max */
	int keep;
	unsigned mask;    /* reduced dims of the conv output */
	int relu;         /* a relu between conv and reduce */
	int fast;         /* the fast path must be taken */
};

/* The graph conv (-> relu) -> reduce, its inputs and output shape. */
static void rsum_spec(struct cgeo *q, const struct rsum *r, struct buf *in, struct buf *gr,
		      struct buf *ys)
{
	struct buf xs = BUF_INIT, ws = BUF_INIT, cs = BUF_INIT;
	int nd = 2 + q->sd, j = 0;
	long long full[GX_MAXD];

	for (int i = 0; i < 3 - q->sd; i++) {
		q->in[i] = q->k[i] = q->s[i] = q->d[i] = 1;
		q->p[i] = q->op[i] = 0;
	}
	cgeo_out(q);
	fmt_shape(&xs, q->N, q->Ci, q->in, q->sd);
	fmt_shape(&ws, q->tr ? q->Ci : q->Co, q->tr ? q->Co / q->G : q->Ci / q->G, q->k, q->sd);
	fmt_shape(&cs, q->N, q->Co, q->out, q->sd);
	buf_addf(in, "{\"name\":\"x\",\"role\":\"input\",\"dtype\":\"float32\",\"shape\":%s,"
		 "\"dist\":{\"kind\":\"uniform\",\"low\":-1,\"high\":1}},"
		 "{\"name\":\"w\",\"role\":\"param\",\"dtype\":\"float32\",\"shape\":%s,"
		 "\"dist\":{\"kind\":\"uniform\",\"low\":-1,\"high\":1}}", xs.s, ws.s);
	if (q->bias)
		buf_addf(in, ",{\"name\":\"b\",\"role\":\"param\",\"dtype\":\"float32\","
			 "\"shape\":[%lld],\"dist\":{\"kind\":\"uniform\",\"low\":-1,\"high\":1}}",
			 q->Co);
	buf_addf(gr, "{\"out\":\"c\",\"op\":\"conv\",\"in\":[\"x\",\"w\"%s],\"shape\":%s,\"dims\":%d",
		 q->bias ? ",\"b\"" : "", cs.s, q->sd);
	fmt_list(gr, "kernel", q->k, q->sd);
	fmt_list(gr, "stride", q->s, q->sd);
	fmt_list(gr, "padding", q->p, q->sd);
	fmt_list(gr, "dilation", q->d, q->sd);
	if (q->tr) {
		fmt_list(gr, "output_padding", q->op, q->sd);
		buf_adds(gr, ",\"transposed\":true");
	}
	buf_addf(gr, ",\"groups\":%lld}", q->G);
	if (r->relu)
		buf_addf(gr, ",{\"out\":\"a\",\"op\":\"act\",\"fn\":\"relu\",\"in\":[\"c\"],\"shape\":%s}",
			 cs.s);
	buf_addf(gr, ",{\"out\":\"y\",\"op\":\"reduce\",\"fn\":\"%s\",\"in\":[\"%s\"],\"keepdim\":%s,"
		 "\"dims\":[", r->fn, r->relu ? "a" : "c", r->keep ? "true" : "false");
	full[0] = q->N;
	full[1] = q->Co;
	for (int d = 2; d < nd; d++)
		full[d] = q->out[d - 2 + 3 - q->sd];
	buf_addc(ys, '[');
	for (int d = 0; d < nd; d++) {
		if (r->mask >> d & 1) /* spatial dims as negative indices */
			buf_addf(gr, "%s%d", j++ ? "," : "", d >= 2 ? d - nd : d);
		if (!(r->mask >> d & 1) || r->keep)
			buf_addf(ys, "%s%lld", ys->len > 1 ? "," : "", r->mask >> d & 1 ? 1 : full[d]);
	}
	buf_addc(ys, ']');
	buf_addf(gr, "],\"shape\":%s}", ys->s);
	buf_release(&xs);
	buf_release(&ws);
	buf_release(&cs);
}

/* All outputs of the graph; how many times the fast path ran meanwhile. */
static long long rsum_eval(struct tg *g, double *v, long long n)
{
	long long h0 = gx_conv_sum_hits;
	for (long long i = 0; i < n; i++)
		v[i] = Y(g, i);
	return gx_conv_sum_hits - h0;
}

static void run_rsum(struct cgeo *q, const struct rsum *r, int ref, const char *what)
{
	struct buf in = BUF_INIT, gr = BUF_INIT, ys = BUF_INIT;
	struct tg g;
	long long O, S, n, nd = 2 + q->sd, hits;
	double *conv, *want, *scale, *fast, *slow;

	rsum_spec(q, r, &in, &gr, &ys);
	S = q->out[0] * q->out[1] * q->out[2];
	O = q->N * q->Co * S;
	tg_load(&g, in.s, ys.s, gr.s);
	n = g.p.t[g.p.n_in].numel;
	want = calloc((size_t)n, sizeof(double));
	scale = calloc((size_t)n, sizeof(double));
	fast = calloc((size_t)n, sizeof(double));
	slow = calloc((size_t)n, sizeof(double));
	if (ref) { /* the reduction of the brute-force conv */
		long long cnt = 1;
		conv = calloc((size_t)O, sizeof(double));
		conv_ref(&g, q, conv);
		for (long long d = 0; d < nd; d++)
			cnt *= r->mask >> d & 1 ? (d == 0 ? q->N : d == 1 ? q->Co : q->out[d - 2 + 3 - q->sd]) : 1;
		for (long long k = 0; k < n; k++)
			want[k] = strcmp(r->fn, "max") ? 0 : -INFINITY;
		for (long long e = 0; e < O; e++) {
			long long rem = e, key = 0, st = 1;
			double y = r->relu && conv[e] < 0 ? 0 : conv[e];
			for (long long d = nd - 1; d >= 0; d--) { /* key: the kept dims of e */
				long long ext = d == 0 ? q->N : d == 1 ? q->Co : q->out[d - 2 + 3 - q->sd];
				if (!(r->mask >> d & 1)) {
					key += rem % ext * st;
					st *= ext;
				}
				rem /= ext;
			}
			if (!strcmp(r->fn, "max"))
				want[key] = fmax(want[key], y);
			else
				want[key] += y;
			scale[key] += fabs(y);
		}
		for (long long k = 0; k < n; k++)
			if (!strcmp(r->fn, "mean")) {
				want[k] /= (double)cnt;
				scale[k] /= (double)cnt;
			} else if (!strcmp(r->fn, "max")) {
				scale[k] = fabs(want[k]);
			}
		free(conv);
	}
	hits = rsum_eval(&g, fast, n);
	if (r->fast ? hits < 1 : hits != 0)
		fail_msg("%s: fast path taken %lld times", what, hits);
	tg_free(&g);
	gx_conv_sum_fast = 0;
	tg_load(&g, in.s, ys.s, gr.s);
	hits = rsum_eval(&g, slow, n);
	gx_conv_sum_fast = 1;
	assert_int_equal(hits, 0);
	for (long long k = 0; k < n; k++) {
		double sc = ref ? scale[k] : fabs(slow[k]);
		if (!(fabs(fast[k] - slow[k]) <= 1e-12 * sc + 1e-300))
			fail_msg("%s: y[%lld] = %.17g, plain evaluation %.17g", what, k, fast[k], slow[k]);
		if (ref && !(fabs(fast[k] - want[k]) <= 1e-12 * sc + 1e-300))
			fail_msg("%s: y[%lld] = %.17g, brute force %.17g", what, k, fast[k], want[k]);
	}
	tg_free(&g);
	free(want);
	free(scale);
	free(fast);
	free(slow);
	buf_release(&in);
	buf_release(&gr);
	buf_release(&ys);
}

static void test_conv_sum(void **state)
{
	const unsigned sp[4] = { 0, 0x4, 0xc, 0x1c }; /* the spatial dims, by conv dims */
	struct cgeo gs[] = {
		/* 1d: groups, stride, padding, dilation */
		{ 1, 0, 1, 2, 4, 12, 2, { 0, 0, 19 }, { 0, 0, 3 }, { 0, 0, 2 }, { 0, 0, 1 },
		  { 0, 0, 2 }, { 0 }, { 0 } },
		/* 2d: asymmetric stride/pad/dilation */
		{ 2, 0, 1, 2, 4, 6, 2, { 0, 7, 21 }, { 0, 3, 2 }, { 0, 2, 1 }, { 0, 0, 1 },
		  { 0, 1, 2 }, { 0 }, { 0 } },
		/* 2d: stride beyond the kernel (inputs never read), wide padding */
		{ 2, 0, 0, 1, 3, 5, 1, { 0, 9, 10 }, { 0, 2, 3 }, { 0, 4, 3 }, { 0, 3, 2 },
		  { 0, 1, 2 }, { 0 }, { 0 } },
		/* 3d, padding */
		{ 3, 0, 1, 1, 2, 5, 1, { 4, 5, 6 }, { 2, 3, 2 }, { 1, 1, 2 }, { 1, 0, 1 },
		  { 1, 1, 1 }, { 0 }, { 0 } },
		/* transposed 1d: stride 3, padding, dilation, output_padding, groups 2 */
		{ 1, 1, 1, 2, 4, 6, 2, { 0, 0, 9 }, { 0, 0, 3 }, { 0, 0, 3 }, { 0, 0, 1 },
		  { 0, 0, 2 }, { 0, 0, 1 }, { 0 } },
		/* transposed 1d: padding crops whole taps away */
		{ 1, 1, 1, 1, 2, 3, 1, { 0, 0, 5 }, { 0, 0, 3 }, { 0, 0, 2 }, { 0, 0, 3 },
		  { 0, 0, 1 }, { 0, 0, 1 }, { 0 } },
		/* transposed 2d: stride 2, output_padding 1 */
		{ 2, 1, 0, 1, 3, 10, 1, { 0, 5, 11 }, { 0, 3, 4 }, { 0, 2, 2 }, { 0, 1, 1 },
		  { 0, 1, 1 }, { 0, 1, 1 }, { 0 } },
		/* transposed 3d, stride 1 and 2 mixed, groups 3 */
		{ 3, 1, 1, 2, 3, 6, 3, { 3, 4, 5 }, { 2, 3, 3 }, { 1, 2, 1 }, { 0, 1, 1 },
		  { 1, 1, 1 }, { 0, 1, 0 }, { 0 } },
	};
	long long chunk = gx_chunk, lmax = gx_leaf_mat_max;
	(void)state;
	for (size_t i = 0; i < sizeof(gs) / sizeof(gs[0]); i++)
		for (int v = 0; v < 4; v++) {
			struct rsum r = { v & 1 ? "mean" : "sum", v >> 1, sp[gs[i].sd], 0, 1 };
			char what[64];
			snprintf(what, sizeof(what), "conv sum case %zu, %s, keepdim %d", i, r.fn, r.keep);
			gx_chunk = v == 3 ? 7 : chunk; /* a plane per operand box */
			gx_leaf_mat_max = v == 3 ? 16 : lmax;
			run_rsum(&gs[i], &r, 1, what);
		}
	gx_chunk = chunk;
	gx_leaf_mat_max = lmax;
	/* not the fast path: an op between, a channel or a single spatial dim
	 * reduced too / alone, max */
	{
		struct rsum no[] = { { "mean", 0, 0xc, 1, 0 }, { "sum", 0, 0xe, 0, 0 },
				     { "mean", 1, 0x8, 0, 0 }, { "max", 0, 0xc, 0, 0 } };
		for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
			char what[64];
			snprintf(what, sizeof(what), "conv sum, not fast %zu", i);
			run_rsum(&gs[1], &no[i], 1, what);
			run_rsum(&gs[6], &no[i], 1, what);
		}
	}
	/* large planes: outputs batched across groups, the planes over threads */
	{
		struct cgeo big = { 2, 0, 1, 2, 8, 6, 2, { 0, 256, 256 }, { 0, 3, 3 }, { 0, 1, 1 },
				    { 0, 1, 1 }, { 0, 1, 1 }, { 0 }, { 0 } };
		struct rsum r = { "mean", 0, 0xc, 0, 1 };
		run_rsum(&big, &r, 0, "conv mean, large planes");
	}
}

/* ---- pooling */

struct pgeo {
	int sd, max, ceil, cip;
	long long N, C, in[3], k[3], s[3], p[3], d[3], out[3];
};

static long long pool_out(long long in, long long k, long long s, long long p, long long d, int ceil_mode)
{
	long long num = in + 2 * p - d * (k - 1) - 1;
	long long o = (ceil_mode ? (num + s - 1) / s : num / s) + 1;
	if (ceil_mode && (o - 1) * s >= in + p)
		o--;
	return o;
}

static void run_pool(struct pgeo *q, const char *what)
{
	struct buf in = BUF_INIT, gr = BUF_INIT, xs = BUF_INIT, ys = BUF_INIT;
	struct tg g;
	long long O = q->N * q->C, I;
	double *want;

	for (int i = 0; i < 3 - q->sd; i++) {
		q->in[i] = q->k[i] = q->s[i] = q->d[i] = 1;
		q->p[i] = 0;
	}
	for (int i = 0; i < 3; i++) {
		q->out[i] = pool_out(q->in[i], q->k[i], q->s[i], q->p[i], q->d[i], q->ceil);
		O *= q->out[i];
	}
	I = q->in[0] * q->in[1] * q->in[2];
	fmt_shape(&xs, q->N, q->C, q->in, q->sd);
	fmt_shape(&ys, q->N, q->C, q->out, q->sd);
	buf_addf(&in, "{\"name\":\"x\",\"role\":\"input\",\"dtype\":\"float32\",\"shape\":%s,"
		 "\"dist\":{\"kind\":\"uniform\",\"low\":-1,\"high\":1}}", xs.s);
	buf_addf(&gr, "{\"out\":\"y\",\"op\":\"pool\",\"kind\":\"%s\",\"in\":[\"x\"],\"shape\":%s,"
		 "\"dims\":%d,\"ceil_mode\":%s", q->max ? "max" : "avg", ys.s, q->sd,
		 q->ceil ? "true" : "false");
	fmt_list(&gr, "kernel", q->k, q->sd);
	fmt_list(&gr, "stride", q->s, q->sd);
	fmt_list(&gr, "padding", q->p, q->sd);
	if (q->max)
		fmt_list(&gr, "dilation", q->d, q->sd);
	else
		buf_addf(&gr, ",\"count_include_pad\":%s", q->cip ? "true" : "false");
	buf_addc(&gr, '}');
	tg_load(&g, in.s, ys.s, gr.s);
	want = calloc((size_t)O, sizeof(double));
	for (long long e = 0; e < O; e++) {
		long long o[3] = { e / (q->out[1] * q->out[2]) % q->out[0], e / q->out[2] % q->out[1],
				   e % q->out[2] };
		long long nc = e / (q->out[0] * q->out[1] * q->out[2]), cnt = 0, padded = 1;
		double acc = q->max ? -INFINITY : 0;
		for (int i = 0; i < 3; i++) {
			/* PyTorch's avg divisor: the window cut at the padded input's end */
			long long st = o[i] * q->s[i] - q->p[i], en = st + q->k[i];
			if (en > q->in[i] + q->p[i])
				en = q->in[i] + q->p[i];
			padded *= en - st;
		}
		for (long long a = 0; a < q->k[0]; a++)
			for (long long b = 0; b < q->k[1]; b++)
				for (long long c = 0; c < q->k[2]; c++) {
					long long t[3] = { a, b, c }, f = 0;
					int ok = 1;
					for (int i = 0; i < 3; i++) {
						t[i] = o[i] * q->s[i] - q->p[i] + t[i] * q->d[i];
						ok &= t[i] >= 0 && t[i] < q->in[i];
						f = f * q->in[i] + t[i];
					}
					if (!ok)
						continue;
					double v = X(&g, "x", nc * I + f);
					cnt++;
					if (q->max)
						acc = v > acc ? v : acc;
					else
						acc += v;
				}
		want[e] = q->max ? acc : acc / (double)(q->cip ? padded : cnt);
	}
	expect(&g, want, O, what);
	free(want);
	tg_free(&g);
	buf_release(&in);
	buf_release(&gr);
	buf_release(&xs);
	buf_release(&ys);
}

static void test_pool(void **state)
{
	(void)state;
	struct pgeo m1 = { 1, 1, 1, 1, 2, 3, { 0, 0, 10 }, { 0, 0, 3 }, { 0, 0, 2 }, { 0, 0, 1 },
			   { 0, 0, 2 }, { 0 } };
	run_pool(&m1, "maxpool1d ceil dilation");
	struct pgeo m2 = { 2, 1, 0, 1, 2, 2, { 0, 7, 9 }, { 0, 2, 3 }, { 0, 2, 2 }, { 0, 1, 1 },
			   { 0, 1, 1 }, { 0 } };
	run_pool(&m2, "maxpool2d pad");
	struct pgeo a2 = { 2, 0, 1, 1, 1, 3, { 0, 7, 8 }, { 0, 3, 2 }, { 0, 2, 3 }, { 0, 1, 1 },
			   { 0, 1, 1 }, { 0 } };
	run_pool(&a2, "avgpool2d ceil pad");
	struct pgeo a2b = { 2, 0, 1, 0, 1, 3, { 0, 7, 8 }, { 0, 3, 2 }, { 0, 2, 3 }, { 0, 1, 1 },
			    { 0, 1, 1 }, { 0 } };
	run_pool(&a2b, "avgpool2d count_include_pad false");
	struct pgeo a3 = { 3, 0, 0, 1, 2, 2, { 4, 6, 5 }, { 2, 2, 2 }, { 2, 2, 2 }, { 0, 0, 0 },
			   { 1, 1, 1 }, { 0 } };
	run_pool(&a3, "avgpool3d");
	struct pgeo m3 = { 3, 1, 1, 1, 1, 2, { 5, 5, 6 }, { 2, 3, 2 }, { 2, 2, 2 }, { 1, 1, 0 },
			   { 1, 1, 1 }, { 0 } };
	run_pool(&m3, "maxpool3d ceil pad");
}

static void test_adaptive_pool(void **state)
{
	struct tg g;
	double want[2 * 3 * 3 * 2];
	(void)state;
	tg_load(&g, IN("x", "[2,3,7,5]"), "[2,3,3,2]",
		"{\"out\":\"y\",\"op\":\"adaptive_avg_pool\",\"in\":[\"x\"],\"shape\":[2,3,3,2],"
		"\"output_size\":[3,2]}");
	for (int nc = 0; nc < 6; nc++)
		for (int i = 0; i < 3; i++)
			for (int j = 0; j < 2; j++) {
				int h0 = i * 7 / 3, h1 = ((i + 1) * 7 + 2) / 3, w0 = j * 5 / 2, w1 = ((j + 1) * 5 + 1) / 2;
				double s = 0;
				for (int h = h0; h < h1; h++)
					for (int w = w0; w < w1; w++)
						s += X(&g, "x", (nc * 7 + h) * 5 + w);
				want[(nc * 3 + i) * 2 + j] = s / ((h1 - h0) * (w1 - w0));
			}
	expect(&g, want, 36, "adaptive_avg_pool2d");
	tg_free(&g);
	/* global 3d pooling */
	tg_load(&g, IN("x", "[2,2,3,4,5]"), "[2,2,1,1,1]",
		"{\"out\":\"y\",\"op\":\"adaptive_avg_pool\",\"in\":[\"x\"],\"shape\":[2,2,1,1,1],"
		"\"output_size\":[1,1,1]}");
	for (int nc = 0; nc < 4; nc++) {
		double s = 0;
		for (int k = 0; k < 60; k++)
			s += X(&g, "x", nc * 60 + k);
		want[nc] = s / 60;
	}
	expect(&g, want, 4, "adaptive_avg_pool3d");
	tg_free(&g);
}

/* ---- act */

static double ref_act(const char *fn, double x)
{
	if (!strcmp(fn, "relu")) return x > 0 ? x : 0;
	if (!strcmp(fn, "leaky_relu")) return x > 0 ? x : 0.2 * x;
	if (!strcmp(fn, "gelu")) return x * 0.5 * (1 + erf(x / sqrt(2.0)));
	if (!strcmp(fn, "gelu_tanh"))
		return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * pow(x, 3))));
	if (!strcmp(fn, "sigmoid")) return 1 / (1 + exp(-x));
	if (!strcmp(fn, "tanh")) return tanh(x);
	if (!strcmp(fn, "silu")) return x / (1 + exp(-x));
	if (!strcmp(fn, "mish")) return x * tanh(log(1 + exp(x)));
	if (!strcmp(fn, "softplus")) return 2 * x > 3 ? x : log(1 + exp(2 * x)) / 2;
	if (!strcmp(fn, "hardswish")) return x <= -3 ? 0 : x >= 3 ? x : x * (x + 3) / 6;
	if (!strcmp(fn, "hardsigmoid")) return x <= -3 ? 0 : x >= 3 ? 1 : (x + 3) / 6;
	if (!strcmp(fn, "hardtanh")) return x < -0.5 ? -0.5 : x > 2 ? 2 : x;
	if (!strcmp(fn, "clamp")) return x < -1.5 ? -1.5 : x;
	if (!strcmp(fn, "elu")) return x > 0 ? x : 0.7 * (exp(x) - 1);
	if (!strcmp(fn, "selu"))
		return 1.0507009873554805 * (x > 0 ? x : 1.6732632423543772 * (exp(x) - 1));
	if (!strcmp(fn, "exp")) return exp(x);
	if (!strcmp(fn, "log")) return log(x);
	if (!strcmp(fn, "abs")) return fabs(x);
	if (!strcmp(fn, "neg")) return -x;
	if (!strcmp(fn, "sqrt")) return sqrt(x);
	if (!strcmp(fn, "rsqrt")) return 1 / sqrt(x);
	if (!strcmp(fn, "square")) return x * x;
	if (!strcmp(fn, "identity")) return x;
	fail_msg("no reference for %s", fn);
	return 0;
}

static void test_act(void **state)
{
	static const struct {
		const char *fn, *params;
		int positive;
	} cases[] = {
		{ "relu", "", 0 }, { "leaky_relu", ",\"negative_slope\":0.2", 0 }, { "gelu", "", 0 },
		{ "gelu_tanh", "", 0 }, { "sigmoid", "", 0 }, { "tanh", "", 0 }, { "silu", "", 0 },
		{ "mish", "", 0 }, { "softplus", ",\"beta\":2,\"threshold\":3", 0 },
		{ "hardswish", "", 0 }, { "hardsigmoid", "", 0 },
		{ "hardtanh", ",\"min_val\":-0.5,\"max_val\":2", 0 }, { "clamp", ",\"min\":-1.5", 0 },
		{ "elu", ",\"alpha\":0.7", 0 }, { "selu", "", 0 }, { "exp", "", 0 }, { "log", "", 1 },
		{ "abs", "", 0 }, { "neg", "", 0 }, { "sqrt", "", 1 }, { "rsqrt", "", 1 },
		{ "square", "", 0 }, { "identity", "", 0 },
	};
	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct tg g;
		struct buf gr = BUF_INIT;
		double want[96];
		buf_addf(&gr, "{\"out\":\"y\",\"op\":\"act\",\"fn\":\"%s\",\"in\":[\"x\"],\"shape\":[96]%s}",
			 cases[k].fn, cases[k].params);
		tg_load(&g, cases[k].positive ? IN_U("x", "[96]", 0.05, 5) : IN_U("x", "[96]", -5, 5),
			"[96]", gr.s);
		for (int i = 0; i < 96; i++)
			want[i] = ref_act(cases[k].fn, X(&g, "x", i));
		expect(&g, want, 96, cases[k].fn);
		tg_free(&g);
		buf_release(&gr);
	}
}

/* A few fixed points per fn, from constant inputs (not the formulas above). */
static void test_act_points(void **state)
{
	static const struct {
		const char *fn;
		double x, y;
	} pts[] = {
		{ "gelu", 1, 0.8413447460685429 }, { "gelu", -1, -0.15865525393145707 },
		{ "gelu_tanh", 1, 0.8411919906082768 }, { "silu", 1, 0.7310585786300049 },
		{ "mish", 1, 0.8650983882673103 }, { "mish", -2, -0.2525014826957089 },
		{ "softplus", 30, 30 }, { "softplus", 0, 0.6931471805599453 },
		{ "hardswish", 1, 0.6666666666666666 }, { "hardsigmoid", -4, 0 },
		{ "selu", -1, -1.1113307378125628 }, { "elu", -1, -0.6321205588285577 },
		{ "rsqrt", 4, 0.5 }, { "sigmoid", 0, 0.5 },
	};
	(void)state;
	for (size_t k = 0; k < sizeof(pts) / sizeof(pts[0]); k++) {
		struct tg g;
		struct buf in = BUF_INIT, gr = BUF_INIT;
		buf_addf(&in, "{\"name\":\"x\",\"role\":\"input\",\"dtype\":\"float32\",\"shape\":[2],"
			 "\"dist\":{\"kind\":\"constant\",\"value\":%.17g}}", pts[k].x);
		buf_addf(&gr, "{\"out\":\"y\",\"op\":\"act\",\"fn\":\"%s\",\"in\":[\"x\"],\"shape\":[2]}",
			 pts[k].fn);
		tg_load(&g, in.s, "[2]", gr.s);
		if (fabs(Y(&g, 1) - pts[k].y) > 1e-12)
			fail_msg("%s(%g) = %.17g, want %.17g", pts[k].fn, pts[k].x, Y(&g, 1), pts[k].y);
		tg_free(&g);
		buf_release(&in);
		buf_release(&gr);
	}
}

/* ---- binary */

static double ref_bin(const char *fn, double a, double b)
{
	return !strcmp(fn, "add") ? a + b : !strcmp(fn, "sub") ? a - b : !strcmp(fn, "mul") ? a * b :
	       !strcmp(fn, "div") ? a / b : !strcmp(fn, "max") ? (a > b ? a : b) :
	       !strcmp(fn, "min") ? (a < b ? a : b) : pow(a, b);
}

static void test_binary(void **state)
{
	const char *fns[] = { "add", "sub", "mul", "div", "max", "min", "pow" };
	(void)state;
	for (int k = 0; k < 7; k++) {
		struct tg g;
		struct buf gr = BUF_INIT;
		double want[2 * 3 * 4];
		/* a [2,3,4] with b [3,1]: b broadcast along dims 0 and 2 */
		buf_addf(&gr, "{\"out\":\"y\",\"op\":\"binary\",\"fn\":\"%s\",\"in\":[\"a\",\"b\"],"
			 "\"shape\":[2,3,4]}", fns[k]);
		tg_load(&g, IN_U("a", "[2,3,4]", 0.1, 2) "," IN_U("b", "[3,1]", 0.5, 1.5), "[2,3,4]", gr.s);
		for (int i = 0; i < 24; i++)
			want[i] = ref_bin(fns[k], X(&g, "a", i), X(&g, "b", i / 4 % 3));
		expect(&g, want, 24, fns[k]);
		tg_free(&g);
		buf_release(&gr);
		/* a constant, on either side */
		for (int swap = 0; swap < 2; swap++) {
			buf_setf(&gr, "{\"out\":\"y\",\"op\":\"binary\",\"fn\":\"%s\",\"in\":[\"a\"],"
				 "\"const\":1.25,\"swap\":%s,\"shape\":[2,3,4]}", fns[k],
				 swap ? "true" : "false");
			tg_load(&g, IN_U("a", "[2,3,4]", 0.1, 2), "[2,3,4]", gr.s);
			for (int i = 0; i < 24; i++)
				want[i] = swap ? ref_bin(fns[k], 1.25, X(&g, "a", i))
					       : ref_bin(fns[k], X(&g, "a", i), 1.25);
			expect(&g, want, 24, fns[k]);
			tg_free(&g);
		}
		buf_release(&gr);
	}
	/* both operands broadcast: [4,1] and [3] give [4,3] */
	struct tg g;
	double want[12];
	tg_load(&g, IN("a", "[4,1]") "," IN("b", "[3]"), "[4,3]",
		"{\"out\":\"y\",\"op\":\"binary\",\"fn\":\"sub\",\"in\":[\"a\",\"b\"],\"shape\":[4,3]}");
	for (int i = 0; i < 12; i++)
		want[i] = X(&g, "a", i / 3) - X(&g, "b", i % 3);
	expect(&g, want, 12, "sub [4,1] [3]");
	tg_free(&g);
}

/* ---- reduce */

static void test_reduce(void **state)
{
	const char *fns[] = { "sum", "mean", "max", "min", "logsumexp", "prod" };
	(void)state;
	for (int k = 0; k < 6; k++)
		for (int keep = 0; keep < 2; keep++) {
			struct tg g;
			struct buf gr = BUF_INIT;
			double want[2 * 4];
			/* x [2,3,4,5] over dims 1 and -1 (3): y [2,4] or [2,1,4,1] */
			buf_addf(&gr, "{\"out\":\"y\",\"op\":\"reduce\",\"fn\":\"%s\",\"in\":[\"x\"],"
				 "\"dims\":[1,-1],\"keepdim\":%s,\"shape\":%s}", fns[k],
				 keep ? "true" : "false", keep ? "[2,1,4,1]" : "[2,4]");
			tg_load(&g, IN_U("x", "[2,3,4,5]", 0.5, 1.5), keep ? "[2,1,4,1]" : "[2,4]", gr.s);
			for (int n = 0; n < 2; n++)
				for (int h = 0; h < 4; h++) {
					double s = 0, mx = -INFINITY, mn = INFINITY, pr = 1, e = 0;
					for (int c = 0; c < 3; c++)
						for (int w = 0; w < 5; w++) {
							double x = X(&g, "x", ((n * 3 + c) * 4 + h) * 5 + w);
							s += x;
							pr *= x;
							mx = x > mx ? x : mx;
							mn = x < mn ? x : mn;
						}
					for (int c = 0; c < 3; c++)
						for (int w = 0; w < 5; w++)
							e += exp(X(&g, "x", ((n * 3 + c) * 4 + h) * 5 + w) - mx);
					double r[6] = { s, s / 15, mx, mn, mx + log(e), pr };
					want[n * 4 + h] = r[k];
				}
			expect(&g, want, 8, fns[k]);
			tg_free(&g);
			buf_release(&gr);
		}
}

/* ---- softmax */

static void test_softmax(void **state)
{
	(void)state;
	for (int lg = 0; lg < 2; lg++)
		for (int dim = 0; dim < 3; dim++) {
			struct tg g;
			struct buf gr = BUF_INIT;
			double want[3 * 4 * 5];
			long long sh[3] = { 3, 4, 5 }, st[3] = { 20, 5, 1 };
			int d = dim == 2 ? -1 : dim;
			buf_addf(&gr, "{\"out\":\"y\",\"op\":\"softmax\",\"in\":[\"x\"],\"dim\":%d,\"log\":%s,"
				 "\"shape\":[3,4,5]}", d, lg ? "true" : "false");
			tg_load(&g, IN_U("x", "[3,4,5]", -3, 3), "[3,4,5]", gr.s);
			for (int i = 0; i < 60; i++) {
				long long base = i - (i / st[dim] % sh[dim]) * st[dim];
				double m = -INFINITY, s = 0, x = X(&g, "x", i);
				for (int j = 0; j < sh[dim]; j++)
					m = fmax(m, X(&g, "x", base + j * st[dim]));
				for (int j = 0; j < sh[dim]; j++)
					s += exp(X(&g, "x", base + j * st[dim]) - m);
				want[i] = lg ? x - m - log(s) : exp(x - m) / s;
			}
			expect(&g, want, 60, lg ? "log_softmax" : "softmax");
			tg_free(&g);
			buf_release(&gr);
		}
}

/* ---- norm */

/* (x - mean) / sqrt(var + eps) over the elements of x with the same key. */
static void norm_ref(struct tg *g, long long n, long long (*key)(long long), long long nkeys,
		     double eps, double *out)
{
	double *s = calloc((size_t)nkeys, sizeof(double)), *q = calloc((size_t)nkeys, sizeof(double));
	double *c = calloc((size_t)nkeys, sizeof(double));
	for (long long i = 0; i < n; i++) {
		s[key(i)] += X(g, "x", i);
		c[key(i)] += 1;
	}
	for (long long i = 0; i < n; i++) {
		double dd = X(g, "x", i) - s[key(i)] / c[key(i)];
		q[key(i)] += dd * dd;
	}
	for (long long i = 0; i < n; i++)
		out[i] = (X(g, "x", i) - s[key(i)] / c[key(i)]) / sqrt(q[key(i)] / c[key(i)] + eps);
	free(s);
	free(q);
	free(c);
}

/* x [3, 4, 5, 6] */
static long long key_batch(long long i) { return i / 30 % 4; }
static long long key_group(long long i) { return i / 60; }        /* 2 groups of 2 channels */
static long long key_inst(long long i) { return i / 30; }
static long long key_layer(long long i) { return i / 30; }        /* normalized_ndim 2 */
static long long key_batch2(long long i) { return i % 6; }        /* x [5, 6] */
static long long key_group2(long long i) { return i / 3; }        /* x [5, 6], 2 groups */

static void test_norm(void **state)
{
	static const struct {
		const char *kind, *extra, *wshape, *shape;
		long long (*key)(long long);
		long long n, nkeys;
		int wdiv, wmod; /* weight index: i / wdiv % wmod */
	} cases[] = {
		{ "batch", "", "[4]", "[3,4,5,6]", key_batch, 360, 4, 30, 4 },
		{ "group", ",\"groups\":2", "[4]", "[3,4,5,6]", key_group, 360, 6, 30, 4 },
		{ "instance", "", "[4]", "[3,4,5,6]", key_inst, 360, 12, 30, 4 },
		{ "layer", ",\"normalized_ndim\":2", "[5,6]", "[3,4,5,6]", key_layer, 360, 12, 1, 30 },
		{ "batch", "", "[6]", "[5,6]", key_batch2, 30, 6, 1, 6 },
		{ "group", ",\"groups\":2", "[6]", "[5,6]", key_group2, 30, 10, 1, 6 },
	};
	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
		for (int affine = 0; affine < 2; affine++) {
			struct tg g;
			struct buf in = BUF_INIT, gr = BUF_INIT;
			double want[360];
			buf_addf(&in, "{\"name\":\"x\",\"role\":\"input\",\"dtype\":\"float32\",\"shape\":%s,"
				 "\"dist\":{\"kind\":\"uniform\",\"low\":-2,\"high\":3}}", cases[k].shape);
			if (affine)
				buf_addf(&in, ",{\"name\":\"w\",\"role\":\"param\",\"dtype\":\"float32\","
					 "\"shape\":%s,\"dist\":{\"kind\":\"uniform\",\"low\":0.5,\"high\":1.5}},"
					 "{\"name\":\"b\",\"role\":\"param\",\"dtype\":\"float32\",\"shape\":%s,"
					 "\"dist\":{\"kind\":\"uniform\",\"low\":-1,\"high\":1}}",
					 cases[k].wshape, cases[k].wshape);
			buf_addf(&gr, "{\"out\":\"y\",\"op\":\"norm\",\"kind\":\"%s\",\"in\":[\"x\"%s],"
				 "\"eps\":0.001,\"shape\":%s%s}", cases[k].kind,
				 affine ? ",\"w\",\"b\"" : "", cases[k].shape, cases[k].extra);
			tg_load(&g, in.s, cases[k].shape, gr.s);
			norm_ref(&g, cases[k].n, cases[k].key, cases[k].nkeys, 0.001, want);
			for (long long i = 0; affine && i < cases[k].n; i++) {
				long long wi = i / cases[k].wdiv % cases[k].wmod;
				want[i] = want[i] * X(&g, "w", wi) + X(&g, "b", wi);
			}
			expect(&g, want, cases[k].n, cases[k].kind);
			tg_free(&g);
			buf_release(&in);
			buf_release(&gr);
		}
}

/* ---- dropout, layout ops */

static void test_dropout(void **state)
{
	struct tg g;
	double want[40];
	int kept = 0;
	(void)state;
	tg_load(&g, IN("x", "[4,10]") ",{\"name\":\"dropout_mask\",\"role\":\"input\",\"dtype\":\"bool\","
		"\"shape\":[4,10],\"dist\":{\"kind\":\"bernoulli\",\"p\":0.75}}", "[4,10]",
		"{\"out\":\"y\",\"op\":\"dropout\",\"in\":[\"x\",\"dropout_mask\"],\"p\":0.25,"
		"\"shape\":[4,10]}");
	for (int i = 0; i < 40; i++) {
		double m = X(&g, "dropout_mask", i);
		assert_true(m == 0 || m == 1);
		kept += m == 1;
		want[i] = X(&g, "x", i) * m / 0.75;
	}
	assert_true(kept > 0 && kept < 40);
	expect(&g, want, 40, "dropout");
	tg_free(&g);
}

static void test_layout(void **state)
{
	struct tg g;
	double want[180];
	(void)state;
	/* permute [2,3,4] -> [4,2,3], reshape to [8,3] */
	tg_load(&g, IN("x", "[2,3,4]"), "[8,3]",
		"{\"out\":\"p\",\"op\":\"permute\",\"in\":[\"x\"],\"perm\":[2,0,-2],\"shape\":[4,2,3]},"
		"{\"out\":\"y\",\"op\":\"reshape\",\"in\":[\"p\"],\"shape\":[8,3]}");
	for (int i = 0; i < 24; i++) {
		int a = i / 6, b = i / 3 % 2, c = i % 3;   /* p[a][b][c] = x[b][c][a] */
		want[i] = X(&g, "x", (b * 3 + c) * 4 + a);
	}
	expect(&g, want, 24, "permute+reshape");
	tg_free(&g);
	/* reshape [2,3,4,5] -> [6,20] -> [2,60] (flatten, split) then concat with itself on dim 0 */
	tg_load(&g, IN("x", "[2,3,4,5]") "," IN("z", "[1,60]"), "[3,60]",
		"{\"out\":\"r\",\"op\":\"reshape\",\"in\":[\"x\"],\"shape\":[6,20]},"
		"{\"out\":\"q\",\"op\":\"reshape\",\"in\":[\"r\"],\"shape\":[2,60]},"
		"{\"out\":\"y\",\"op\":\"concat\",\"in\":[\"z\",\"q\"],\"dim\":0,\"shape\":[3,60]}");
	for (int i = 0; i < 180; i++)
		want[i] = i < 60 ? X(&g, "z", i) : X(&g, "x", i - 60);
	expect(&g, want, 180, "reshape+concat");
	tg_free(&g);
	/* concat on the last dim of three operands */
	tg_load(&g, IN("a", "[2,2]") "," IN("b", "[2,3]") "," IN("c", "[2,1]"), "[2,6]",
		"{\"out\":\"y\",\"op\":\"concat\",\"in\":[\"a\",\"b\",\"c\"],\"dim\":-1,\"shape\":[2,6]}");
	for (int r = 0; r < 2; r++)
		for (int j = 0; j < 6; j++)
			want[r * 6 + j] = j < 2 ? X(&g, "a", r * 2 + j) : j < 5 ? X(&g, "b", r * 3 + j - 2)
										: X(&g, "c", r);
	expect(&g, want, 12, "concat last dim");
	tg_free(&g);
}

/* ---- a chain: conv -> group norm -> act -> reduce */

static void test_chain(void **state)
{
	struct tg g;
	struct cgeo q = { 2, 0, 1, 2, 3, 8, 1, { 1, 9, 10 }, { 1, 3, 3 }, { 1, 1, 1 },
			  { 0, 1, 1 }, { 1, 1, 1 }, { 0 }, { 0 } };
	double conv[2 * 8 * 9 * 10], gn[2 * 8 * 90], want[2 * 8];
	(void)state;
	cgeo_out(&q);
	tg_load(&g, IN("x", "[2,3,9,10]") "," IN("w", "[8,3,3,3]") "," IN("b", "[8]") ","
		IN_U("gw", "[8]", 0.5, 1.5) "," IN("gb", "[8]"), "[2,8]",
		"{\"out\":\"c\",\"op\":\"conv\",\"in\":[\"x\",\"w\",\"b\"],\"dims\":2,\"padding\":[1,1],"
		"\"shape\":[2,8,9,10]},"
		"{\"out\":\"n\",\"op\":\"norm\",\"kind\":\"group\",\"groups\":4,\"eps\":1e-5,"
		"\"in\":[\"c\",\"gw\",\"gb\"],\"shape\":[2,8,9,10]},"
		"{\"out\":\"a\",\"op\":\"act\",\"fn\":\"gelu\",\"in\":[\"n\"],\"shape\":[2,8,9,10]},"
		"{\"out\":\"y\",\"op\":\"reduce\",\"fn\":\"mean\",\"dims\":[2,3],\"in\":[\"a\"],"
		"\"shape\":[2,8]}");
	conv_ref(&g, &q, conv);
	for (int key = 0; key < 8; key++) { /* (n, group): 2 channels x 90 */
		double s = 0, v = 0, m;
		for (int i = 0; i < 180; i++)
			s += conv[key * 180 + i];
		m = s / 180;
		for (int i = 0; i < 180; i++)
			v += (conv[key * 180 + i] - m) * (conv[key * 180 + i] - m);
		for (int i = 0; i < 180; i++) {
			int ch = (key % 4) * 2 + i / 90;
			gn[key * 180 + i] = (conv[key * 180 + i] - m) / sqrt(v / 180 + 1e-5) * X(&g, "gw", ch) +
					    X(&g, "gb", ch);
		}
	}
	for (int nc = 0; nc < 16; nc++) {
		double s = 0;
		for (int i = 0; i < 90; i++) {
			double x = gn[nc * 90 + i];
			s += 0.5 * x * (1 + erf(x / sqrt(2.0)));
		}
		want[nc] = s / 90;
	}
	expect(&g, want, 16, "conv-groupnorm-gelu-mean");
	tg_free(&g);
}

/* ---- chunked statistics, on-the-fly leaves, row blocks, threads */

static void test_chunks(void **state)
{
	long long chunk = gx_chunk, lmax = gx_leaf_mat_max;
	struct tg g;
	double want[64];
	(void)state;
	gx_chunk = 7;          /* every statistic in many chunks */
	gx_leaf_mat_max = 16;  /* and the larger leaves generated box by box */
	/* batch norm over [3, 4, 5] (channel stats merged over chunks) then softmax over dim 0 */
	tg_load(&g, IN_U("x", "[3,4,5]", -2, 3), "[3,4,5]",
		"{\"out\":\"n\",\"op\":\"norm\",\"kind\":\"batch\",\"in\":[\"x\"],\"shape\":[3,4,5]},"
		"{\"out\":\"y\",\"op\":\"softmax\",\"in\":[\"n\"],\"dim\":0,\"shape\":[3,4,5]}");
	{
		double bn[60];
		for (int c = 0; c < 4; c++) {
			double s = 0, v = 0, m;
			for (int n = 0; n < 3; n++)
				for (int j = 0; j < 5; j++)
					s += X(&g, "x", (n * 4 + c) * 5 + j);
			m = s / 15;
			for (int n = 0; n < 3; n++)
				for (int j = 0; j < 5; j++)
					v += pow(X(&g, "x", (n * 4 + c) * 5 + j) - m, 2);
			for (int n = 0; n < 3; n++)
				for (int j = 0; j < 5; j++)
					bn[(n * 4 + c) * 5 + j] = (X(&g, "x", (n * 4 + c) * 5 + j) - m) /
								  sqrt(v / 15 + 1e-5);
		}
		double ys[60];
		for (int i = 0; i < 60; i++) {
			double s = 0, m = -INFINITY;
			for (int n = 0; n < 3; n++)
				m = fmax(m, bn[i % 20 + n * 20]);
			for (int n = 0; n < 3; n++)
				s += exp(bn[i % 20 + n * 20] - m);
			ys[i] = exp(bn[i] - m) / s;
		}
		expect(&g, ys, 60, "chunked batchnorm+softmax");
	}
	tg_free(&g);
	/* a long softmax line and a whole-tensor logsumexp, both split along the reduction */
	tg_load(&g, IN_U("x", "[2,50]", -3, 3), "[2,50]",
		"{\"out\":\"y\",\"op\":\"softmax\",\"in\":[\"x\"],\"dim\":1,\"log\":true,\"shape\":[2,50]}");
	for (int r = 0; r < 2; r++) {
		double m = -INFINITY, s = 0;
		for (int j = 0; j < 50; j++)
			m = fmax(m, X(&g, "x", r * 50 + j));
		for (int j = 0; j < 50; j++)
			s += exp(X(&g, "x", r * 50 + j) - m);
		for (int j = 0; j < 50; j++)
			want[j] = X(&g, "x", r * 50 + j) - m - log(s);
		for (int j = 0; j < 50; j++)
			if (!close_to(Y(&g, r * 50 + j), want[j]))
				fail_msg("long log_softmax [%d][%d]", r, j);
	}
	tg_free(&g);
	tg_load(&g, IN_U("x", "[3,40]", -3, 3), "[]",
		"{\"out\":\"y\",\"op\":\"reduce\",\"fn\":\"logsumexp\",\"in\":[\"x\"],\"dims\":[0,1],"
		"\"shape\":[]}");
	{
		double m = -INFINITY, s = 0;
		for (int i = 0; i < 120; i++)
			m = fmax(m, X(&g, "x", i));
		for (int i = 0; i < 120; i++)
			s += exp(X(&g, "x", i) - m);
		want[0] = m + log(s);
	}
	expect(&g, want, 1, "chunked logsumexp");
	tg_free(&g);
	/* linear rows read whole many times (row blocks): the weight generated
	 * per pass (too large to keep), then kept */
	for (int keep = 0; keep < 2; keep++) {
		double w2[40];
		gx_leaf_mat_max = keep ? lmax : 16;
		tg_load(&g, IN("x", "[40,6]") "," IN("w", "[9,6]") "," IN("lb", "[9]"), "[40]",
			"{\"out\":\"l\",\"op\":\"linear\",\"in\":[\"x\",\"w\",\"lb\"],\"shape\":[40,9]},"
			"{\"out\":\"y\",\"op\":\"reduce\",\"fn\":\"max\",\"in\":[\"l\"],\"dims\":[1],"
			"\"shape\":[40]}");
		for (int r = 0; r < 40; r++) {
			double mx = -INFINITY;
			for (int n = 0; n < 9; n++) {
				double s = X(&g, "lb", n);
				for (int k = 0; k < 6; k++)
					s += X(&g, "x", r * 6 + k) * X(&g, "w", n * 6 + k);
				mx = fmax(mx, s);
			}
			w2[r] = mx;
		}
		expect(&g, w2, 40, keep ? "linear row blocks" : "linear row blocks, weight per pass");
		tg_free(&g);
	}
	gx_chunk = chunk;
	gx_leaf_mat_max = lmax;
}

/* The same values on one thread and on three (the big-work paths). */
static void test_threads(void **state)
{
	struct tg a, b;
	const char *in = IN("x", "[2,16,24,24]") "," IN("w", "[32,16,3,3]") "," IN("lw", "[64,576]");
	const char *gr =
		"{\"out\":\"c\",\"op\":\"conv\",\"in\":[\"x\",\"w\"],\"dims\":2,\"shape\":[2,32,22,22]},"
		"{\"out\":\"n\",\"op\":\"norm\",\"kind\":\"batch\",\"in\":[\"c\"],\"shape\":[2,32,22,22]},"
		"{\"out\":\"r\",\"op\":\"reshape\",\"in\":[\"n\"],\"shape\":[2,32,484]},"
		"{\"out\":\"s\",\"op\":\"reduce\",\"fn\":\"sum\",\"dims\":[2],\"in\":[\"r\"],\"shape\":[2,32]},"
		"{\"out\":\"y\",\"op\":\"binary\",\"fn\":\"mul\",\"in\":[\"s\",\"s\"],\"shape\":[2,32]}";
	(void)state;
	tg_load(&a, in, "[2,32]", gr);
	tg_load(&b, in, "[2,32]", gr);
	a.c.threads = 1;
	b.c.threads = 3;
	for (int i = 0; i < 64; i++) {
		double va = Y(&a, i), vb = Y(&b, i);
		if (va != vb)
			fail_msg("y[%d]: %.17g on 1 thread, %.17g on 3", i, va, vb);
	}
	tg_free(&a);
	tg_free(&b);
	(void)in;
}

/* ---- sampling */

static void test_sample(void **state)
{
	struct tg g;
	long long idx[256];
	int n, seen[16] = { 0 }, nb = 0;
	long long batches[256];
	(void)state;
	tg_load(&g, IN("x", "[64,16,30,30]"), "[64,16,30,30]",
		"{\"out\":\"y\",\"op\":\"act\",\"fn\":\"relu\",\"in\":[\"x\"],\"shape\":[64,16,30,30]}");
	n = oracle_sample(&g.p, 0, 5, idx, 256);
	assert_true(n > 200 && n <= 256);
	assert_int_equal(idx[0], 0);
	assert_int_equal(idx[n - 1], 64LL * 16 * 900 - 1);
	for (int i = 0; i < n; i++) {
		long long b = idx[i] / (16 * 900);
		int dup = 0;
		if (i)
			assert_true(idx[i] > idx[i - 1]);
		seen[idx[i] / 900 % 16] = 1;
		for (int k = 0; k < nb; k++)
			dup |= batches[k] == b;
		if (!dup)
			batches[nb++] = b;
	}
	for (int c = 0; c < 16; c++)
		assert_true(seen[c]);
	assert_true(nb <= 4); /* few batch indices: the samples share their statistics */
	tg_free(&g);
}

/* ---- bad graphs */

static void test_errors(void **state)
{
	static const struct {
		const char *inputs, *out, *graph, *msg;
	} bad[] = {
		{ IN("x", "[2,3]"), "[2,3]", "{\"out\":\"y\",\"op\":\"frobnicate\",\"in\":[\"x\"],\"shape\":[2,3]}",
		  "attrs.graph[0] (frobnicate \"y\"): unknown op" },
		{ IN("x", "[2,3]"), "[2,3]", "{\"out\":\"y\",\"op\":\"act\",\"fn\":\"swishy\",\"in\":[\"x\"],\"shape\":[2,3]}",
		  "(act \"y\"): unknown act fn \"swishy\"" },
		{ IN("x", "[2,3]"), "[2,3]", "{\"out\":\"y\",\"op\":\"act\",\"fn\":\"relu\",\"in\":[\"x\",\"x\"],\"shape\":[2,3]}",
		  "(act \"y\"): takes 1 operand, has 2" },
		{ IN("x", "[2,3]"), "[2,3]", "{\"out\":\"y\",\"op\":\"act\",\"fn\":\"relu\",\"in\":[\"x\"],\"shape\":[3,2]}",
		  "(act \"y\"): \"shape\" is [3, 2], but the operands give [2, 3]" },
		{ IN("x", "[2,3]") "," IN("z", "[2,2]"), "[2,3]", "{\"out\":\"y\",\"op\":\"binary\",\"fn\":\"add\",\"in\":[\"x\",\"z\"],\"shape\":[2,3]}",
		  "do not broadcast" },
		{ IN("x", "[2,3]"), "[2]", "{\"out\":\"y\",\"op\":\"reduce\",\"fn\":\"sum\",\"dims\":[2],\"in\":[\"x\"],\"shape\":[2]}",
		  "(reduce \"y\"): reduce dim 2 is out of range for 2 dims" },
		{ IN("x", "[2,3]"), "[2,3]", "{\"out\":\"y\",\"op\":\"softmax\",\"dim\":-3,\"in\":[\"x\"],\"shape\":[2,3]}",
		  "softmax dim -3 is out of range" },
		{ IN("x", "[2,3]"), "[2,3]", "{\"out\":\"y\",\"op\":\"act\",\"fn\":\"relu\",\"in\":[\"x\"],\"shape\":[2,3],\"slope\":1}",
		  "unknown attribute \"slope\"" },
		{ IN("x", "[2,3]"), "[2,3]", "{\"out\":\"y\",\"op\":\"act\",\"fn\":\"relu\",\"in\":[\"q\"],\"shape\":[2,3]}",
		  "operand 0 (\"q\") is neither an input nor an earlier node" },
		{ IN("x", "[2,3]"), "[2,3]", "{\"out\":\"z\",\"op\":\"act\",\"fn\":\"relu\",\"in\":[\"x\"],\"shape\":[2,3]}",
		  "writes \"z\", not the output \"y\"" },
		{ IN("x", "[2,3]"), "[2,3]", "{\"out\":\"y\",\"op\":\"act\",\"fn\":\"relu\",\"negative_slope\":0.1,\"in\":[\"x\"],\"shape\":[2,3]}",
		  "act relu has no parameter \"negative_slope\"" },
		{ IN("x", "[1,4,8,8]") "," IN("w", "[6,3,3,3]"), "[1,6,6,6]",
		  "{\"out\":\"y\",\"op\":\"conv\",\"dims\":2,\"groups\":2,\"in\":[\"x\",\"w\"],\"shape\":[1,6,6,6]}",
		  "(conv \"y\"): weight [6, 3, ...] does not match 4 input channels in 2 groups" },
		{ IN("x", "[1,4,8,8]") "," IN("w", "[4,6,3,3]"), "[1,6,10,10]",
		  "{\"out\":\"y\",\"op\":\"conv\",\"dims\":2,\"transposed\":true,\"in\":[\"x\",\"w\"],\"shape\":[1,6,11,11]}",
		  "\"shape\" is [1, 6, 11, 11], but the operands give [1, 6, 10, 10]" },
		{ IN("x", "[1,4,8,8]"), "[1,4,3,3]",
		  "{\"out\":\"y\",\"op\":\"pool\",\"kind\":\"avg\",\"dims\":2,\"kernel\":[2,2],\"dilation\":[2,2],\"in\":[\"x\"],\"shape\":[1,4,3,3]}",
		  "avg pooling has no \"dilation\"" },
		{ IN("x", "[2,6]"), "[2,6]", "{\"out\":\"y\",\"op\":\"norm\",\"kind\":\"group\",\"groups\":4,\"in\":[\"x\"],\"shape\":[2,6]}",
		  "(norm \"y\"): groups 4 do not divide the 6 channels" },
		{ IN("x", "[2,6]") "," IN("w", "[5]"), "[2,6]", "{\"out\":\"y\",\"op\":\"norm\",\"kind\":\"batch\",\"in\":[\"x\",\"w\"],\"shape\":[2,6]}",
		  "weight \"w\" must have the shape of the channel dim" },
		{ IN("x", "[2,6]"), "[2,6]", "{\"out\":\"y\",\"op\":\"binary\",\"fn\":\"add\",\"in\":[\"x\"],\"shape\":[2,6]}",
		  "needs a second operand or \"const\"" },
		{ IN("x", "[2,6]"), "[12]", "{\"out\":\"y\",\"op\":\"reshape\",\"in\":[\"x\"],\"shape\":[13]}",
		  "reshape of 12 elements into 13" },
		{ IN("x", "[2,6]"), "[6,2]", "{\"out\":\"y\",\"op\":\"permute\",\"perm\":[1,1],\"in\":[\"x\"],\"shape\":[6,2]}",
		  "\"perm\" lists dim 1 twice" },
		{ IN("x", "[2,6]"), "[2,6]", "{\"out\":\"y\",\"op\":\"act\",\"fn\":\"relu\",\"in\":[\"x\"],\"shape\":[2,6]},"
		  "{\"out\":\"y2\",\"op\":\"act\",\"fn\":\"relu\",\"in\":[\"y\"],\"shape\":[2,6]}",
		  "attrs.graph[0] (act \"y\"): only the last node may write the output" },
	};
	(void)state;
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		struct tg g;
		struct buf err = BUF_INIT;
		double v;
		tg_load(&g, bad[k].inputs, bad[k].out, bad[k].graph);
		if (oracle_value(&g.c, 0, 0, &v, &err) == 0)
			fail_msg("case %zu: accepted", k);
		if (!strstr(err.s, bad[k].msg) || !strstr(err.s, "level2/999_T"))
			fail_msg("case %zu: \"%s\" lacks \"%s\"", k, err.s, bad[k].msg);
		tg_free(&g);
		buf_release(&err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_linear),        cmocka_unit_test(test_matmul),
		cmocka_unit_test(test_conv),          cmocka_unit_test(test_conv_sum),
		cmocka_unit_test(test_pool),
		cmocka_unit_test(test_adaptive_pool), cmocka_unit_test(test_act),
		cmocka_unit_test(test_act_points),    cmocka_unit_test(test_binary),
		cmocka_unit_test(test_reduce),        cmocka_unit_test(test_softmax),
		cmocka_unit_test(test_norm),          cmocka_unit_test(test_dropout),
		cmocka_unit_test(test_layout),        cmocka_unit_test(test_chain),
		cmocka_unit_test(test_chunks),        cmocka_unit_test(test_threads),
		cmocka_unit_test(test_sample),        cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
