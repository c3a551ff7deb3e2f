#include "cmds.h"
#include "core/json.h"
#include "store/store.h"
#include "store/store_eval.h"
#include "store/store_report.h"
#include "site/report_md.h"

#include <stdlib.h>
#include <string.h>

static void fmt_speed(struct buf *b, const json_t *speedup, const json_t *ms)
{
	if (json_is_number(speedup))
		buf_addf(b, "%.2fx", json_number_value(speedup));
	else if (json_is_number(ms))
		buf_addf(b, "%.4f ms", json_number_value(ms));
	else
		buf_adds(b, "-");
}

/* Text from the store (model output, names, ids) is printed as the site's
 * Markdown reports print it (md_escape, md_code): inert for Markdown
 * renderers, and with every control character (ESC, OSC, C1, bidi
 * overrides) replaced, so none reaches the terminal. */
static void pe(const char *s)
{
	struct buf b = BUF_INIT;
	md_escape(&b, s ? s : "");
	fputs(b.s, stdout);
	buf_release(&b);
}

static void pe_str(const json_t *o, const char *key, const char *def)
{
	pe(jget_str(o, key, def));
}

static void print_problem(const json_t *r, struct store *store)
{
	const json_t *run = json_object_get(r, "run"), *st = json_object_get(r, "stats");
	const json_t *best = json_object_get(r, "best"), *x;
	const json_t *prob = json_object_get(r, "problem");
	struct buf b = BUF_INIT;
	const char *gpu = jget_str(run, "gpu_name", "");
	long long kernels = jget_int(st, "kernels", 0), correct = jget_int(st, "correct", 0);
	size_t i;

	printf("# Search report: ");
	pe_str(prob, "id", "");
	printf("\n\n- Problem: ");
	pe_str(prob, "id", "");
	printf(" (");
	pe_str(prob, "name", "?");
	printf(")\n- GPU: ");
	pe(*gpu ? gpu : "none (compile only)");
	printf("\n- Model: ");
	pe_str(run, "model", "-");
	printf(" (proposer ");
	pe_str(run, "proposer", "");
	printf(")\n- Rounds: %lld (", (long long)jget_int(run, "rounds", 0));
	pe_str(run, "strategy", "");
	printf(" strategy, seed %lld)\n- Run: ", (long long)jget_int(run, "seed", 0));
	pe_str(run, "id", "");
	printf(" (");
	pe_str(run, "status", "");
	printf(")\n\n");
	printf("## Statistics\n\n");
	printf("- Kernels generated: %lld\n", kernels);
	printf("- Compiled: %lld\n", (long long)jget_int(st, "compiled", 0));
	printf("- Correct: %lld (%.1f%%)\n", correct, kernels ? 100.0 * (double)correct / (double)kernels : 0.0);
	fmt_speed(&b, json_object_get(st, "best_speedup"), json_object_get(st, "best_ms"));
	printf("- Best speedup: %s\n\n", b.s);
	printf("## Rounds\n\n| Round | Kernels | Compiled | Correct | Best |\n|------:|--------:|---------:|--------:|-----:|\n");
	json_array_foreach(json_object_get(r, "rounds"), i, x) {
		buf_reset(&b);
		fmt_speed(&b, json_object_get(x, "best_speedup"), json_object_get(x, "best_ms"));
		printf("| %lld%s | %lld | %lld | %lld | %s |\n", (long long)jget_int(x, "round", 0),
		       !strcmp(jget_str(x, "status", "done"), "open") ? " (open)" : "",
		       (long long)jget_int(x, "kernels", 0), (long long)jget_int(x, "compiled", 0),
		       (long long)jget_int(x, "correct", 0), b.s);
	}
	printf("\n## Best kernel\n\n");
	if (!json_is_object(best)) {
		printf("No correct kernel%s.\n", json_array_size(json_object_get(r, "excluded"))
							 ? " that passed verification" : "");
	} else {
		const json_t *idea = json_object_get(best, "idea"), *v = json_object_get(best, "verified_on");
		printf("- ID: ");
		pe_str(best, "id", "");
		printf("\n- Round: %lld\n", (long long)jget_int(best, "round", 0));
		buf_reset(&b);
		fmt_speed(&b, json_object_get(best, "speedup"), NULL);
		printf("- Speedup: %s\n", b.s);
		if (json_is_number(json_object_get(best, "time_ms")))
			printf("- Runtime: %.4f ms\n", jget_num(best, "time_ms", 0));
		else
			printf("- Runtime: not timed\n");
		printf("- Verified on: ");
		if (!json_array_size(v))
			printf("not verified yet");
		json_array_foreach(v, i, x) {
			printf("%s", i ? ", " : "");
			pe(json_string_value(x));
		}
		printf("\n- Kernel hash: ");
		pe_str(best, "kernel_hash", "");
		printf("\n");
		if (json_is_object(idea)) {
			printf("\n### Idea ");
			pe_str(idea, "id", "");
			printf("\n\nCategories:");
			json_array_foreach(json_object_get(idea, "categories"), i, x) {
				printf("%s ", i ? "," : "");
				pe_str(x, "category", "");
				printf(" (");
				pe_str(x, "method", "");
				printf(")");
			}
			printf("\n\n");
			pe_str(idea, "text", "");
			printf("\n");
		} else {
			printf("\nThe problem's reference kernel (no idea).\n");
		}
		if (store) {
			struct buf src = BUF_INIT, e2 = BUF_INIT;
			if (store_kernel_source(store, jget_str(best, "kernel_hash", ""), &src, &e2) == 1) {
				buf_reset(&b);
				md_code(&b, "cuda", src.s);
				printf("\n### Source\n\n%s", b.s);
			}
			buf_release(&src);
			buf_release(&e2);
		}
	}
	if (json_is_object(best)) {
		buf_reset(&b);
		buf_adds(&b, "\n## Profile of the best kernel\n\n");
		report_md_profile(&b, json_object_get(best, "profile"));
		buf_adds(&b, "\n## Chain of ideas\n\n");
		report_md_chain(&b, json_object_get(r, "chain"));
		fputs(b.s, stdout);
	}
	if (json_array_size(json_object_get(r, "excluded"))) {
		printf("\nExcluded (failed verification, or passed with a review flag):");
		json_array_foreach(json_object_get(r, "excluded"), i, x) {
			printf(" ");
			pe(json_string_value(x));
		}
		printf("\n");
	}
	buf_release(&b);
}

