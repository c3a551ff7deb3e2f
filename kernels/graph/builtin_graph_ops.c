/* The graph template's head kernels, one per group: elementwise, linear
 * (tensor-core emitter, else a tiled fp32 SGEMM), conv (emitter, else
 * direct), pool, adaptive average pool, reduce, softmax and norm. Each
 * ends in the group's epilogue (builtin_graph_ew.c) before its store.
 * Statistics (sums, means, variances, softmax and logsumexp sums) are
 * accumulated in double; products in fp32 FMA. */
#include "kernels/graph/builtin_graph.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/emit/builtin_epi.h"
#include "kernels/builtin_util.h"
#include "gen/graph_ops_cuh.h"

/* The store of one output element: ei and v, the epilogue, y[ei] = v. */
static void store(struct buf *b, const char *ind, const char *idx, const char *val,
		  const struct gr_epi *e)
{
	buf_addf(b, "%s{\n%s    const long long ei = %s;\n%s    float v = %s;\n%s%s    y[ei] = v;\n%s}\n",
		 ind, ind, idx, ind, val, e->code.s, ind, ind);
}

/* Every from in b replaced by to. */
static void subst(struct buf *b, const char *from, const char *to)
{
	struct buf o = BUF_INIT;
	const char *s = b->s, *h;
	size_t n = strlen(from);

	if (!s || !n || !strstr(s, from))
		return;
	while ((h = strstr(s, from))) {
		buf_add(&o, s, (size_t)(h - s));
		buf_adds(&o, to);
		s = h + n;
	}
	buf_adds(&o, s);
	buf_reset(b);
	buf_add(b, o.s, o.len);
	buf_release(&o);
}

static void signature(struct buf *b, const struct gr_plan *p, const char *in_params,
		      const struct gr_epi *e)
{
	buf_addf(b, "%sfloat* %sy%s", in_params, p->alias >= 0 ? "" : "__restrict__ ", e->params.s);
}

static void arguments(struct buf *b, const struct gr_plan *p, const struct gr_group *g,
		      const char *in_args, const struct gr_epi *e)
{
	char st[80];

	buf_addf(b, "%s%s%s", in_args, gr_store(p, g->out, st, sizeof(st)), e->args.s);
}

void gr_store_elem(struct buf *b, const char *ind, const char *idx, const char *val,
		   const struct gr_epi *e)
{
	store(b, ind, idx, val, e);
}

void gr_sig(struct buf *b, const struct gr_plan *p, const char *in_params, const struct gr_epi *e)
{
	signature(b, p, in_params, e);
}

void gr_args(struct buf *b, const struct gr_plan *p, int gi, const char *in_args,
	     const struct gr_epi *e)
{
	arguments(b, p, &p->g[gi], in_args, e);
}

/* The tensor-core emitters write about 10 KB a kernel: on level 3 they stop
 * where the source would outgrow the engine's limit (GR_TC_ROOM). In the
 * arena they take `arena + OFFSET` operands and their own scratch moves
 * there too (gr_arena_scratch). */
int gr_tc_fits(const struct gr_plan *p)
{
	return p->tc && p->tc_room >= 0 &&
	       (!p->tc_room || p->src.len + p->kbytes < (size_t)p->tc_room);
}

/* The length of the line at s (with its newline). */
static size_t line_len(const char *s)
{
	const char *e = strchr(s, '\n');

	return e ? (size_t)(e - s) + 1 : strlen(s);
}

/* The end of the conditional whose first line ends at src[end] (after its
 * #endif); *open: 1 where the source ends first. */
static size_t cond_end(const struct buf *src, size_t end, int *open)
{
	int depth = 1;

	while (end < src->len && depth) {
		const char *t = src->s + end;
		depth += !strncmp(t, "#if", 3) - !strncmp(t, "#endif", 6);
		end += line_len(t);
	}
	*open = depth != 0;
	return end;
}

void gr_once(struct gr_plan *p, size_t from)
{
	size_t i = from;

	while (p->once && i < p->src.len) {
		char *s = p->src.s + i, name[64], key[72];
		size_t n = line_len(s), end = i + n;
		int open = 0;

		if (sscanf(s, "#ifndef %63[A-Za-z0-9_]", name) != 1 || strncmp(name, "KF_", 3) ||
		    strlen(name) + 9 != n || strncmp(s + n, "#define ", 8) ||
		    strncmp(s + n + 8, name, strlen(name)) || s[n + 8 + strlen(name)] != '\n') {
			/* not a guard: skip the line, or a whole conditional */
			i = strncmp(s, "#if", 3) ? end : cond_end(&p->src, end, &open);
			continue;
		}
		end = cond_end(&p->src, end, &open);
		snprintf(key, sizeof(key), "\n%s\n", name);
		if (open || !strstr(p->guards.s, key)) {	/* the first (or unclosed): kept */
			if (!open)
				buf_addf(&p->guards, "\n%s\n", name);
			i = end;
			continue;
		}
		memmove(s, p->src.s + end, p->src.len - end + 1);
		p->src.len -= end - i;
	}
}

void gr_helpers(struct gr_plan *p, unsigned h)
{
	static const char *const fn[] = { "sum", "max", "min" };

	for (int i = 0; i < 3; i++) {
		if (!(h & (1u << i)) || (p->helpers & (1u << i)))
			continue;
		p->helpers |= 1u << i;
		bt_cuh_fill(&p->src, graph_ops_cuh, "block_reduce", "OP", fn[i], NULL);
		if (i == 0)
			buf_adds(&p->src, "            sh[threadIdx.x] = a + b;\n");
		else	/* NaN propagates */
			buf_addf(&p->src, "            sh[threadIdx.x] = (a %s b || a != a) ? a : b;\n",
				 i == 1 ? ">" : "<");
		bt_cuh_section(&p->src, graph_ops_cuh, "helpers_end");
	}
}

