/* Drives the built-in proposer on a spec file, for tests:
 *   builtin_emit render SPEC TEMPLATE [PARAMS-JSON]   print one candidate
 *   builtin_emit ideas SPEC K SEED [HISTORY-JSON]     round 1's idea ids, one per line (a
 *                                                     revisit: "ID revisit", the best-known
 *                                                     plan's: "ID plan"); history:
 *                                                     [{"idea","kernels","correct","best_speedup"}]
 *   builtin_emit all SPEC OUTDIR M SEED               every applicable idea, M impls each,
 *                                                     written as OUTDIR/NNN-idea-i.cu (as a
 *                                                     round after the first: no plan point,
 *                                                     so the render digests keep to templates)
 *   builtin_emit plan SPEC [ARCH]                     the best-known plan: "IDEA TEMPLATE
 *                                                     PARAMS" and its evidence; rendered, and
 *                                                     its idea checked against the catalogue */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/builtin.h"
#include "collector/catalogue.h"
#include "core/fsutil.h"

static json_t *load(const char *path)
{
	json_error_t e;
	json_t *j = json_load_file(path, 0, &e);

	if (!j)
		fprintf(stderr, "%s: %s\n", path, e.text);
	return j;
}

int main(int argc, char **argv)
{
	struct buf err = BUF_INIT, src = BUF_INIT;
	struct proposer pr;
	struct proposer_problem pp;
	struct idea_list ideas;
	struct proposer_record rec;
	json_t *spec, *params = NULL, *hist_json = NULL;
	struct idea_outcome *hist = NULL;
	int rc = 1;

	if (argc < 3)
		return 2;
	spec = load(argv[2]);
	if (!spec)
		return 1;
	memset(&pp, 0, sizeof(pp));
	pp.id = json_string_value(json_object_get(spec, "id"));
	pp.spec = spec;
	builtin_proposer_open(&pr, &err);
	idea_list_init(&ideas);
	proposer_record_init(&rec);
	if (!strcmp(argv[1], "render") && argc >= 4) {
		if (argc >= 5)
			params = json_loads(argv[4], 0, NULL);
		if (builtin_tmpl_render(argv[3], spec, params, &src, &err)) {
			fprintf(stderr, "%s\n", err.s);
			goto out;
		}
		fputs(src.s, stdout);
		rc = 0;
	} else if (!strcmp(argv[1], "plan") && (argc == 3 || argc == 4)) {
		struct builtin_plan bp;
		const struct catalogue_idea *c;
		json_t *pj;
		if (!builtin_best_plan(spec, argc == 4 ? argv[3] : NULL, &bp)) {
			fprintf(stderr, "no plan\n");
			goto out;
		}
		printf("%s %s %s\n%s\n", bp.idea, bp.template_id, bp.params, bp.evidence);
		c = catalogue_find(bp.idea);
		if (!c || !c->template_id || strcmp(c->template_id, bp.template_id) ||
		    !(c->families & family_of_problem(spec)) || builtin_requires(c->requires, spec) != 1) {
			fprintf(stderr, "plan idea %s is no catalogue idea of template %s for this problem\n",
				bp.idea, bp.template_id);
			goto out;
		}
		pj = json_loads(bp.params, 0, NULL);
		if (!json_is_object(pj) || builtin_tmpl_render(bp.template_id, spec, pj, &src, &err)) {
			fprintf(stderr, "%s\n", pj ? err.s : "plan params are not JSON");
			json_decref(pj);
			goto out;
		}
		json_decref(pj);
		rc = 0;
	} else if ((!strcmp(argv[1], "ideas") && (argc == 5 || argc == 6)) ||
		   (!strcmp(argv[1], "all") && argc == 6)) {
		int all = !strcmp(argv[1], "all");
		struct idea_request rq = { &pp, NULL, 0, all ? 1000 : atoi(argv[3]), all ? 2 : 1,
					   strtoull(argv[all ? 5 : 4], NULL, 10) };
		if (!all && argc == 6) {
			hist_json = json_loads(argv[5], 0, NULL);
			hist = calloc(json_array_size(hist_json) + 1, sizeof(*hist));
			if (!json_is_array(hist_json) || !hist)
				goto out;
			for (size_t h = 0; h < json_array_size(hist_json); h++) {
				json_t *x = json_array_get(hist_json, h);
				const struct catalogue_idea *c;
				hist[h].catalogue_id = json_string_value(json_object_get(x, "idea"));
				c = hist[h].catalogue_id ? catalogue_find(hist[h].catalogue_id) : NULL;
				hist[h].categories = c ? c->categories : 0;
				hist[h].round = 1;
				hist[h].kernels = (int)json_integer_value(json_object_get(x, "kernels"));
				hist[h].correct = (int)json_integer_value(json_object_get(x, "correct"));
				hist[h].best_speedup = json_number_value(json_object_get(x, "best_speedup"));
			}
			rq.history = hist;
			rq.n_history = (int)json_array_size(hist_json);
		}
		if (pr.ideas(pr.self, &rq, &ideas, &rec, &err)) {
			fprintf(stderr, "%s\n", err.s);
			goto out;
		}
		for (int i = 0; i < ideas.n; i++) {
			if (!all) {
				printf("%s%s\n", ideas.v[i].catalogue_id,
				       !strncmp(ideas.v[i].text, "Revisit ", 8) ? " revisit" :
				       strstr(ideas.v[i].text, "best-known plan") ? " plan" : "");
				continue;
			}
			struct proposal_list pl;
			struct impl_request ir = { &pp, &ideas.v[i], NULL, 0, atoi(argv[4]), rq.round, rq.seed };
			proposal_list_init(&pl);
			if (pr.implement(pr.self, &ir, &pl, &rec, &err)) {
				fprintf(stderr, "%s\n", err.s);
				proposal_list_release(&pl);
				goto out;
			}
			for (int j = 0; j < pl.n; j++) {
				struct buf path = BUF_INIT;
				if (!pl.v[j].source) {
					fprintf(stderr, "%s: %s\n", ideas.v[i].catalogue_id,
						pl.v[j].format_error);
					proposal_list_release(&pl);
					goto out;
				}
				buf_addf(&path, "%s/%03d-%s-%d.cu", argv[3],
					 (int)json_integer_value(json_object_get(spec, "number")),
					 ideas.v[i].catalogue_id, j);
				if (write_file_atomic(path.s, pl.v[j].source, strlen(pl.v[j].source), &err)) {
					fprintf(stderr, "%s\n", err.s);
					buf_release(&path);
					proposal_list_release(&pl);
					goto out;
				}
				printf("%s\n", path.s);
				buf_release(&path);
			}
			proposal_list_release(&pl);
		}
		rc = 0;
	} else {
		fprintf(stderr, "usage: builtin_emit render|ideas|all ...\n");
		rc = 2;
	}
out:
	free(hist);
	json_decref(hist_json);
	json_decref(params);
	json_decref(spec);
	idea_list_release(&ideas);
	proposer_record_release(&rec);
	buf_release(&src);
	buf_release(&err);
	return rc;
}
