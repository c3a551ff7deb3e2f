/* Template "graph": every level-2 problem (family graph) from its operator
 * graph, in fp32. The plan (this file) reads the graph with bounds on
 * every size, forms the groups (fuse=1: a producer and the elementwise
 * nodes that only consume its result; fuse=0: one kernel per node) and
 * gives the materialized tensors scratch buffers by liveness.
 * Parameters: fuse, tc (try the tensor-core emitters of builtin_epi.h
 * first; off by default, the idea graph-tensor-core turns it on),
 * mma (their sm_80 mma.sync core instead of sm_90a wgmma, convs included),
 * conv_mma (convs alone on the mma.sync core; -1, the default: on for level
 * 3), conv_wg (warpgroups a block of the wgmma conv core: 2, or 1 for two
 * blocks an SM), conv_ps (that core's PS: x's small parts split once, by
 * its channels-last copy), conv_pw (1x1 convs as batched GEMMs), conv_po
 * (PO: a transposed conv's phases fastest in the grid; 1, the default),
 * conv_wmma (convs on conv_epi's older wmma core), split3 (their 3xTF32
 * split instead of tf32+bf16: three tf32 products, more bits; -1, the
 * default: on for level 3, and for the convolutions of the wgmma core on
 * every level), fold (a
 * sum or mean of a linear's outputs over its features becomes a GEMV with
 * the weight's column sums, builtin_graph_lsum.c; a conv's sum or mean over
 * all positions, through steps by constants, x's sums by class of positions
 * times the weights of the taps reaching them, builtin_graph_csum.c), block (threads of elementwise kernels), BM BN BK
 * TM TN (the fallback SGEMM's tiles), dacc (the direct conv sums in double;
 * on by default for level 3, whose deep nets with batch norms over few
 * values amplify fp32 rounding at small sizes), red (reduction kernels,
 * builtin_graph_red.c: -1 by size, 0 a block per output, 1 a thread per
 * output and split statistics wherever they apply). Level 3 adds the ops of
 * builtin_graph3.c. Past 16 scratch buffers (arena=1: always, for tests at
 * small sizes) the buffers live in one arena per type, 256-byte aligned, and
 * the tensor-core emitters' own scratch in one region of the float arena
 * past them (builtin_graph_arena.c);
 * dedup (builtin_graph_dedup.c: 0 off, 1 identical kernels once, 2 also
 * sizes as arguments while over the source limit, 3 always); once (the
 * tensor-core emitters' guarded helper blocks written once, gr_once: 1, the
 * default, or 0 as each kernel brings them); src_limit 0 renders past the
 * engine's source limit (host emulation); f64 (1: the rendering rewritten
 * in double, inputs copied in and the output rounded out, for problems
 * fp32 cannot pass, builtin_graph_f64.c; tc is ignored with it); dmma (with
 * f64: convolutions of one group, linears of over 16 rows and batched
 * matmuls as implicit GEMMs on the fp64 tensor cores, mma m8n8k4; 2: sm_90's
 * m16n8k16 where the GPU has it; 0, the default, the direct conv and the
 * tiled GEMMs in double). */
#include "kernels/graph/builtin_graph.h"

#include "engine/launch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/builtin_tmpl.h"
#include "kernels/builtin_util.h"
#include "engine/candidate.h"

void gr_plan_init(struct gr_plan *p)
{
	memset(p, 0, sizeof(*p));
	buf_init(&p->guards);
	buf_init(&p->src);
	buf_init(&p->launch);
}

void gr_plan_release(struct gr_plan *p)
{
	gr_dedup_release(p);
	buf_release(&p->shared);
	buf_release(&p->guards);
	buf_release(&p->src);
	buf_release(&p->launch);
}

long long gr_int(const json_t *node, const char *key, int idx, long long dflt)
{
	const json_t *v = json_object_get(node, key);

	if (json_is_array(v))
		v = json_array_get(v, (size_t)idx);
	return json_is_integer(v) ? (long long)json_integer_value(v) : dflt;
}