static const char *in_name(const struct gr_plan *p, int k, char *tmp, size_t n)
{
	return gr_store(p, k, tmp, n);
}

static int ew_head(struct gr_plan *p, int gi, struct gr_epi *e, struct buf *err)
{
	const struct gr_group *g = &p->g[gi];
	long long numel = p->t[g->out].numel;
	struct buf body = BUF_INIT, sig = BUF_INIT, args = BUF_INIT, grid = BUF_INIT, name = BUF_INIT;
	int rc;

	buf_addf(&body, "    const long long ei = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
		    "    if (ei >= %lldLL) return;\n    float v = 0.0f;\n%s    y[ei] = v;\n",
		 numel, e->code.s);
	signature(&sig, p, "", e);
	arguments(&args, p, g, "", e);
	buf_addf(&grid, "%lld", (numel + p->block - 1) / p->block);
	buf_addf(&name, "g%d_ew", gi);
	rc = gr_kernel(p, name.s, sig.s, body.s, grid.s, p->block, args.s, err);
	buf_release(&body);
	buf_release(&sig);
	buf_release(&args);
	buf_release(&grid);
	buf_release(&name);
	return rc;
}

/* Whether epilogue code reads the flat index ei. */
static int reads_ei(const char *code)
{
	for (const char *c = code ? strstr(code, "ei") : NULL; c; c = strstr(c + 2, "ei"))
		if ((c == code || (!isalnum((unsigned char)c[-1]) && c[-1] != '_')) &&
		    !isalnum((unsigned char)c[2]) && c[2] != '_')
			return 1;
	return 0;
}

/* Counts the launch lines an emitter appended. */
static void count_launches(struct gr_plan *p, size_t from)
{
	for (size_t i = from; i < p->launch.len; i++)
		p->launches += p->launch.s[i] == ';';
}

/* After a tensor-core emitter returned rc (its text from src0, launches
 * from `from`): in the arena its scratch moved there (where it cannot be,
 * the text is dropped and 1 returned: the caller's own kernel), an emitted
 * text equal to an earlier one's shared (compared before gr_once strips
 * the repeated helper blocks, while every text still holds them), the
 * launches counted. */
static int tc_done(struct gr_plan *p, const char *name, size_t src0, size_t from, int rc,
		   struct buf *err)
{
	if (rc == 0 && (rc = gr_arena_scratch(p, from, err)) == 1) {
		buf_truncate(&p->src, src0);
		buf_truncate(&p->launch, from);
	}
	if (rc == 0)
		rc = gr_share_emitted(p, src0, from, name, err);
	gr_once(p, src0);
	if (rc == 0)
		count_launches(p, from);
	return rc;
}

/* The tensor-core GEMM emitter with the graph's core and split, through
 * tc_done. 0 emitted, 1 not supported, negative on error. */
int gr_gemm_tc(struct gr_plan *p, const char *name, const struct gemm_shape *sh, const char *a,
	       const char *b, const char *c, const struct epi *ep, struct buf *err)
{
	size_t from = p->launch.len, src0 = p->src.len;
	json_t *tp = json_pack("{s:s,s:s}", "core", p->conv_wmma ? "wmma" : p->mma ? "mma" : "wgmma",
			       "split", p->split3 ? "3xtf32" : "tf32bf16");
	int rc = tp ? gemm_epi_emit(&p->src, &p->launch, name, sh, a, b, c, ep, tp, err)
		    : kf_err(err, "out of memory");

	json_decref(tp);
	return tc_done(p, name, src0, from, rc, err);
}

