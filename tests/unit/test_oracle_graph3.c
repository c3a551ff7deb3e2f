/* The graph oracle's level-3 ops (expand, slice, pad, cumsum, masked_fill,
 * rnn) on small hand-built specs against values computed here by brute
 * force, the same graphs evaluated lazily and densely, the dense mode's
 * freeing of dead outputs, and level-3 nodes the parser must refuse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TG_LEVEL "3"
#include "tests/unit/oracle_graph_fixture.h"

/* ---- expand, slice, pad, cumsum, masked_fill in one chain */

#define CHAIN_IN IN("x", "[2,3,4]") "," IN("e", "[4,1]")
#define CHAIN                                                                                      \
	"{\"out\":\"p\",\"op\":\"pad\",\"in\":[\"x\"],\"before\":[0,1,0],\"after\":[1,0,2],"     \
	"\"shape\":[3,4,6]},"                                                                      \
	"{\"out\":\"s\",\"op\":\"slice\",\"in\":[\"p\"],\"dim\":2,\"start\":1,\"stop\":6,"        \
	"\"step\":2,\"shape\":[3,4,3]},"                                                           \
	"{\"out\":\"c\",\"op\":\"cumsum\",\"in\":[\"s\"],\"dim\":1,\"shape\":[3,4,3]},"           \
	"{\"out\":\"m\",\"op\":\"masked_fill\",\"in\":[\"c\"],\"where\":\"upper\",\"diagonal\":1," \
	"\"value\":\"-inf\",\"shape\":[3,4,3]},"                                                   \
	"{\"out\":\"q\",\"op\":\"softmax\",\"in\":[\"m\"],\"dim\":-1,\"shape\":[3,4,3]},"         \
	"{\"out\":\"ex\",\"op\":\"expand\",\"in\":[\"e\"],\"shape\":[3,4,3]},"                    \
	"{\"out\":\"y\",\"op\":\"binary\",\"fn\":\"add\",\"in\":[\"q\",\"ex\"],\"shape\":[3,4,3]}"

static void chain_ref(struct tg *g, double *y)
{
	double p[3][4][6] = { { { 0 } } }, c[3][4][3];

	for (int a = 0; a < 2; a++)
		for (int b = 0; b < 3; b++)
			for (int k = 0; k < 4; k++)
				p[a][b + 1][k] = X(g, "x", (a * 3 + b) * 4 + k);
	for (int a = 0; a < 3; a++)
		for (int k = 0; k < 3; k++)
			for (int b = 0; b < 4; b++)
				c[a][b][k] = p[a][b][1 + 2 * k] + (b ? c[a][b - 1][k] : 0);
	for (int a = 0; a < 3; a++)
		for (int b = 0; b < 4; b++) {
			double mx = -INFINITY, s = 0, m[3];
			for (int k = 0; k < 3; k++) {
				m[k] = k - b >= 1 ? -INFINITY : c[a][b][k];
				mx = m[k] > mx ? m[k] : mx;
			}
			for (int k = 0; k < 3; k++)
				s += exp(m[k] - mx);
			for (int k = 0; k < 3; k++)
				y[(a * 4 + b) * 3 + k] = exp(m[k] - mx) / s + X(g, "e", b);
		}
}

static void test_chain3(void **state)
{
	struct tg g;
	double want[36];
	(void)state;
	for (int mode = 0; mode < 2; mode++) {
		gx_dense = mode;
		tg_load(&g, CHAIN_IN, "[3,4,3]", CHAIN);
		chain_ref(&g, want);
		expect(&g, want, 36, mode ? "level-3 chain, dense" : "level-3 chain, lazy");
		tg_free(&g);
	}
	gx_dense = -1;
}

/* ---- rnn */

struct rcfg {
	const char *kind;
	int L, D, bf, bias, h0, c0;
	const char *out;
};

enum { T_ = 3, B_ = 2, I_ = 3, H_ = 2 };

static double sg(double v)
{
	return 1 / (1 + exp(-v));
}