double gr_num(const json_t *node, const char *key, double dflt)
{
	const json_t *v = json_object_get(node, key);

	return json_is_number(v) ? json_number_value(v) : dflt;
}

const char *gr_str(const json_t *node, const char *key)
{
	const char *s = json_string_value(json_object_get(node, key));

	return s ? s : "";
}

const char *gr_store(const struct gr_plan *p, int k, char *tmp, size_t n)
{
	const struct gr_tensor *t = &p->t[p->t[k].root];

	if (t->buf < 0)
		snprintf(tmp, n, "%s", t->name);
	else
		gr_buf_name(p, t->buf, tmp, n);
	return tmp;
}

const char *gr_buf_name(const struct gr_plan *p, int b, char *tmp, size_t n)
{
	if (p->off)
		snprintf(tmp, n, "%s + %lld", p->buf_dbl[b] ? "arenad" : "arena", p->off[b]);
	else
		snprintf(tmp, n, "buf%d", b);
	return tmp;
}

int gr_lit(struct buf *b, double v, struct buf *err)
{
	if (!isfinite(v))
		return kf_err(err, "graph: non-finite constant");
	buf_addf(b, "%.9ef", v);
	return 0;
}

static int find_tensor(const struct gr_plan *p, const char *name)
{
	for (int k = 0; k < p->nt; k++)
		if (!strcmp(p->t[k].name, name))
			return k;
	return -1;
}

static int set_shape(struct gr_tensor *t, const json_t *shape, const json_t *sizes,
		     struct buf *err)
{
	size_t i;
	const json_t *d;

	if (!json_is_array(shape) || json_array_size(shape) < 1 ||
	    json_array_size(shape) > GR_MAX_RANK)
		return kf_err(err, "graph: tensor '%s': shape of rank 1..%d expected", t->name,
			      GR_MAX_RANK);
	t->rank = (int)json_array_size(shape);
	t->numel = 1;
	json_array_foreach(shape, i, d) {
		long long v = -1;
		if (json_is_integer(d))
			v = (long long)json_integer_value(d);
		else if (json_is_string(d) && json_is_integer(json_object_get(sizes, json_string_value(d))))
			v = (long long)json_integer_value(json_object_get(sizes, json_string_value(d)));
		if (v < 1 || v >= GR_MAX_DIM)
			return kf_err(err, "graph: tensor '%s': bad dimension %zu", t->name, i);
		t->shape[i] = v;
		t->numel *= v;
		if (t->numel > GR_MAX_NUMEL)
			return kf_err(err, "graph: tensor '%s' too large", t->name);
	}
	return 0;
}

static int new_tensor(struct gr_plan *p, const char *name, struct buf *err)
{
	struct gr_tensor *t;

	if (!name || !*name || strlen(name) > 64)
		return kf_err(err, "graph: bad tensor name");
	if (find_tensor(p, name) >= 0)
		return kf_err(err, "graph: tensor '%s' defined twice", name);
	if (p->nt >= GR_MAX_TENSORS)
		return kf_err(err, "graph: over %d tensors", GR_MAX_TENSORS);
	t = &p->t[p->nt];
	memset(t, 0, sizeof(*t));
	t->name = name;
	t->root = p->nt;
	t->buf = -1;
	t->last = -1;
	return p->nt++;
}

static const char *const ops[] = { "linear", "conv", "pool", "adaptive_avg_pool", "act", "binary",
				   "reduce", "softmax", "norm", "dropout", "reshape", "matmul", "permute",
				   "concat", "expand", "slice", "pad", "cumsum", "masked_fill", "rnn", "const",
				   "take", "roll", "compare", NULL };