static int linear_head(struct gr_plan *p, int gi, struct gr_epi *e, struct buf *err)
{
	const struct gr_group *g = &p->g[gi];
	const struct gr_node *n = &p->n[g->head];
	const struct gr_tensor *x = &p->t[n->in[0]], *w = &p->t[n->in[1]], *o = &p->t[n->out];
	long long K = x->shape[x->rank - 1], N = o->shape[o->rank - 1], M = x->numel / K;
	char xs[80], ws[80], ys[80];
	struct buf body = BUF_INIT, sig = BUF_INIT, args = BUF_INIT, grid = BUF_INIT, code = BUF_INIT;
	struct buf pre = BUF_INIT;
	int rc = 0, nt = (p->BM / p->TM) * (p->BN / p->TN);

	if (w->rank != 2 || w->shape[0] != N || w->shape[1] != K || o->numel != M * N)
		return kf_err(err, "graph: linear '%s': weight [%lld, %lld] expected", o->name, N, K);
	in_name(p, n->in[0], xs, sizeof(xs));
	in_name(p, n->in[1], ws, sizeof(ws));
	gr_store(p, g->out, ys, sizeof(ys));
	/* few rows (a batch of images' classifier, a step of a recurrence): a
	 * 64-row tile would leave most of the GPU idle reading the weight */
	if (p->skinny && M <= 16) {
		int cpw = N >= 4224 ? 4 : N >= 2112 ? 2 : 1;
		char name[32];

		bt_cuh_fill(&body, graph_ops_cuh, "linear_skinny", "M", BT_INT(M), "K", BT_INT(K),
			    "N", BT_INT(N), "CPW", BT_INT(cpw), NULL);
		store(&body, "                ", "r * N_ + n0 + c", "acc[c][r]", e);
		buf_adds(&body, "        }\n");
		buf_addf(&pre, "#define N_ %lldLL\n", N);
		signature(&sig, p, "const float* __restrict__ x, const float* __restrict__ w, ", e);
		buf_addf(&args, "%s, %s, ", xs, ws);
		arguments(&args, p, g, "", e);
		buf_addf(&grid, "%lld", (N + 8 * cpw - 1) / (8 * cpw));
		snprintf(name, sizeof(name), "g%d_skinny", gi);
		p->pre = pre.s;
		p->post = "#undef N_\n";
		rc = gr_kernel(p, name, sig.s, body.s, grid.s, 256, args.s, err);
		goto out;
	}
	if (gr_tc_fits(p)) {
		struct gemm_shape sh = { 1, M, N, K, 0, 1, 0, 0 };
		struct epi ep = { e->params.s, e->args.s, NULL };
		char name[32];
		buf_addf(&code, "{\n        const long long ei = m * %lldLL + n;\n%s        }\n", N, e->code.s);
		ep.code = code.s;
		snprintf(name, sizeof(name), "g%d_gemm_tc", gi);
		rc = gr_gemm_tc(p, name, &sh, xs, ws, ys, &ep, err);
		buf_release(&code);
		if (rc <= 0)
			return rc;
	}
	{	/* a linear is a 1 x 1 conv over M rows of K channels */
		struct gr_dmma_geo dg = { M, K, N, { 1, 1, 1 }, { 1, 1, 1 }, { 1, 1, 1 },
					  { 1, 1, 1 }, { 0, 0, 0 }, { 1, 1, 1 }, 0 };
		if ((rc = gr_dmma_conv(p, gi, e, xs, ws, &dg, err)) <= 0)
			return rc;
	}
	if ((M + p->BM - 1) / p->BM >= 65536)
		return kf_err(err, "graph: linear '%s': %lld rows", o->name, M);
	bt_cuh_fill(&body, graph_ops_cuh, "linear_head", "M", BT_INT(M), "K", BT_INT(K),
		    "BM", BT_INT(p->BM), "BN", BT_INT(p->BN), "BK", BT_INT(p->BK),
		    "TM", BT_INT(p->TM), "TN", BT_INT(p->TN), "N", BT_INT(N), NULL);
	bt_emit_tile_fma(&body, "tr * TM + i");
	bt_cuh_section(&body, graph_ops_cuh, "linear_store");
	store(&body, "            ", "r * N + cc", "acc[ti][tj]", e);
	buf_adds(&body, "        }\n    }\n");
	buf_addf(&pre, "#define BM %d\n#define BN %d\n#define BK %d\n#define TM %d\n#define TN %d\n"
		    "#define NT %d\n", p->BM, p->BN, p->BK, p->TM, p->TN, nt);
	signature(&sig, p, "const float* __restrict__ x, const float* __restrict__ w, ", e);
	buf_addf(&args, "%s, %s, ", xs, ws);
	arguments(&args, p, g, "", e);
	buf_addf(&grid, "dim3(%lld, %lld)", (N + p->BN - 1) / p->BN, (M + p->BM - 1) / p->BM);
	{
		char name[32];
		snprintf(name, sizeof(name), "g%d_sgemm", gi);
		p->qual = "__launch_bounds__(NT)\n";
		p->pre = pre.s;
		p->post = "#undef BM\n#undef BN\n#undef BK\n#undef TM\n#undef TN\n#undef NT\n\n";
		rc = gr_kernel(p, name, sig.s, body.s, grid.s, nt, args.s, err);
	}
out:
	buf_release(&pre);
	buf_release(&body);
	buf_release(&sig);
	buf_release(&args);
	buf_release(&grid);
	return rc;
}

/* Geometry constants, spatial axes padded to three (D, H, W). */
static void geometry(struct buf *b, const char *tag, const long long *v, int nd, long long pad)
{
	long long a[3] = { pad, pad, pad };

	for (int d = 0; d < nd; d++)
		a[3 - nd + d] = v[d];
	buf_addf(b, "    const int %sD = %lld, %sH = %lld, %sW = %lld;\n", tag, a[0], tag, a[1], tag, a[2]);
}

static int attr3(const json_t *j, const char *key, int nd, long long dflt, long long *out,
		 struct buf *err)
{
	const json_t *v = json_object_get(j, key);

	for (int d = 0; d < nd; d++) {
		out[d] = json_is_integer(v) ? (long long)json_integer_value(v) : gr_int(j, key, d, dflt);
		if (out[d] < 0 || out[d] > 4096 || (dflt >= 1 && out[d] < 1))
			return kf_err(err, "graph: bad '%s'", key);
	}
	return 0;
}