/* The spec's inputs and the rnn node for cfg (weights named w<l><d><q>). */
static void rnn_spec(const struct rcfg *r, struct buf *in, struct buf *gr, struct buf *osh)
{
	int G = !strcmp(r->kind, "lstm") ? 4 : !strcmp(r->kind, "gru") ? 3 : 1;
	int per = r->bias ? 4 : 2;
	int which = !strcmp(r->out, "output") ? 0 : 1;

	buf_addf(in, IN("x", "%s"), r->bf ? "[2,3,3]" : "[3,2,3]");
	buf_addf(gr, "{\"out\":\"y\",\"op\":\"rnn\",\"kind\":\"%s\",\"layers\":%d,\"hidden\":%d,"
		 "\"bidirectional\":%s,\"batch_first\":%s,\"bias\":%s,\"h0\":%s,\"c0\":%s,"
		 "\"output\":\"%s\",\"in\":[\"x\"", r->kind, r->L, H_, r->D == 2 ? "true" : "false",
		 r->bf ? "true" : "false", r->bias ? "true" : "false", r->h0 ? "true" : "false",
		 r->c0 ? "true" : "false", r->out);
	if (r->h0) {
		buf_addf(in, "," IN("h0", "[%d,%d,%d]"), r->L * r->D, B_, H_);
		buf_adds(gr, ",\"h0\"");
	}
	if (r->c0) {
		buf_addf(in, "," IN("c0", "[%d,%d,%d]"), r->L * r->D, B_, H_);
		buf_adds(gr, ",\"c0\"");
	}
	for (int l = 0; l < r->L; l++)
		for (int d = 0; d < r->D; d++)
			for (int q = 0; q < per; q++) {
				int I = l ? r->D * H_ : I_;
				if (q < 2)
					buf_addf(in, "," IN("w%d%d%d", "[%d,%d]"), l, d, q, G * H_, q ? H_ : I);
				else
					buf_addf(in, "," IN("w%d%d%d", "[%d]"), l, d, q, G * H_);
				buf_addf(gr, ",\"w%d%d%d\"", l, d, q);
			}
	if (which == 0)
		buf_addf(osh, "[%d,%d,%d]", r->bf ? B_ : T_, r->bf ? T_ : B_, r->D * H_);
	else
		buf_addf(osh, "[%d,%d,%d]", r->L * r->D, B_, H_);
	buf_addf(gr, "],\"shape\":%s}", osh->s);
}

static double W(struct tg *g, int l, int d, int q, long long i)
{
	char nm[40];
	snprintf(nm, sizeof(nm), "w%d%d%d", l, d, q);
	return X(g, nm, i);
}