int gr_plan_build(struct gr_plan *p, const json_t *spec, struct buf *err)
{
	const json_t *sizes = json_object_get(spec, "sizes"), *graph, *inputs, *x;
	size_t i, j;
	int k, rc;

	p->spec = spec;
	graph = json_object_get(json_object_get(spec, "attrs"), "graph");
	inputs = json_object_get(spec, "inputs");
	if (!json_is_array(graph) || !json_array_size(graph) || json_array_size(graph) > GR_MAX_NODES)
		return kf_err(err, "graph: attrs.graph must list 1..%d nodes", GR_MAX_NODES);
	json_array_foreach(inputs, i, x) {
		if ((k = new_tensor(p, json_string_value(json_object_get(x, "name")), err)) < 0)
			return k;
		if ((rc = set_shape(&p->t[k], json_object_get(x, "shape"), sizes, err)))
			return rc;
		p->t[k].spec = 1;
		p->t[k].is_bool = !strcmp(gr_str(x, "dtype"), "bool");
		if (!p->t[k].is_bool && strcmp(gr_str(x, "dtype"), "float32"))
			return kf_err(err, "graph: input '%s' is not float32", p->t[k].name);
	}
	json_array_foreach(graph, i, x) {
		struct gr_node *n = &p->n[p->nn++];
		const json_t *ins = json_object_get(x, "in"), *in;
		int known = 0, many;
		n->j = x;
		n->op = gr_str(x, "op");
		for (j = 0; ops[j]; j++)
			known |= !strcmp(ops[j], n->op);
		if (!known)
			return kf_err(err, "graph: node %zu: op '%s' not supported", i, n->op);
		many = !strcmp(n->op, "concat") || !strcmp(n->op, "rnn");
		if (!json_is_array(ins) || (!json_array_size(ins) && strcmp(n->op, "const")) ||
		    json_array_size(ins) > (many ? GR_MAX_CAT : GR_MAX_IN))
			return kf_err(err, "graph: node %zu: 1..%d operands expected", i,
				      many ? GR_MAX_CAT : GR_MAX_IN);
		json_array_foreach(ins, j, in) {
			int t = find_tensor(p, json_string_value(in) ? json_string_value(in) : "");
			if (t < 0)
				return kf_err(err, "graph: node %zu reads an unknown tensor", i);
			n->in[n->n_in++] = t;
		}
		if ((k = new_tensor(p, json_string_value(json_object_get(x, "out")), err)) < 0)
			return k;
		if ((rc = set_shape(&p->t[k], json_object_get(x, "shape"), sizes, err)))
			return rc;
		n->out = k;
		if ((n->n_in && p->t[n->in[0]].is_bool) || (strcmp(n->op, "dropout") && n->n_in > 1 &&
					       p->t[n->in[1]].is_bool))
			return kf_err(err, "graph: node %zu: a bool operand outside dropout", i);
		if ((rc = gr_check3(p, p->nn - 1, err)))
			return rc;
	}
	if (strcmp(p->t[p->n[p->nn - 1].out].name,
		   bt_name(bt_output(spec, 0)) ? bt_name(bt_output(spec, 0)) : ""))
		return kf_err(err, "graph: the last node must write the output");
	if (bt_dims_value(spec, bt_output(spec, 0), 0, bt_ndim(bt_output(spec, 0))) !=
	    p->t[p->n[p->nn - 1].out].numel)
		return kf_err(err, "graph: the output's shape differs from the last node's");
	if (!p->no_cat_prefix)
		gr_concat_prefix(p);
	/* views and readers */
	for (k = 0; k < p->nn; k++) {
		struct gr_node *n = &p->n[k];
		if (!strcmp(n->op, "reshape") && k < p->nn - 1) {
			if (p->t[n->in[0]].numel != p->t[n->out].numel)
				return kf_err(err, "graph: reshape %d changes the element count", k);
			n->view = 1;
			p->t[n->out].root = p->t[n->in[0]].root;
			continue;
		}
		for (int a = 0; a < n->n_in; a++) {
			int r = p->t[n->in[a]].root, dup = 0;
			for (int b = 0; b < a; b++)
				dup |= p->t[n->in[b]].root == r;
			p->t[r].users += !dup;
		}
	}
	return 0;
}

