/* `kforge problems sensitivity`: what the CPU oracle says each sensitivity
 * trial's redraw does to the output (docs/engine.md, "Sensitivity
 * trials"): for every input and parameter tensor, and a recurrent model's
 * first quarter of time steps, the oracle's sample on the base draw (the
 * spec's, or --alive) against the same draw with that tensor or region
 * redrawn; "influence" where some sampled element moves beyond the
 * tolerance (|a - b| > atol + rtol |b|), else "no influence". */
#include "cmds.h"
#include "core/json.h"
#include "oracle/oracle.h"
#include "problem/problem.h"
#include "problem/sensitivity.h"
#include "core/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sens_sample {
	int n[64];                 /* per output (at most 64) */
	long long *idx[64];
	double *val[64];
};

static int sample_draw(const struct problem *p, unsigned long long seed, const struct inputs_draw *d,
		       int samples, struct sens_sample *s, struct buf *err)
{
	struct oracle_ctx c;
	int ret = 0, no = p->n_out < 64 ? p->n_out : 64;

	oracle_ctx_init_draw(&c, p, seed, d);
	for (int o = 0; o < no && !ret; o++) {
		s->idx[o] = xcalloc((size_t)samples, sizeof(long long));
		s->val[o] = xcalloc((size_t)samples, sizeof(double));
		s->n[o] = oracle_sample(p, o, seed, s->idx[o], samples);
		for (int i = 0; i < s->n[o] && !ret; i++)
			if (oracle_value(&c, o, s->idx[o][i], &s->val[o][i], err) < 0)
				ret = -1;
	}
	oracle_ctx_release(&c);
	return ret;
}

static void sample_free(struct sens_sample *s)
{
	for (int o = 0; o < 64; o++) {
		free(s->idx[o]);
		free(s->val[o]);
	}
	memset(s, 0, sizeof(*s));
}

static const char sens_args[] = "ID [--alive] [--seed S] [--samples N] [--only NAME] [--json]";

int problems_sensitivity(int argc, char **argv, struct cli_ctx *ctx)
{
	unsigned long long seed = 1;
	int alive = 0, samples = 64, as_json = 0, n, rc;
	const char *only = NULL;
	struct cli_opt opts[] = {
		OPT_FLAG("alive", 0, &alive, "the alive draw as the base (recurrent models' spec \"alive\")"),
		OPT_ULLONG("seed", 0, &seed, "S", 0, 9007199254740992.0, "the inputs' seed (1)"),
		OPT_INT("samples", 0, &samples, "N", 2, 100000, "oracle values per output (64)"),
		OPT_STR("only", 0, &only, "NAME", "one tensor, or \"steps\" for the time-step region"),
		OPT_FLAG("json", 0, &as_json, "one JSON object per trial"),
		OPT_END,
	};
	struct cli_spec spec = { "problems sensitivity", sens_args,
		"For each sensitivity trial (every input and parameter tensor redrawn with\n"
		"another seed; a recurrent model's first quarter of time steps), the CPU\n"
		"oracle's output sample against the base draw's: influence where some\n"
		"sampled element moves beyond the tolerance. Exit 0.\n",
		opts, "ID: level3/036_LSTMHn, level2/12, ...\n", 0, NULL, NULL };
	struct problem p;
	struct buf dir = BUF_INIT, err = BUF_INIT;
	struct sens_sample a, b;
	struct inputs_draw d;

	if ((rc = cli_parse(&spec, argc, argv, ctx, &n)) != CLI_GO)
		return rc;
	if (n != 1)
		return cli_usage(&spec);
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	problem_init(&p);
	if (problem_find(ctx->root, argv[1], &dir, &err) < 0 || problem_load(&p, dir.s, &err) < 0) {
		rc = cli_fail(EXIT_FAIL, "%s", err.s);
		goto out;
	}
	if (alive && !sens_has_alive(&p)) {
		rc = cli_fail(EXIT_FAIL, "%s has no alive draw (spec \"alive\")", p.id);
		goto out;
	}
	inputs_draw_spec(&d);
	d.alive = alive;
	if (sample_draw(&p, seed, &d, samples, &a, &err) < 0) {
		rc = cli_fail(EXIT_FAIL, "%s", err.s);
		goto out;
	}
	rc = EXIT_OK;
	for (int j = 0; j < sens_count(&p) && rc == EXIT_OK; j++) {
		char name[160];
		long long beyond = 0, total = 0;
		double maxd = 0;
		sens_draw(&p, j, &d);
		d.alive = alive;
		sens_name(&p, &d, name, sizeof(name));
		if (only && (strcmp(only, "steps") || d.stride == 0) &&
		    (d.stride > 0 || strcmp(only, p.t[d.redraw].name)))
			continue;
		if (sample_draw(&p, seed, &d, samples, &b, &err) < 0) {
			rc = cli_fail(EXIT_FAIL, "%s", err.s);
			break;
		}
		for (int o = 0; o < p.n_out && o < 64; o++)
			for (int i = 0; i < a.n[o]; i++) {
				double x = a.val[o][i], y = b.val[o][i], df = fabs(x - y);
				total++;
				if (!(df <= p.atol + p.rtol * fabs(y)))
					beyond++;
				if (!(df <= maxd))
					maxd = isfinite(df) ? df : INFINITY;
			}
		sample_free(&b);
		if (as_json)
			printf("{\"tensor\": \"%s\", \"draw\": \"%s\", \"influence\": %s, \"beyond\": %lld, "
			       "\"sampled\": %lld, \"max_diff\": %.6g}\n", name, alive ? "alive" : "spec",
			       beyond ? "true" : "false", beyond, total, isfinite(maxd) ? maxd : 1e300);
		else
			printf("%s %s: %lld of %lld sampled elements beyond the tolerance, max |diff| %.3g\n",
			       beyond ? "influence" : "no influence", name, beyond, total, maxd);
		fflush(stdout);
	}
out:
	sample_free(&a);
	problem_release(&p);
	buf_release(&dir);
	buf_release(&err);
	return rc;
}