static int conv_head(struct gr_plan *p, int gi, struct gr_epi *e, struct buf *err)
{
	const struct gr_group *g = &p->g[gi];
	const struct gr_node *n = &p->n[g->head];
	const struct gr_tensor *x = &p->t[n->in[0]], *w = &p->t[n->in[1]], *o = &p->t[n->out];
	int nd = (int)gr_int(n->j, "dims", 0, 0), tr = json_is_true(json_object_get(n->j, "transposed"));
	long long G = gr_int(n->j, "groups", 0, 1), K[3], S[3], P[3], D[3], OP[3] = { 0, 0, 0 };
	long long CI, CO, Sp = 1, numel = o->numel, taps = 1;
	char xs[80], ws[80], ys[80];
	struct buf body = BUF_INIT, sig = BUF_INIT, args = BUF_INIT, grid = BUF_INIT, code = BUF_INIT;
	int rc;

	if (nd < 1 || nd > 3 || x->rank != nd + 2 || o->rank != nd + 2 || w->rank != nd + 2)
		return kf_err(err, "graph: conv '%s': bad dims", o->name);
	if (attr3(n->j, "kernel", nd, 1, K, err) || attr3(n->j, "stride", nd, 1, S, err) ||
	    attr3(n->j, "padding", nd, 0, P, err) || attr3(n->j, "dilation", nd, 1, D, err) ||
	    (tr && attr3(n->j, "output_padding", nd, 0, OP, err)))
		return -1;
	CI = x->shape[1];
	CO = o->shape[1];
	if (G < 1 || CI % G || CO % G || x->shape[0] != o->shape[0] ||
	    w->shape[0] != (tr ? CI : CO) || w->shape[1] != (tr ? CO / G : CI / G))
		return kf_err(err, "graph: conv '%s': channels and weight do not match", o->name);
	for (int d = 0; d < nd; d++) {
		if (w->shape[2 + d] != K[d])
			return kf_err(err, "graph: conv '%s': kernel and weight differ", o->name);
		Sp *= o->shape[2 + d];
		taps *= K[d];
	}
	in_name(p, n->in[0], xs, sizeof(xs));
	in_name(p, n->in[1], ws, sizeof(ws));
	gr_store(p, g->out, ys, sizeof(ys));
	if (gr_tc_fits(p)) {
		struct conv_shape sh;
		struct epi ep = { e->params.s, e->args.s, NULL };
		size_t from = p->launch.len, src0 = p->src.len;
		char name[32], pat[96];
		memset(&sh, 0, sizeof(sh));
		sh.dims = nd;
		sh.transposed = tr;
		sh.groups = (int)G;
		sh.N = x->shape[0];
		sh.C_in = CI;
		sh.C_out = CO;
		for (int d = 0; d < 3; d++) {
			sh.in_sp[d] = d < nd ? x->shape[2 + d] : 1;
			sh.out_sp[d] = d < nd ? o->shape[2 + d] : 1;
			sh.kernel[d] = d < nd ? (int)K[d] : 1;
			sh.stride[d] = d < nd ? (int)S[d] : 1;
			sh.padding[d] = d < nd ? (int)P[d] : 0;
			sh.dilation[d] = d < nd ? (int)D[d] : 1;
			sh.output_padding[d] = d < nd ? (int)OP[d] : 0;
		}
		buf_addf(&code, "%s", e->code.s);
		/* per-channel operands (bias, a (C, 1, 1) tensor): the store has its
		 * channel c, ei / S % C in 64-bit divisions per element otherwise */
		snprintf(pat, sizeof(pat), "(ei / %lldLL) %% %lldLL", Sp, CO);
		subst(&code, pat, "c");
		snprintf(pat, sizeof(pat), "(ei / %lldLL %% %lldLL)", Sp, CO);
		subst(&code, pat, "c");
		/* the flat index (its sizes literal) only where the chain reads it:
		 * two convs of one geometry then write the same kernel
		 * (gr_share_emitted) */
		{
			struct buf c2 = BUF_INIT;
			buf_adds(&c2, "{\n");
			if (reads_ei(code.s))
				buf_addf(&c2, "        const long long ei = (n * %lldLL + c) * %lldLL + s;\n", CO, Sp);
			buf_addf(&c2, "%s        }\n", code.s ? code.s : "");
			buf_release(&code);
			code = c2;
		}
		ep.code = code.s;
		snprintf(name, sizeof(name), "g%d_conv_tc", gi);
		json_t *tp = json_pack("{s:s,s:s,s:i,s:i,s:i,s:i}", "core",
				       p->conv_wmma ? "wmma" : p->conv_mma ? "mma" : "wgmma", "split",
				       p->conv_split3 ? "3xtf32" : "tf32bf16", "WG", p->conv_wg, "PS", p->conv_ps,
				       "PW", p->conv_pw, "PO", p->conv_po);

		rc = tp ? conv_epi_emit(&p->src, &p->launch, name, &sh, xs, ws, ys, &ep, tp, err) : kf_err(err, "out of memory");
		json_decref(tp);
		buf_release(&code);
		if ((rc = tc_done(p, name, src0, from, rc, err)) <= 0)
			return rc;
	}
	if (G == 1 && (!tr || !(OP[0] | OP[1] | OP[2]))) {
		struct gr_dmma_geo dg = { x->shape[0], CI, CO, { 1, 1, 1 }, { 1, 1, 1 }, { 1, 1, 1 },
					  { 1, 1, 1 }, { 0, 0, 0 }, { 1, 1, 1 }, tr };
		for (int d = 0; d < nd; d++) {
			dg.in[3 - nd + d] = x->shape[2 + d];
			dg.out[3 - nd + d] = o->shape[2 + d];
			dg.k[3 - nd + d] = K[d];
			dg.s[3 - nd + d] = S[d];
			dg.pad[3 - nd + d] = P[d];
			dg.dil[3 - nd + d] = D[d];
		}
		if ((rc = gr_dmma_conv(p, gi, e, xs, ws, &dg, err)) <= 0)
			return rc;
	}
	/* direct: one thread per output, fp32 FMA over the taps */
	buf_addf(&body, "    /* %sConv%dd, %lld taps of %lld input channels per output */\n",
		 tr ? "Transposed" : "", nd, taps, CI / G);
	buf_addf(&body, "    const int NB = %lld, CI = %lld, CO = %lld, GROUPS = %lld;\n", x->shape[0], CI, CO, G);
	geometry(&body, "I", x->shape + 2, nd, 1);
	geometry(&body, "O", o->shape + 2, nd, 1);
	geometry(&body, "K", K, nd, 1);
	geometry(&body, "S", S, nd, 1);
	geometry(&body, "P", P, nd, 0);
	geometry(&body, "DIL", D, nd, 1);
	bt_cuh_fill(&body, graph_ops_cuh, "conv_head",
		    "ACC_DECL", p->dacc ? "double acc = 0.0" : "float acc = 0.0f", NULL);
	if (!tr)
		bt_cuh_section(&body, graph_ops_cuh, "conv_taps");
	else	/* out[o] gathers x[i] where o = i * S - P + k * DIL */
		bt_cuh_section(&body, graph_ops_cuh, "convt_taps");
	if (p->dacc)	/* level 3: deep nets amplify fp32 rounding (batch norm of few values) */
		buf_adds(&body, "                    acc = fma((double)xp[((long long)id * IH + ih) * IW + iw],\n"
			    "                              (double)wp[(kd * KH + kh) * KW + kw], acc);\n");
	else
		buf_adds(&body, "                    acc = fmaf(xp[((long long)id * IH + ih) * IW + iw],\n"
			    "                               wp[(kd * KH + kh) * KW + kw], acc);\n");
	bt_cuh_section(&body, graph_ops_cuh, "conv_end");
	store(&body, "    ", "idx", p->dacc ? "(float)acc" : "acc", e);
	signature(&sig, p, "const float* __restrict__ x, const float* __restrict__ w, ", e);
	buf_addf(&args, "%s, %s, ", xs, ws);
	arguments(&args, p, g, "", e);
	buf_addf(&grid, "%lld", (numel + p->block - 1) / p->block);
	{
		char name[32];
		snprintf(name, sizeof(name), "g%d_conv%s", gi, tr ? "_transpose" : "");
		rc = gr_kernel(p, name, sig.s, body.s, grid.s, p->block, args.s, err);
	}
	buf_release(&body);
	buf_release(&sig);
	buf_release(&args);
	buf_release(&grid);
	return rc;
}