int gr_is_ew(const struct gr_plan *p, int k)
{
	const char *op = p->n[k].op;

	return !strcmp(op, "act") || !strcmp(op, "binary") || !strcmp(op, "dropout") ||
	       (!strcmp(op, "reshape") && !p->n[k].view);
}

/* Whether node k may join a group whose running result is tensor r: it
 * reads r, nothing else does, and it has as many elements (r is not
 * broadcast into a larger result). */
static int chains(const struct gr_plan *p, int k, int r)
{
	int reads = 0;

	r = p->t[r].root;
	if (!gr_is_ew(p, k) || p->t[r].spec || p->t[r].users != 1 ||
	    p->t[p->n[k].out].numel != p->t[r].numel)
		return 0;
	for (int a = 0; a < p->n[k].n_in; a++)
		reads |= p->t[p->n[k].in[a]].root == r;
	return reads;
}

static void form_groups(struct gr_plan *p)
{
	for (int k = 0; k < p->nn; k++) {
		struct gr_group *g;
		int r;
		if (p->n[k].view)
			continue;
		g = &p->g[p->ng++];
		memset(g, 0, sizeof(*g));
		g->head = k;
		g->out = p->n[k].out;
		if (!strcmp(p->n[k].op, "matmul") && (r = gr_attn_match(p, k)) > k) {
			/* scale, mask, softmax and the second matmul: one kernel */
			while (k < r)
				g->chain[g->n_chain++] = ++k;
			g->fold = g->n_chain;
			g->attn = 1;
			g->out = p->n[k].out;
		} else if (p->fold && (r = gr_lsum_match(p, k)) > k && r - k < GR_MAX_CHAIN / 2) {
			/* the linear, its affine steps and the reduce: one group */
			while (k < r)
				g->chain[g->n_chain++] = ++k;
			g->fold = g->n_chain;
			g->out = p->n[k].out;
		} else if (p->fold && (r = gr_csum_match(p, k)) > k && r - k < GR_MAX_CHAIN / 2) {
			/* the conv, its steps by constants and its spatial sum: one group */
			while (k < r)
				g->chain[g->n_chain++] = ++k;
			g->fold = g->n_chain;
			g->csum = 1;
			g->out = p->n[k].out;
		}
		while (p->fuse && strcmp(p->n[g->head].op, "rnn")) {
			int j = k + 1;
			while (j < p->nn && p->n[j].view)
				j++;
			if (j >= p->nn || g->n_chain >= GR_MAX_CHAIN || !chains(p, j, g->out))
				break;
			g->chain[g->n_chain++] = j;
			g->out = p->n[j].out;
			k = j;
		}
	}
}

/* The tensors a group reads from memory: operands of its nodes other than
 * its own running results. */
static int group_reads(const struct gr_plan *p, const struct gr_group *g, int *out)
{
	int n = 0, run = -1;

	for (int c = -1; c < g->n_chain; c++) {
		const struct gr_node *nd = &p->n[c < 0 ? g->head : g->chain[c]];
		for (int a = 0; a < nd->n_in; a++) {
			int r = p->t[nd->in[a]].root, dup = 0;
			if (r == run)
				continue;
			for (int b = 0; b < n; b++)
				dup |= out[b] == r;
			if (!dup)
				out[n++] = r;
		}
		run = p->t[nd->out].root;
	}
	return n;
}

int gr_take_buf(struct gr_plan *p, long long numel, int dbl, struct buf *err)
{
	int best = -1;

	for (int b = 0; b < p->nbuf; b++) {
		if (p->buf_busy[b] || p->buf_dbl[b] != dbl)
			continue;
		/* the smallest that fits, else the largest (it grows) */
		if (best < 0 || (p->buf_cap[b] >= numel &&
				 (p->buf_cap[best] < numel || p->buf_cap[b] < p->buf_cap[best])) ||
		    (p->buf_cap[best] < numel && p->buf_cap[b] > p->buf_cap[best]))
			best = b;
	}
	if (best < 0) {
		if (p->nbuf >= GR_MAX_BUFS)
			return kf_err(err, "graph: over %d scratch buffers", GR_MAX_BUFS);
		best = p->nbuf++;
		p->buf_cap[best] = 0;
		p->buf_dbl[best] = dbl;
	}
	if (p->buf_cap[best] < numel)
		p->buf_cap[best] = numel;
	p->buf_busy[best] = 1;
	return best;
}