/* PyTorch's recurrences written out, element by element. */
static void rnn_ref(struct tg *g, const struct rcfg *r, double *y)
{
	int lstm = !strcmp(r->kind, "lstm"), gru = !strcmp(r->kind, "gru");
	double seq[T_][B_][2 * H_], nxt[T_][B_][2 * H_], hn[8][B_][H_], cn[8][B_][H_];
	int I = I_;

	for (int t = 0; t < T_; t++)
		for (int b = 0; b < B_; b++)
			for (int i = 0; i < I_; i++)
				seq[t][b][i] = X(g, "x", ((r->bf ? b * T_ + t : t * B_ + b)) * I_ + i);
	for (int l = 0; l < r->L; l++) {
		for (int d = 0; d < r->D; d++) {
			int ld = l * r->D + d;
			double h[B_][H_], c[B_][H_];
			for (int b = 0; b < B_; b++)
				for (int j = 0; j < H_; j++) {
					h[b][j] = r->h0 ? X(g, "h0", (ld * B_ + b) * H_ + j) : 0;
					c[b][j] = r->c0 ? X(g, "c0", (ld * B_ + b) * H_ + j) : 0;
				}
			for (int s = 0; s < T_; s++) {
				int t = d ? T_ - 1 - s : s;
				for (int b = 0; b < B_; b++) {
					double nh[H_];
					for (int j = 0; j < H_; j++) {
						double gi[4], gh[4];
						for (int q = 0; q < 4; q++) {
							int row = q * H_ + j;
							gi[q] = gh[q] = 0;
							if (q >= (lstm ? 4 : gru ? 3 : 1))
								continue;
							for (int k = 0; k < I; k++)
								gi[q] += W(g, l, d, 0, row * I + k) * seq[t][b][k];
							for (int k = 0; k < H_; k++)
								gh[q] += W(g, l, d, 1, row * H_ + k) * h[b][k];
							if (r->bias) {
								gi[q] += W(g, l, d, 2, row);
								gh[q] += W(g, l, d, 3, row);
							}
						}
						if (lstm) {
							c[b][j] = sg(gi[1] + gh[1]) * c[b][j] +
								  sg(gi[0] + gh[0]) * tanh(gi[2] + gh[2]);
							nh[j] = sg(gi[3] + gh[3]) * tanh(c[b][j]);
						} else if (gru) {
							double z = sg(gi[1] + gh[1]);
							double n = tanh(gi[2] + sg(gi[0] + gh[0]) * gh[2]);
							nh[j] = (1 - z) * n + z * h[b][j];
						} else {
							double u = gi[0] + gh[0];
							nh[j] = !strcmp(r->kind, "rnn_tanh") ? tanh(u) : u > 0 ? u : 0;
						}
					}
					for (int j = 0; j < H_; j++)
						nxt[t][b][d * H_ + j] = h[b][j] = nh[j];
				}
			}
			memcpy(hn[ld], h, sizeof(h));
			memcpy(cn[ld], c, sizeof(c));
		}
		memcpy(seq, nxt, sizeof(seq));
		I = r->D * H_;
	}
	if (!strcmp(r->out, "output")) {
		for (int t = 0; t < T_; t++)
			for (int b = 0; b < B_; b++)
				for (int j = 0; j < r->D * H_; j++)
					y[((r->bf ? b * T_ + t : t * B_ + b)) * r->D * H_ + j] = seq[t][b][j];
	} else {
		for (int ld = 0; ld < r->L * r->D; ld++)
			for (int b = 0; b < B_; b++)
				for (int j = 0; j < H_; j++)
					y[(ld * B_ + b) * H_ + j] =
						!strcmp(r->out, "h_n") ? hn[ld][b][j] : cn[ld][b][j];
	}
}

static void test_rnn(void **state)
{
	static const struct rcfg cfg[] = {
		{ "lstm", 2, 2, 1, 1, 1, 1, "output" },  { "lstm", 2, 2, 1, 1, 1, 1, "h_n" },
		{ "lstm", 2, 1, 0, 1, 1, 1, "c_n" },     { "lstm", 1, 1, 0, 0, 0, 0, "output" },
		{ "gru", 2, 2, 0, 1, 1, 0, "output" },   { "gru", 1, 1, 1, 0, 0, 0, "h_n" },
		{ "rnn_tanh", 2, 1, 0, 1, 1, 0, "h_n" }, { "rnn_relu", 1, 2, 1, 1, 0, 0, "output" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cfg) / sizeof(cfg[0]); i++) {
		struct buf in = BUF_INIT, gr = BUF_INIT, osh = BUF_INIT, what = BUF_INIT;
		struct tg g;
		double want[64];
		rnn_spec(&cfg[i], &in, &gr, &osh);
		tg_load(&g, in.s, osh.s, gr.s);
		rnn_ref(&g, &cfg[i], want);
		buf_addf(&what, "%s layers %d dirs %d batch_first %d bias %d -> %s", cfg[i].kind,
			 cfg[i].L, cfg[i].D, cfg[i].bf, cfg[i].bias, cfg[i].out);
		expect(&g, want, g.p.t[g.p.n_in].numel, what.s);
		tg_free(&g);
		buf_release(&in);
		buf_release(&gr);
		buf_release(&osh);
		buf_release(&what);
	}
}

/* ---- dense mode: lazy and dense agree on a deep graph, dead outputs go */