static void print_run(const json_t *r)
{
	const json_t *run = json_object_get(r, "run"), *x;
	struct buf b = BUF_INIT;
	size_t i;

	printf("# Run ");
	pe_str(run, "id", "");
	printf(" (");
	pe_str(run, "status", "");
	printf(")\n\n- Strategy: ");
	pe_str(run, "strategy", "");
	printf(", %lld rounds, seed %lld\n- Proposer: ", (long long)jget_int(run, "rounds", 0),
	       (long long)jget_int(run, "seed", 0));
	pe_str(run, "proposer", "");
	printf(", model ");
	pe_str(run, "model", "-");
	printf("\n- GPU: ");
	pe(*jget_str(run, "gpu_name", "") ? jget_str(run, "gpu_name", "") : "none (compile only)");
	printf("\n\n| Problem | Kernels | Compiled | Correct | Best |\n|---|--:|--:|--:|--:|\n");
	json_array_foreach(json_object_get(r, "problems"), i, x) {
		buf_reset(&b);
		fmt_speed(&b, json_object_get(x, "best_speedup"), json_object_get(x, "best_ms"));
		printf("| ");
		pe_str(x, "id", "");
		printf(" | %lld | %lld | %lld | %s |\n", (long long)jget_int(x, "kernels", 0),
		       (long long)jget_int(x, "compiled", 0), (long long)jget_int(x, "correct", 0), b.s);
	}
	buf_release(&b);
}