/* Buffer of group gi's result: an operand dying here whose elements are
 * read only at the written index (elementwise and norm heads), else a free
 * or new buffer. */
static int place_output(struct gr_plan *p, int gi, const int *reads, int nr, struct buf *err)
{
	struct gr_group *g = &p->g[gi];
	const char *op = p->n[g->head].op;
	struct gr_tensor *o = &p->t[g->out];
	int b;

	g->alias = -1;
	if (!strcmp(o->name, bt_name(bt_output(p->spec, 0))))
		return 0;
	if (gr_is_ew(p, g->head) || !strcmp(op, "norm"))
		for (int a = 0; a < nr; a++) {
			struct gr_tensor *t = &p->t[reads[a]];
			if (t->buf >= 0 && t->last == gi && t->numel == o->numel) {
				o->buf = t->buf;
				g->alias = reads[a];
				return 0;
			}
		}
	if ((b = gr_take_buf(p, o->numel, 0, err)) < 0)
		return b;
	o->buf = b;
	return 0;
}

int gr_plan_emit(struct gr_plan *p, struct buf *err)
{
	int reads[GR_MAX_TENSORS], nr, rc;
	long long total = 0;

	form_groups(p);
	for (int gi = 0; gi < p->ng; gi++) {
		nr = group_reads(p, &p->g[gi], reads);
		for (int a = 0; a < nr; a++)
			p->t[reads[a]].last = gi;
	}
	for (int gi = 0; gi < p->ng; gi++) {
		struct gr_epi e;
		nr = group_reads(p, &p->g[gi], reads);
		if ((rc = place_output(p, gi, reads, nr, err)))
			return rc;
		gr_epi_init(&e);
		p->alias = p->g[gi].alias;
		rc = gr_epi_chain(p, &e, gi, err);
		if (!rc)
			rc = gr_emit_head(p, gi, &e, err);
		gr_epi_release(&e);
		if (rc)
			return rc;
		/* dead operands free their buffers; a result nobody reads too */
		for (int a = 0; a < nr; a++)
			if (p->t[reads[a]].last == gi && p->t[reads[a]].buf >= 0 &&
			    p->t[reads[a]].buf != p->t[p->g[gi].out].buf)
				p->buf_busy[p->t[reads[a]].buf] = 0;
		if (p->t[p->g[gi].out].last < 0 && p->t[p->g[gi].out].buf >= 0)
			p->buf_busy[p->t[p->g[gi].out].buf] = 0;
	}
	if (p->launches > GR_MAX_LAUNCHES)
		return kf_err(err, "graph: %d launches, over %d", p->launches, GR_MAX_LAUNCHES);
	if ((rc = gr_dedup_finish(p, err)))
		return rc;
	for (int b = 0; b < p->nbuf; b++)
		total += p->buf_cap[b] * (p->buf_dbl[b] ? 8 : 4);
	if (total > GR_MAX_SCRATCH)
		return kf_err(err, "graph: %lld bytes of scratch, over the engine's 8 GiB", total);
	return 0;
}

static int graph_supports(const json_t *spec)
{
	struct gr_plan *p;
	struct buf err = BUF_INIT;
	int ok;

	if (strcmp(gr_str(spec, "family"), "graph"))
		return 0;
	p = malloc(sizeof(*p));
	if (!p)
		return 0;
	gr_plan_init(p);
	ok = !gr_plan_build(p, spec, &err);
	gr_plan_release(p);
	free(p);
	buf_release(&err);
	return ok;
}