static int pool_head(struct gr_plan *p, int gi, struct gr_epi *e, struct buf *err)
{
	const struct gr_group *g = &p->g[gi];
	const struct gr_node *n = &p->n[g->head];
	const struct gr_tensor *x = &p->t[n->in[0]], *o = &p->t[n->out];
	int nd = (int)gr_int(n->j, "dims", 0, 0), mx = !strcmp(gr_str(n->j, "kind"), "max");
	long long K[3], S[3], P[3], D[3] = { 1, 1, 1 };
	char xs[80];
	struct buf body = BUF_INIT, sig = BUF_INIT, args = BUF_INIT, grid = BUF_INIT;
	int rc;

	if (nd < 1 || nd > 3 || x->rank != nd + 2 || o->rank != nd + 2 || x->shape[0] != o->shape[0] ||
	    x->shape[1] != o->shape[1])
		return kf_err(err, "graph: pool '%s': bad dims", o->name);
	if (!mx && (strcmp(gr_str(n->j, "kind"), "avg") ||
		    !json_is_true(json_object_get(n->j, "count_include_pad"))))
		return kf_err(err, "graph: pool '%s': max, or avg with count_include_pad", o->name);
	if (attr3(n->j, "kernel", nd, 1, K, err) || attr3(n->j, "stride", nd, 1, S, err) ||
	    attr3(n->j, "padding", nd, 0, P, err) || (mx && attr3(n->j, "dilation", nd, 1, D, err)))
		return -1;
	buf_addf(&body, "    /* %s pool %dd, one thread per output */\n", mx ? "max" : "avg", nd);
	geometry(&body, "I", x->shape + 2, nd, 1);
	geometry(&body, "O", o->shape + 2, nd, 1);
	geometry(&body, "K", K, nd, 1);
	geometry(&body, "S", S, nd, 1);
	geometry(&body, "P", P, nd, 0);
	geometry(&body, "DIL", D, nd, 1);
	bt_cuh_fill(&body, graph_ops_cuh, "pool_head", "NUMEL", BT_INT(o->numel), NULL);
	if (mx)
		bt_cuh_section(&body, graph_ops_cuh, "pool_max");
	else	/* divisor: the window clipped to the padded extent [-P, I + P) */
		bt_cuh_section(&body, graph_ops_cuh, "pool_avg");
	store(&body, "    ", "idx", mx ? "m" : "s / divisor", e);
	signature(&sig, p, "const float* __restrict__ x, ", e);
	buf_addf(&args, "%s, ", in_name(p, n->in[0], xs, sizeof(xs)));
	arguments(&args, p, g, "", e);
	buf_addf(&grid, "%lld", (o->numel + p->block - 1) / p->block);
	{
		char name[32];
		snprintf(name, sizeof(name), "g%d_%spool", gi, mx ? "max" : "avg");
		rc = gr_kernel(p, name, sig.s, body.s, grid.s, p->block, args.s, err);
	}
	buf_release(&body);
	buf_release(&sig);
	buf_release(&args);
	buf_release(&grid);
	return rc;
}

static int block_kernel(struct gr_plan *p, int gi, const char *what, struct buf *body, long long grid,
			long long bs, int xin, const struct gr_epi *e, struct buf *err)
{
	const struct gr_group *g = &p->g[gi];
	struct buf sig = BUF_INIT, args = BUF_INIT, gr = BUF_INIT;
	char xs[80], name[48];
	int rc;

	signature(&sig, p, "const float* __restrict__ x, ", e);
	buf_addf(&args, "%s, ", in_name(p, xin, xs, sizeof(xs)));
	arguments(&args, p, g, "", e);
	buf_addf(&gr, "%lld", grid);
	snprintf(name, sizeof(name), "g%d_%s", gi, what);
	rc = gr_kernel(p, name, sig.s, body->s, gr.s, bs, args.s, err);
	buf_release(&sig);
	buf_release(&args);
	buf_release(&gr);
	return rc;
}

