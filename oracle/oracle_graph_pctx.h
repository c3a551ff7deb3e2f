/* The graph oracle's parser, shared by oracle/oracle_graph_parse.c (level-1/2
 * ops, nodes) and oracle/oracle_graph_parse3.c (level-3 ops): the node being
 * parsed, for error messages, and the attribute helpers. Internal. */
#ifndef KF_ORACLE_GRAPH_PCTX_H
#define KF_ORACLE_GRAPH_PCTX_H

#include "oracle/oracle_graph.h"
#include "core/json.h"

struct pctx {
	const struct problem *p;
	int i;
	const char *op, *out;
	struct buf *err;
};

int gxp_perr(const struct pctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int gxp_lookup(const char *const *names, const char *s);
int gxp_get_bool(const struct pctx *x, json_t *o, const char *key, int def, int *out);
int gxp_get_num(const struct pctx *x, json_t *o, const char *key, double *out, int *has);
int gxp_get_int(const struct pctx *x, json_t *o, const char *key, long long lo, long long hi,
		long long *out, int *has);
int gxp_norm_dim(const struct pctx *x, long long d, int nd, const char *what, int *out);
void gxp_fmt_shape(struct buf *b, int nd, const long long *s);
int gxp_want_nin(const struct pctx *x, int nin, int lo, int hi);

/* oracle/oracle_graph_parse3.c: level-3 ops (docs/graph-ir.md) */
int gxp_parse_l3(const struct pctx *x, json_t *o, struct gx *g, struct gx_t *t,
		 const long long *want, int want_nd);          /* expand slice pad cumsum masked_fill */
int gxp_parse_l3b(const struct pctx *x, json_t *o, struct gx *g, struct gx_t *t,
		  const long long *want, int want_nd);         /* const take roll compare */
int gxp_parse_rnn(const struct pctx *x, json_t *o, struct gx *g, struct gx_t *t);

#endif