/* One rendering; off: the arenas' offsets of the buffers (a second pass
 * where the first needed over GR_NAMED_BUFS buffers), NULL: named ones. */
static int render_pass(struct gr_plan *p, const json_t *spec, const json_t *prm,
		       const long long *off, struct buf *err)
{
	int rc, nt;

	p->off = off;
	p->fuse = bt_param(prm, "fuse", 1) != 0;
	p->tc = bt_param(prm, "tc", 0) != 0;
	p->mma = bt_param(prm, "mma", 0) != 0;
	p->fold = bt_param(prm, "fold", 1) != 0;
	p->conv_wmma = bt_param(prm, "conv_wmma", 0) != 0;
	/* -1: convs on the mma.sync core on level 3 only. On level 2 the wgmma
	 * core was 1.3x the mma one (geomean, H100); on level 3 even overall,
	 * but 1.5-2.7x slower on VGG16/19 and GoogLeNet (small images, deep K,
	 * few blocks) and 1.3-1.8x faster on AlexNet and DenseNet: the search
	 * tries both (catalogue graph-tensor-core). */
	p->conv_mma = bt_param(prm, "conv_mma", -1);
	if (p->conv_mma < 0)
		p->conv_mma = json_integer_value(json_object_get(spec, "level")) == 3;
	p->conv_mma = p->conv_mma || p->mma;
	p->conv_wg = bt_param(prm, "conv_wg", 2);
	p->conv_ps = bt_param(prm, "conv_ps", 1);
	p->conv_pw = bt_param(prm, "conv_pw", 1);
	p->conv_po = bt_param(prm, "conv_po", 1);
	p->split3 = bt_param(prm, "split3", -1);
	p->attn = bt_param(prm, "attn", 2) != 0;
	p->attn_tile = bt_param(prm, "attn", 2) >= 2;
	p->skinny = bt_param(prm, "skinny", 1) != 0;
	p->share = bt_param(prm, "share", 1) != 0;
	p->no_cat_prefix = bt_param(prm, "cat_prefix", 1) == 0;
	p->dacc = bt_param(prm, "dacc", -1);
	p->red = bt_param(prm, "red", -1);
	p->dedup = bt_param(prm, "dedup", 2);
	p->once = bt_param(prm, "once", 1);
	p->f64 = bt_param(prm, "f64", 0);
	p->dmma = bt_param(prm, "dmma", 0);
	p->arena = bt_param(prm, "arena", 0);
	/* double throughout, so no tensor cores: tc and mma are ignored rather
	 * than refused, as the search stacks ideas (graph-tensor-core on an f64
	 * kernel renders that kernel again, which the proposer skips) */
	if (p->f64)
		p->tc = p->mma = 0;
	/* room for the header and the scratch declarations */
	p->src_budget = CANDIDATE_MAX_BYTES - 2048;
	if (p->dacc < 0)
		p->dacc = json_integer_value(json_object_get(spec, "level")) == 3;
	/* Convolutions on the wgmma core take 3xTF32 on every level: that core
	 * is not bound by its tensor cores, and tf32+bf16 missed 1e-4 on two
	 * level-2 problems' U[-100, 100) draw (docs/results/conv-wgmma-h100, in git history at 5fd28ee). */
	p->conv_split3 = p->split3 < 0 ? !p->conv_mma || json_integer_value(json_object_get(spec, "level")) == 3
				       : p->split3;
	/* Level 3's deep nets: the tf32+bf16 split (~18 bits) missed 1e-4 on
	 * ResNet101 and MobileNetV2 on an H100; 3xTF32 held it. */
	if (p->split3 < 0)
		p->split3 = json_integer_value(json_object_get(spec, "level")) == 3;
	p->block = bt_param(prm, "block", 256);
	p->BM = bt_param(prm, "BM", 64);
	p->BN = bt_param(prm, "BN", 64);
	p->BK = bt_param(prm, "BK", 16);
	p->TM = bt_param(prm, "TM", 4);
	p->TN = bt_param(prm, "TN", 4);
	nt = p->TM > 0 && p->TN > 0 ? (p->BM / p->TM) * (p->BN / p->TN) : 0;
	if (p->dedup < 0 || p->dedup > 3)
		rc = kf_err(err, "graph: dedup must be 0..3");
	else if (p->once != 0 && p->once != 1)
		rc = kf_err(err, "graph: once must be 0 or 1");
	else if (p->f64 != 0 && p->f64 != 1)
		rc = kf_err(err, "graph: f64 must be 0 or 1");
	else if (p->dmma < 0 || p->dmma > 2)
		rc = kf_err(err, "graph: dmma must be 0, 1 or 2");
	else if (p->arena != 0 && p->arena != 1)
		rc = kf_err(err, "graph: arena must be 0 or 1");
	else if (p->conv_wg != 1 && p->conv_wg != 2)
		rc = kf_err(err, "graph: conv_wg must be 1 or 2");
	else if ((p->conv_ps != 0 && p->conv_ps != 1) || (p->conv_pw != 0 && p->conv_pw != 1) ||
		 (p->conv_po != 0 && p->conv_po != 1))
		rc = kf_err(err, "graph: conv_ps, conv_pw and conv_po must be 0 or 1");
	else if (p->red < -1 || p->red > 1)
		rc = kf_err(err, "graph: red must be -1, 0 or 1");
	else if (p->block < 32 || p->block > 1024 || p->block % 32)
		rc = kf_err(err, "graph: block must be a multiple of 32 in 32..1024");
	else if (p->TM < 1 || p->TN < 1 || p->BM % p->TM || p->BN % p->TN || p->BM < 16 ||
		 p->BN < 16 || p->BM > 256 || p->BN > 256 || p->BK < 4 || p->BK > 64 || nt < 32 ||
		 nt > 1024)
		rc = kf_err(err, "graph: bad SGEMM tile parameters");
	else
		rc = gr_plan_build(p, spec, err);
	if (!rc)
		rc = gr_plan_emit(p, err);
	return rc;
}