static int reduce_head(struct gr_plan *p, int gi, struct gr_epi *e, struct buf *err)
{
	const struct gr_node *n = &p->n[p->g[gi].head];
	const struct gr_tensor *x = &p->t[n->in[0]], *o = &p->t[n->out];
	const json_t *dims = json_object_get(n->j, "dims"), *d;
	const char *fn = gr_str(n->j, "fn");
	unsigned mask = 0;
	size_t i;
	struct gr_rview v;
	struct buf head = BUF_INIT, loop = BUF_INIT, body = BUF_INIT;
	long long R, outs, bs;
	char val[64], xs[80];
	int rc, th;
	const char *one;

	json_array_foreach(dims, i, d) {
		long long k = json_integer_value(d);
		if (!json_is_integer(d) || k < -x->rank || k >= x->rank)
			return kf_err(err, "graph: reduce '%s': bad dims", o->name);
		mask |= 1u << (k < 0 ? k + x->rank : k);
	}
	if (!mask)
		return kf_err(err, "graph: reduce '%s': no dims", o->name);
	gr_make_view(&v, x->shape, x->rank, mask);
	gr_view_counts(&v, &R, &outs);
	if (outs != o->numel)
		return kf_err(err, "graph: reduce '%s': %lld outputs for %lld elements", o->name, outs,
			      o->numel);
	th = gr_red_thread(p, &v);
	if (!th && (rc = gr_reduce_split(p, gi, fn, &v, in_name(p, n->in[0], xs, sizeof(xs)), e, err)) <= 0)
		return rc;
	gr_red_loops(&v, th, "x", &head, &loop, &R, &outs);
	/* a block per output: the block's tree, then its first thread stores */
	one = th ? "" : "    if (threadIdx.x == 0)\n";
	bs = th ? 256 : gr_red_block(R);
	if (th)
		buf_addf(&body, "    /* %s over %lld values, one thread per output */\n%s", fn, R, head.s);
	else
		buf_addf(&body, "    /* %s over %lld values, one block per output */\n"
			    "    __shared__ double sh[%lld];\n%s", fn, R, bs, head.s);
	if (!strcmp(fn, "sum") || !strcmp(fn, "mean")) {
		if (!th)
			gr_helpers(p, GR_H_SUM);
		buf_addf(&body, "    double s = 0.0;\n%s        s += a;\n    }\n%s%s", loop.s,
			 th ? "" : "    s = block_sum(s, sh);\n", one);
		snprintf(val, sizeof(val), fn[0] == 's' ? "(float)s" : "(float)(s / %lld.0)", R);
		store(&body, "    ", "o", val, e);
	} else if (!strcmp(fn, "max") || !strcmp(fn, "min")) {
		int mx = fn[1] == 'a';
		if (!th)
			gr_helpers(p, mx ? GR_H_MAX : GR_H_MIN);
		buf_addf(&body, "    double m = (double)__int_as_float(%s);\n%s"
			    "        if (a %s m || a != a) m = a;\n    }\n",
			 mx ? "(int)0xff800000" : "0x7f800000", loop.s, mx ? ">" : "<");
		if (!th)
			buf_addf(&body, "    m = block_%s(m, sh);\n", fn);
		buf_adds(&body, one);
		store(&body, "    ", "o", "(float)m", e);
	} else if (!strcmp(fn, "logsumexp")) {
		if (!th)
			gr_helpers(p, GR_H_SUM | GR_H_MAX);
		buf_addf(&body, "    const double inf = (double)__int_as_float(0x7f800000);\n"
			    "    double m = -inf;\n%s        if (a > m || a != a) m = a;\n    }\n%s"
			    "    const double shift = (m == inf || m == -inf) ? 0.0 : m;   /* as PyTorch */\n"
			    "    double s = 0.0;\n%s        s += exp(a - shift);\n    }\n%s%s",
			 loop.s, th ? "" : "    m = block_max(m, sh);\n", loop.s,
			 th ? "" : "    s = block_sum(s, sh);\n", one);
		store(&body, "    ", "o", "(float)(log(s) + shift)", e);
	} else {
		rc = kf_err(err, "graph: reduce '%s' not supported", fn);
		goto out;
	}
	rc = block_kernel(p, gi, fn, &body, th ? (outs + bs - 1) / bs : outs, bs, n->in[0], e, err);
out:
	buf_release(&head);
	buf_release(&loop);
	buf_release(&body);
	return rc;
}