static void test_dense(void **state)
{
	struct buf gr = BUF_INIT;
	double lazy[24];
	char names[20][16];
	(void)state;
	/* 20 nodes: linear / layer norm / add / tanh, each reading the previous */
	for (int i = 0; i < 20; i++) {
		const char *prev = i ? names[i - 1] : "x";
		snprintf(names[i], sizeof(names[i]), i == 19 ? "y" : "n%d", i);
		if (i % 4 == 0)
			buf_addf(&gr, "%s{\"out\":\"%s\",\"op\":\"linear\",\"in\":[\"%s\",\"w\",\"b\"],"
				 "\"shape\":[2,3,4]}", i ? "," : "", names[i], prev);
		else if (i % 4 == 1)
			buf_addf(&gr, ",{\"out\":\"%s\",\"op\":\"norm\",\"kind\":\"layer\","
				 "\"normalized_ndim\":2,\"in\":[\"%s\"],\"shape\":[2,3,4]}", names[i], prev);
		else if (i % 4 == 2)
			buf_addf(&gr, ",{\"out\":\"%s\",\"op\":\"binary\",\"fn\":\"add\",\"in\":[\"%s\","
				 "\"x\"],\"shape\":[2,3,4]}", names[i], prev);
		else
			buf_addf(&gr, ",{\"out\":\"%s\",\"op\":\"act\",\"fn\":\"tanh\",\"in\":[\"%s\"],"
				 "\"shape\":[2,3,4]}", names[i], prev);
	}
	/* mode 0: lazy, 1: lazy keeping re-read nodes whole (memo), 2: dense */
	for (int mode = 0; mode < 3; mode++) {
		struct tg g;
		struct gx *x;
		int live = 0;
		gx_dense = mode == 2;
		gx_memo_on = mode == 1;
		tg_load(&g, IN("x", "[2,3,4]") "," IN("w", "[4,4]") "," IN("b", "[4]"), "[2,3,4]", gr.s);
		for (int i = 0; i < 24; i++) {
			double v = Y(&g, i);
			if (!mode)
				lazy[i] = v;
			else if (!close_to(v, lazy[i]))
				fail_msg("mode %d: y[%d] = %.17g, lazy %.17g", mode, i, v, lazy[i]);
		}
		x = g.c.cache;
		assert_non_null(x);
		assert_int_equal(x->dense, mode == 2);
		for (int i = x->n_leaf; i < x->nt; i++)
			live += x->t[i].dense != NULL;
		/* lazy: nothing is kept; memo: the nodes read again; dense: the output alone */
		if (mode == 1)
			assert_true(live > 0 && x->memo_used > 0);
		else
			assert_int_equal(live, mode == 2);
		if (mode == 2)
			assert_non_null(x->t[x->out].dense);
		tg_free(&g);
	}
	gx_memo_on = -1;
	gx_dense = -1;
	/* by default a chain of rows stays lazy, even past GX_DENSE_NODES nodes */
	{
		struct tg g;
		tg_load(&g, IN("x", "[2,3,4]") "," IN("w", "[4,4]") "," IN("b", "[4]"), "[2,3,4]", gr.s);
		(void)Y(&g, 0);
		assert_int_equal(((struct gx *)g.c.cache)->dense, 0);
		tg_free(&g);
	}
	/* and a graph whose nodes are reached by many paths is dense:
	 * n_i = n_{i-1} + n_{i-1}, 18 times (2^17 paths to n0), y = 2^18 x */
	{
		struct buf g2 = BUF_INIT;
		struct tg g;
		buf_adds(&g2, "{\"out\":\"n0\",\"op\":\"binary\",\"fn\":\"add\",\"in\":[\"x\",\"x\"],"
			 "\"shape\":[2,3]}");
		for (int i = 1; i < 18; i++) {
			char out[16];
			snprintf(out, sizeof(out), i == 17 ? "y" : "n%d", i);
			buf_addf(&g2, ",{\"out\":\"%s\",\"op\":\"binary\",\"fn\":\"add\","
				 "\"in\":[\"n%d\",\"n%d\"],\"shape\":[2,3]}", out, i - 1, i - 1);
		}
		tg_load(&g, IN("x", "[2,3]"), "[2,3]", g2.s);
		for (int i = 0; i < 6; i++)
			assert_true(Y(&g, i) == 262144.0 * X(&g, "x", i));
		assert_int_equal(((struct gx *)g.c.cache)->dense, 1);
		tg_free(&g);
		buf_release(&g2);
	}
	buf_release(&gr);
}