/* The scratch declarations in a launch block's text (the emitters'). */
static int scratch_decls(const struct buf *l)
{
	int n = 0;

	for (const char *s = l->s; s && *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : "")
		n += !strncmp(s, "scratch ", 8);
	return n;
}

/* room: the tc_room of this try (level 3). */
/* render_room's code for "the source is over the engine's size limit": the
 * caller then tries again with less tensor-core room. */
#define GR_TOO_BIG (-2)

static int render_room(const json_t *spec, const json_t *prm, long long room, struct buf *s,
		       struct buf *err)
{
	struct gr_plan *p = malloc(sizeof(*p));
	long long off[GR_MAX_BUFS], cap[GR_MAX_BUFS], tot[2] = { 0, 0 };
	int rc, nbuf = 0;

	if (!p)
		return kf_err(err, "out of memory");
	gr_plan_init(p);
	p->tc_room = room;
	rc = render_pass(p, spec, prm, NULL, err);
	/* the arena past 16 buffers, or where the emitters' own scratch would
	 * take the launch block over the engine's declarations (DenseNet's
	 * tensor-core convs, a repacked weight each) */
	if (!rc && (p->nbuf > (p->arena ? 0 : GR_NAMED_BUFS) ||
		    p->nbuf + scratch_decls(&p->launch) > LAUNCH_MAX_SCRATCH)) {
		nbuf = p->nbuf;
		for (int b = 0; b < nbuf; b++) {
			off[b] = tot[p->buf_dbl[b]];
			tot[p->buf_dbl[b]] += (p->buf_cap[b] + GR_ARENA_ALIGN - 1) / GR_ARENA_ALIGN * GR_ARENA_ALIGN;
			cap[b] = p->buf_cap[b];
		}
		gr_plan_release(p);
		gr_plan_init(p);
		p->tc_room = room;
		/* the tensor-core emitters' scratch goes past the graph's buffers */
		p->tc_base = tot[0];
		p->arenad_bytes = tot[1] * 8;
		rc = render_pass(p, spec, prm, off, err);
		for (int b = 0; !rc && b < p->nbuf; b++)
			if (p->nbuf != nbuf || p->buf_cap[b] != cap[b])
				rc = kf_err(err, "graph: the arena pass placed buffers differently");
	}
	if (!rc) {
		buf_addf(s, "// template graph: fuse=%d tc=%d mma=%d block=%d BM=%d BN=%d BK=%d TM=%d "
			    "TN=%d%s; %d kernels\n", p->fuse, p->tc, p->mma, p->block, p->BM, p->BN, p->BK, p->TM, p->TN,
			 p->f64 ? p->dmma == 2 ? " f64=1 dmma=2" : p->dmma ? " f64=1 dmma=1" : " f64=1" : "", p->launches);
		buf_adds(s, p->src.s);
		buf_addf(s, "\n/*@launch\n");
		for (int b = 0; !p->off && b < p->nbuf; b++)
			buf_addf(s, "scratch %s buf%d[%lld];\n", p->buf_dbl[b] ? "double" : "float", b,
				 p->buf_cap[b]);
		if (p->off && tot[0] + p->tc_scratch)
			buf_addf(s, "scratch float arena[%lld];\n", tot[0] + p->tc_scratch);
		if (p->off && tot[1])
			buf_addf(s, "scratch double arenad[%lld];\n", tot[1]);
		buf_addf(s, "%s@*/\n", p->launch.s);
		if (p->f64)
			rc = gr_f64_promote(p, s, err);
		/* the engine would refuse it (even with kernels deduplicated) */
		if (!rc && s->len > CANDIDATE_MAX_BYTES && bt_param(prm, "src_limit", 1)) {
			kf_err(err, "graph: %zu bytes of source, over the engine's %d", s->len,
			       CANDIDATE_MAX_BYTES);
			rc = GR_TOO_BIG;
		}
	}
	gr_plan_release(p);
	free(p);
	return rc;
}