static int softmax_head(struct gr_plan *p, int gi, struct gr_epi *e, struct buf *err)
{
	const struct gr_node *n = &p->n[p->g[gi].head];
	const struct gr_tensor *x = &p->t[n->in[0]];
	long long dim = gr_int(n->j, "dim", 0, -1), D, inner = 1, bs, rows;
	int lg = json_is_true(json_object_get(n->j, "log")), th;
	char ix[64];
	const char *j0, *jstep;
	struct buf body = BUF_INIT;
	struct gr_rview v;
	long long shp[3];
	int rc;

	if (dim < 0)
		dim += x->rank;
	if (dim < 0 || dim >= x->rank || p->t[n->out].numel != x->numel)
		return kf_err(err, "graph: softmax '%s': bad dim", p->t[n->out].name);
	D = x->shape[dim];
	for (int j = (int)dim + 1; j < x->rank; j++)
		inner *= x->shape[j];
	rows = x->numel / D;
	shp[0] = rows / inner, shp[1] = D, shp[2] = inner;
	gr_make_view(&v, shp, 3, 2);
	/* a thread per row over a strided dim (channels), else a block */
	th = gr_red_thread(p, &v);
	bs = th ? 256 : gr_red_block(D);
	j0 = th ? "0" : "threadIdx.x";
	jstep = th ? "j++" : "j += blockDim.x";
	if (!th)
		gr_helpers(p, GR_H_SUM | GR_H_MAX);
	buf_addf(&body, "    /* %ssoftmax over %lld values (stride %lld), one %s per row */\n", lg ? "log_" : "",
		 D, inner, th ? "thread" : "block");
	if (th)
		buf_addf(&body, "    const long long row = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
			    "    if (row >= %lldLL) return;\n", rows);
	else
		buf_addf(&body, "    __shared__ double sh[%lld];\n    const long long row = blockIdx.x;\n", bs);
	bt_cuh_fill(&body, graph_ops_cuh, "softmax_head", "INNER", BT_INT(inner),
		    "D_INNER", BT_INT(D * inner), "J0", j0, "D", BT_INT(D), "JSTEP", jstep,
		    "BLOCK_MAX", th ? "" : "    m = block_max(m, sh);\n",
		    "BLOCK_SUM", th ? "" : "    s = block_sum(s, sh);\n", NULL);
	snprintf(ix, sizeof(ix), "base + j * %lldLL", inner);
	store(&body, "    ", ix, lg ? "(float)((double)x[ei] - m - log(s))" :
	      "(float)(exp((double)x[ei] - m) / s)", e);
	rc = block_kernel(p, gi, lg ? "log_softmax" : "softmax", &body, th ? (rows + bs - 1) / bs : rows,
			  bs, n->in[0], e, err);
	buf_release(&body);
	return rc;
}

static int adaptive_head(struct gr_plan *p, int gi, struct gr_epi *e, struct buf *err)
{
	const struct gr_node *n = &p->n[p->g[gi].head];
	const struct gr_tensor *x = &p->t[n->in[0]], *o = &p->t[n->out];
	int nd = x->rank - 2;
	long long big = 1, ist = 1, bs;
	struct buf body = BUF_INIT;
	int rc;

	if (nd < 1 || o->rank != x->rank || o->shape[0] != x->shape[0] || o->shape[1] != x->shape[1])
		return kf_err(err, "graph: adaptive_avg_pool '%s': bad dims", o->name);
	for (int j = 0; j < nd; j++) {	/* the largest bin decides the block */
		long long s = x->shape[2 + j], os = o->shape[2 + j], mb = 0;
		for (long long i = 0; i < os && i < 4096; i++) {
			long long w = ((i + 1) * s + os - 1) / os - i * s / os;
			mb = w > mb ? w : mb;
		}
		big *= mb;
	}
	bs = gr_red_block(big);
	gr_helpers(p, GR_H_SUM);
	buf_addf(&body, "    /* adaptive average pool, bins floor(i * S / O) .. ceil((i + 1) * S / O),"
		    " one block per output */\n    __shared__ double sh[%lld];\n"
		    "    const long long o = blockIdx.x;\n    long long u = o;\n", bs);
	for (int j = nd - 1; j >= 0; j--) {
		long long s = x->shape[2 + j], os = o->shape[2 + j];
		buf_addf(&body, "    const long long c%d = u %% %lldLL; u /= %lldLL;\n"
			    "    const long long lo%d = c%d * %lldLL / %lldLL, n%d = (c%d + 1) * %lldLL / %lldLL"
			    " + ((c%d + 1) * %lldLL %% %lldLL != 0) - lo%d;\n",
			 j, os, os, j, j, s, os, j, j, s, os, j, s, os, j);
	}
	buf_addf(&body, "    const long long base = u * %lldLL;   /* u = n * C + c */\n", x->numel / x->shape[0] / x->shape[1]);
	buf_adds(&body, "    long long count = 1");
	for (int j = 0; j < nd; j++)
		buf_addf(&body, " * n%d", j);
	bt_cuh_section(&body, graph_ops_cuh, "adaptive_sum");
	for (int j = nd - 1; j >= 0; j--) {
		buf_addf(&body, "        off += (lo%d + q %% n%d) * %lldLL; q /= n%d;\n", j, j, ist, j);
		ist *= x->shape[2 + j];
	}
	bt_cuh_section(&body, graph_ops_cuh, "adaptive_end");
	store(&body, "    ", "o", "(float)(s / (double)count)", e);
	rc = block_kernel(p, gi, "adaptive_avg_pool", &body, o->numel, bs, n->in[0], e, err);
	buf_release(&body);
	return rc;
}