static void print_gpus(const json_t *r)
{
	const json_t *gpus = json_object_get(r, "gpus"), *g, *p;
	struct buf b = BUF_INIT;
	size_t i, j;

	printf("| Problem |");
	json_array_foreach(gpus, i, g) {
		printf(" ");
		pe(json_string_value(g));
		printf(" |");
	}
	printf("\n|---|");
	json_array_foreach(gpus, i, g)
		printf("--:|");
	printf("\n");
	json_array_foreach(json_object_get(r, "problems"), j, p) {
		printf("| ");
		pe_str(p, "id", "");
		printf(" |");
		json_array_foreach(gpus, i, g) {
			const json_t *e = json_object_get(json_object_get(p, "best"), json_string_value(g));
			buf_reset(&b);
			if (e)
				fmt_speed(&b, json_object_get(e, "speedup"), json_object_get(e, "time_ms"));
			else
				buf_adds(&b, "-");
			printf(" %s |", b.s);
		}
		printf("\n");
	}
	if (!json_array_size(json_object_get(r, "problems")))
		printf("\nNo verified kernels in the store (run kforge verify on each GPU).\n");
	buf_release(&b);
}

int cmd_report(int argc, char **argv, struct cli_ctx *ctx)
{
	struct store st;
	struct buf err = BUF_INIT, id = BUF_INIT, copy = BUF_INIT;
	const char *run_id = NULL, *problem = NULL;
	int gpus = 0, as_json = 0, rc = EXIT_FAIL, source = 0, n;
	json_t *r = NULL;
	struct cli_opt opts[] = {
		OPT_STR("run", 0, &run_id, "ID", "the run to report (default: the latest)"),
		OPT_FLAG("source", 0, &source, "also print the best kernel's source"),
		OPT_FLAG("gpus", 0, &gpus, "per problem, the best verified kernel's speedup on each GPU"),
		OPT_FLAG("json", 0, &as_json, "the same as JSON"),
		OPT_END,
	};
	struct cli_spec spec = { "report", "[PROBLEM] [--run ID] [--source] [--json]\n--gpus [--json]",
		"PROBLEM (\"23\", \"Softmax\", \"level1/023_Softmax\", \"23_Softmax.py\"): one problem's\n"
		"search: header, statistics, one line per round and the best kernel with its\n"
		"idea, its profile and the chain of ideas that led to it, round by round.\n"
		"Without PROBLEM: a summary of the run, one line per problem.\n", opts,
		"Kernels that failed verification are never reported as best.\n", 0, NULL, NULL };

	if ((rc = cli_parse(&spec, argc, argv, ctx, &n)) != CLI_GO)
		return rc;
	rc = EXIT_FAIL;
	if (n > 1)
		return cli_fail(EXIT_USAGE, "report: one problem at a time (got '%s' too)", argv[2]);
	if (n == 1)
		problem = argv[1];
	if (gpus && problem)
		return cli_fail(EXIT_USAGE, "report: --gpus covers every problem; give no PROBLEM");
	/* An older store is read through a migrated copy (store.h). */
	if (store_current_copy(ctx->db_path, NULL, &copy, &err) < 0 ||
	    store_open(&st, copy.len ? copy.s : ctx->db_path, STORE_READONLY, &err) < 0) {
		rc = cli_fail(EXIT_FAIL, "%s", err.s);
		store_copy_remove(copy.s);
		buf_release(&copy);
		buf_release(&err);
		return rc;
	}
	if (gpus) {
		r = store_report_gpus(&st, &err);
	} else if (problem) {
		int f = store_report_find_problem(&st, problem, &id, &err);
		if (f == PROBLEM_UNKNOWN) {
			rc = cli_fail(EXIT_USAGE, "report: %s", err.s);
			goto out;
		}
		if (f == 0)
			r = store_report_problem(&st, id.s, run_id, &err);
	} else {
		r = store_report_run(&st, run_id, &err);
	}
	if (!r) {
		rc = cli_fail(EXIT_FAIL, "report: %s", err.s);
		goto out;
	}
	if (as_json) {
		/* \u escapes for everything past ASCII: no bidi override or C1
		 * control reaches the terminal raw */
		char *o = json_dumps(r, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
		printf("%s\n", o ? o : "null");
		free(o);
	} else if (gpus) {
		print_gpus(r);
	} else if (problem) {
		print_problem(r, source ? &st : NULL);
	} else {
		print_run(r);
	}
	rc = EXIT_OK;
out:
	json_decref(r);
	store_close(&st);
	store_copy_remove(copy.s);
	buf_release(&copy);
	buf_release(&err);
	buf_release(&id);
	return rc;
}