static int graph_render(const json_t *spec, const json_t *prm, struct buf *s, struct buf *err)
{
	/* level 3 with tc: fewer tensor-core kernels until the source fits
	 * (230 KiB first: with shared kernels SqueezeNet's last two convs and
	 * all of ResNet101's fit) */
	static const long long room[] = { 230LL << 10, GR_TC_ROOM, 100LL << 10, 50LL << 10, -1 };
	int l3 = json_integer_value(json_object_get(spec, "level")) == 3, rc = 0;
	struct buf t = BUF_INIT;

	for (int i = 0; i < (l3 && bt_param(prm, "tc", 0) && !bt_param(prm, "f64", 0) ? 5 : 1); i++) {
		buf_reset(&t);
		buf_reset(err);
		rc = render_room(spec, prm, l3 ? room[i] : 0, &t, err);
		if (rc != GR_TOO_BIG)
			break;
	}
	if (!rc)
		buf_adds(s, t.s);
	buf_release(&t);
	return rc < 0 ? -1 : rc;
}

const struct tmpl_def tmpl_graph_defs[] = {
	{ "graph", graph_supports, graph_render,
	  "{\"fuse\": 1, \"tc\": 0, \"mma\": 0, \"fold\": 1, \"block\": 256, \"BM\": 64, \"BN\": 64, \"BK\": 16, "
	  "\"TM\": 4, \"TN\": 4, \"conv_wmma\": 0, \"conv_mma\": -1, \"conv_wg\": 2, \"conv_ps\": 1, \"conv_pw\": 1, \"conv_po\": 1, \"split3\": -1, \"attn\": 2, \"skinny\": 1, \"share\": 1, \"cat_prefix\": 1, \"dacc\": -1, \"red\": -1, \"dedup\": 2, \"once\": 1, \"f64\": 0, \"dmma\": 0, \"arena\": 0, \"src_limit\": 1}" },
	{ NULL, NULL, NULL, NULL },
};