static int norm_head(struct gr_plan *p, int gi, struct gr_epi *e, struct buf *err)
{
	const struct gr_group *g = &p->g[gi];
	const struct gr_node *n = &p->n[g->head];
	const struct gr_tensor *x = &p->t[n->in[0]];
	const char *kind = gr_str(n->j, "kind");
	long long N = x->shape[0], C = x->rank > 1 ? x->shape[1] : 1, S = x->numel / N / C;
	long long shp[3], R, nstat, G = 1, inner = 1, pn;
	unsigned mask;
	double eps = gr_num(n->j, "eps", 1e-5);
	struct gr_rview v;
	struct buf body = BUF_INIT, sig = BUF_INIT, args = BUF_INIT;
	struct buf stat = BUF_INIT, pidx = BUF_INIT, grid = BUF_INIT;
	char xs[80], name[48], sb[32];
	int rc = -1, b;

	if (!strcmp(kind, "batch")) {
		shp[0] = N, shp[1] = C, shp[2] = S, mask = 5;
		buf_addf(&stat, "(ei / %lldLL) %% %lldLL", S, C);
		pn = C;
	} else if (!strcmp(kind, "group")) {
		G = gr_int(n->j, "groups", 0, 0);
		if (G < 1 || C % G)
			return kf_err(err, "graph: group norm: %lld channels in %lld groups", C, G);
		shp[0] = N, shp[1] = G, shp[2] = C / G * S, mask = 4;
		buf_addf(&stat, "ei / %lldLL", C / G * S);
		pn = C;
	} else if (!strcmp(kind, "instance")) {
		shp[0] = N, shp[1] = C, shp[2] = S, mask = 4;
		buf_addf(&stat, "ei / %lldLL", S);
		pn = C;
	} else if (!strcmp(kind, "layer")) {
		long long k = gr_int(n->j, "normalized_ndim", 0, 0);
		if (k < 1 || k > x->rank)
			return kf_err(err, "graph: layer norm over %lld dims", k);
		for (int j = x->rank - (int)k; j < x->rank; j++)
			inner *= x->shape[j];
		shp[0] = 1, shp[1] = x->numel / inner, shp[2] = inner, mask = 4;
		buf_addf(&stat, "ei / %lldLL", inner);
		pn = inner;
	} else {
		return kf_err(err, "graph: norm '%s' not supported", kind);
	}
	if (!strcmp(kind, "layer"))
		buf_addf(&pidx, "ei %% %lldLL", inner);
	else
		buf_addf(&pidx, "(ei / %lldLL) %% %lldLL", S, C);
	for (int a = 1; a < n->n_in; a++)
		if (p->t[n->in[a]].numel != pn) {
			rc = kf_err(err, "graph: norm '%s': affine parameter of %lld elements, %lld expected",
				    p->t[n->out].name, p->t[n->in[a]].numel, pn);
			goto out;
		}
	/* statistics: mean and 1 / sqrt(biased variance + eps), two passes in double */
	gr_make_view(&v, shp, 3, mask);
	gr_view_counts(&v, &R, &nstat);
	if ((b = gr_take_buf(p, 2 * nstat, 1, err)) < 0) {
		rc = b;
		goto out;
	}
	gr_buf_name(p, b, sb, sizeof(sb));
	in_name(p, n->in[0], xs, sizeof(xs));
	rc = gr_norm_stats(p, gi, kind, &v, xs, sb, eps, err);
	if (rc)
		goto out;
	/* apply, then the epilogue */
	buf_reset(&body);
	buf_reset(&args);
	buf_reset(&grid);
	buf_addf(&body, "    const long long ei = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
		    "    if (ei >= %lldLL) return;\n"
		    "    const long long st = %s;\n"
		    "    double z = ((double)x[ei] - stats[2 * st]) * stats[2 * st + 1];\n",
		 x->numel, stat.s);
	if (n->n_in > 1)
		buf_addf(&body, "    z *= (double)nw[%s];\n", pidx.s);
	if (n->n_in > 2)
		buf_addf(&body, "    z += (double)nb[%s];\n", pidx.s);
	buf_addf(&body, "    float v = (float)z;\n%s    y[ei] = v;\n", e->code.s);
	{
		struct buf in = BUF_INIT;
		char ws[80], bs2[80];
		buf_addf(&in, "const float* %sx, const double* __restrict__ stats, ",
			 p->alias >= 0 ? "" : "__restrict__ ");
		buf_addf(&args, "%s, %s, ", xs, sb);
		if (n->n_in > 1) {
			buf_adds(&in, "const float* __restrict__ nw, ");
			buf_addf(&args, "%s, ", in_name(p, n->in[1], ws, sizeof(ws)));
		}
		if (n->n_in > 2) {
			buf_adds(&in, "const float* __restrict__ nb, ");
			buf_addf(&args, "%s, ", in_name(p, n->in[2], bs2, sizeof(bs2)));
		}
		signature(&sig, p, in.s, e);
		buf_release(&in);
	}
	arguments(&args, p, g, "", e);
	buf_addf(&grid, "%lld", (x->numel + p->block - 1) / p->block);
	snprintf(name, sizeof(name), "g%d_norm_apply", gi);
	rc = gr_kernel(p, name, sig.s, body.s, grid.s, p->block, args.s, err);
	p->buf_busy[b] = 0;
out:
	buf_release(&body);
	buf_release(&sig);
	buf_release(&args);
	buf_release(&stat);
	buf_release(&pidx);
	buf_release(&grid);
	return rc;
}

int gr_emit_head(struct gr_plan *p, int gi, struct gr_epi *e, struct buf *err)
{
	const char *op = p->n[p->g[gi].head].op;

	if (gr_is_ew(p, p->g[gi].head))
		return ew_head(p, gi, e, err);
	if (p->g[gi].attn)
		return gr_attn_head(p, gi, e, err);
	if (p->g[gi].fold)
		return p->g[gi].csum ? gr_csum_head(p, gi, e, err) : gr_lsum_head(p, gi, e, err);
	if (!strcmp(op, "linear"))
		return linear_head(p, gi, e, err);
	if (!strcmp(op, "conv"))
		return conv_head(p, gi, e, err);
	if (!strcmp(op, "pool"))
		return pool_head(p, gi, e, err);
	if (!strcmp(op, "adaptive_avg_pool"))
		return adaptive_head(p, gi, e, err);
	if (!strcmp(op, "reduce"))
		return reduce_head(p, gi, e, err);
	if (!strcmp(op, "softmax"))
		return softmax_head(p, gi, e, err);
	if (!strcmp(op, "norm"))
		return norm_head(p, gi, e, err);
	return gr_head3(p, gi, e, err);
}