/* ---- the parser */

static void test_errors3(void **state)
{
	static const struct {
		const char *inputs, *out, *graph, *msg;
	} bad[] = {
		{ IN("x", "[2,3]"), "[2,3]",
		  "{\"out\":\"y\",\"op\":\"expand\",\"in\":[\"x\"],\"shape\":[2,4]}",
		  "dim 1 of size 3 does not expand to 4" },
		{ IN("x", "[2,3]"), "[2,1]",
		  "{\"out\":\"y\",\"op\":\"slice\",\"in\":[\"x\"],\"dim\":1,\"start\":3,\"stop\":5,\"shape\":[2,1]}",
		  "empty slice [3:3]" },
		{ IN("x", "[2,3]"), "[2,3]",
		  "{\"out\":\"y\",\"op\":\"slice\",\"in\":[\"x\"],\"dim\":1,\"start\":0,\"stop\":3,\"step\":0,\"shape\":[2,3]}",
		  "slice wants" },
		{ IN("x", "[2,3]"), "[3,3]",
		  "{\"out\":\"y\",\"op\":\"pad\",\"in\":[\"x\"],\"before\":[1],\"after\":[0,0],\"shape\":[3,3]}",
		  "\"before\" must list 2 integers" },
		{ IN("x", "[3]"), "[3]",
		  "{\"out\":\"y\",\"op\":\"masked_fill\",\"in\":[\"x\"],\"where\":\"upper\",\"diagonal\":0,\"value\":0,\"shape\":[3]}",
		  "masked_fill wants at least 2 dims" },
		{ IN("x", "[3,3]"), "[3,3]",
		  "{\"out\":\"y\",\"op\":\"masked_fill\",\"in\":[\"x\"],\"where\":\"upper\",\"diagonal\":0,\"value\":\"nan\",\"shape\":[3,3]}",
		  "\"value\" must be a number" },
		{ IN("x", "[3,2,3]") "," IN("a", "[2,3]") "," IN("b", "[2,2]"), "[3,2,2]",
		  "{\"out\":\"y\",\"op\":\"rnn\",\"kind\":\"gru\",\"layers\":1,\"hidden\":2,\"bias\":false,"
		  "\"output\":\"output\",\"in\":[\"x\",\"a\",\"b\"],\"shape\":[3,2,2]}",
		  "operand \"a\" must have shape [6, 3]" },
		{ IN("x", "[3,2,3]") "," IN("a", "[2,3]") "," IN("b", "[2,2]"), "[3,2,2]",
		  "{\"out\":\"y\",\"op\":\"rnn\",\"kind\":\"rnn_tanh\",\"layers\":1,\"hidden\":2,"
		  "\"output\":\"output\",\"in\":[\"x\",\"a\",\"b\"],\"shape\":[3,2,2]}",
		  "takes 5 operands, has 3" },
		{ IN("x", "[3,2,3]") "," IN("a", "[2,3]") "," IN("b", "[2,2]"), "[2,2]",
		  "{\"out\":\"y\",\"op\":\"rnn\",\"kind\":\"gru\",\"layers\":1,\"hidden\":2,\"bias\":false,"
		  "\"output\":\"c_n\",\"in\":[\"x\",\"a\",\"b\"],\"shape\":[2,2]}",
		  "only an lstm has a cell state" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tg g;
		struct buf err = BUF_INIT;
		double v;
		int ret = tg_try(&g, bad[i].inputs, bad[i].out, bad[i].graph, &err);
		if (ret == 0) {
			ret = oracle_value(&g.c, 0, 0, &v, &err);
			tg_free(&g);
		} else {
			problem_release(&g.p);
		}
		if (ret >= 0)
			fail_msg("case %zu: accepted", i);
		if (!strstr(err.s, bad[i].msg))
			fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.s, bad[i].msg);
		buf_release(&err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain3),
		cmocka_unit_test(test_rnn),
		cmocka_unit_test(test_dense),
		cmocka_unit_test(test_errors3),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
