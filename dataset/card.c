/* schema.json, provenance.json and the dataset card (README.md). */
#include "ds_int.h"
#include "dataset.h"
#include "core/json.h"
#include "store/store_export.h"
#include "core/version.h"

#include <archive.h>
#include <sqlite3.h>
#include <string.h>
#include <strings.h>

struct xfield {
	const char *name, *type;
	int nullable;
	const char *doc;
};

static const struct xfield traj_fields[] = {
	{ "run_id", "string", 0, "run id" },
	{ "problem_id", "string", 0, "problem id" },
	{ "gpu_name", "string", 1, "GPU the run evaluated on; null when it only compiled" },
	{ "rounds", "array", 0, "per round: {round, candidates, correct, round_best_time_ms, "
				"best_so_far_time_ms, best_so_far_speedup_eager, best_so_far_candidate_id}" },
	{ "best", "object", 1, "the fastest correct candidate: {candidate_id, round, idea_id, "
			       "kernel_hash, status, time_mean_ms, speedup_eager}" },
	{ "lineage", "array", 0, "from the root to the best candidate along first parents, "
				 "each step like best" },
	{ NULL, NULL, 0, NULL },
};

static const struct xfield sft_fields[] = {
	{ "id", "string", 0, "problem_id/kernel_hash" },
	{ "problem_id", "string", 0, "problem id" },
	{ "kernel_hash", "string", 0, "kernel (data/kernels.jsonl)" },
	{ "kernel_path", "string", 0, "the kernel's file in this tarball" },
	{ "messages", "array", 0, "chat messages [{role, content}]: the prompt (the recorded LLM "
				  "request, or one made from the problem) and the kernel as the assistant's "
				  "```cuda answer" },
	{ "prompt_source", "string", 0, "llm_request or problem" },
	{ "per_gpu", "object", 0, "GPU name -> {eval_id, time_mean_ms, time_median_ms, speedup_eager, "
				  "speedup_compile, verified}" },
	{ "verified_gpus", "array", 0, "every GPU on which the kernel's latest verification says 'verified'" },
	{ "gpu_name", "string", 0, "the GPU of the headline figures: the lowest eager speedup" },
	{ "speedup_eager", "number", 1, "worst-case eager speedup over the GPUs" },
	{ "speedup_compile", "number", 1, "torch.compile speedup on that GPU" },
	{ "time_mean_ms", "number", 1, "mean time on that GPU, ms" },
	{ NULL, NULL, 0, NULL },
};

static const struct xfield pair_fields[] = {
	{ "id", "string", 0, "problem_id/gpu_name/kind/index" },
	{ "problem_id", "string", 0, "problem id" },
	{ "gpu_name", "string", 0, "GPU both kernels were timed on" },
	{ "kind", "string", 0, "faster_vs_slower (both correct, chosen at least 5% faster) or "
			       "correct_vs_incorrect" },
	{ "prompt", "array", 0, "chat messages of the problem prompt" },
	{ "chosen", "array", 0, "[assistant message] with the preferred kernel" },
	{ "rejected", "array", 0, "[assistant message] with the other kernel" },
	{ "chosen_kernel_hash", "string", 0, "preferred kernel" },
	{ "rejected_kernel_hash", "string", 0, "other kernel" },
	{ "chosen_time_mean_ms", "number", 0, "preferred kernel's mean time, ms" },
	{ "chosen_speedup_eager", "number", 1, "its eager speedup" },
	{ "rejected_time_mean_ms", "number", 1, "other kernel's time (null when incorrect)" },
	{ "rejected_speedup_eager", "number", 1, "its eager speedup" },
	{ "rejected_status", "string", 0, "correct, or the failure status of the rejected kernel" },
	{ NULL, NULL, 0, NULL },
};

static const struct xfield table_extras[] = {
	{ "ideas.categories", "array", 0, NULL },
	{ "compiles.kernels", "array", 0, NULL },
	{ "evals.check_trials", "array", 0, NULL },
	{ "evals.time_trials_ms", "array", 0, NULL },
	{ "evals.cupti_trials_ms", "array", 0, NULL },
	{ "evals.speedup_eager", "number", 1, NULL },
	{ "evals.speedup_eager_median", "number", 1, NULL },
	{ "evals.speedup_compile", "number", 1, NULL },
	{ "profiles.kernels", "array", 0, NULL },
	{ NULL, NULL, 0, NULL },
};

static json_t *field(const char *type, int nullable, const char *doc)
{
	return json_pack("{s:s, s:b, s:s}", "type", type, "nullable", nullable, "description",
			 doc ? doc : "(not documented)");
}

static const char *sql_type(const char *decl)
{
	if (strcasestr(decl, "INT"))
		return "integer";
	if (strcasestr(decl, "REAL") || strcasestr(decl, "FLOA") || strcasestr(decl, "DOUB"))
		return "number";
	if (strcasestr(decl, "TEXT") || strcasestr(decl, "CHAR"))
		return "string";
	return "json";
}

static json_t *file_entry(const char *what, const struct xfield *xf)
{
	json_t *o = json_object(), *f = json_object();
	for (int i = 0; xf && xf[i].name; i++)
		json_object_set_new(f, xf[i].name, field(xf[i].type, xf[i].nullable, xf[i].doc));
	json_object_set_new(o, "description", json_string(what));
	json_object_set_new(o, "fields", f);
	return o;
}

int ds_write_schema(struct ds_stage *st, struct buf *err)
{
	json_t *files = json_object(), *out;
	struct buf b = BUF_INIT;
	int ret = -1;

	for (int i = 0; ds_tables[i].file; i++) {
		const char *t = ds_tables[i].table;
		json_t *cols = store_export_columns(st->s, t, err), *c, *fe, *f;
		size_t j, tl = strlen(t);
		if (!cols)
			goto out;
		fe = file_entry(ds_tables[i].what, NULL);
		f = json_object_get(fe, "fields");
		json_array_foreach(cols, j, c) {
			const char *name = jget_str(c, "name", "");
			int nullable = (!jget_int(c, "notnull", 0) && !jget_int(c, "pk", 0)) || ds_gpu_null(name);
			const char *type = ds_json_column(t, name) ? "json" : sql_type(jget_str(c, "type", ""));
			json_object_set_new(f, name, field(type, nullable, ds_field_doc(t, name)));
		}
		for (j = 0; table_extras[j].name; j++)
			if (!strncmp(table_extras[j].name, t, tl) && table_extras[j].name[tl] == '.') {
				const char *name = table_extras[j].name + tl + 1;
				json_object_set_new(f, name, field(table_extras[j].type, table_extras[j].nullable,
								   ds_field_doc(t, name)));
			}
		json_object_set_new(files, ds_tables[i].file, fe);
		json_decref(cols);
	}
	json_object_set_new(files, "data/trajectories.jsonl",
			    file_entry("per run and problem: best-so-far by round and the lineage of the best",
				       traj_fields));
	json_object_set_new(files, "sft.jsonl",
			    file_entry("supervised fine-tuning: one chat per correct (problem, kernel)", sft_fields));
	json_object_set_new(files, "pairs.jsonl",
			    file_entry("preference pairs (TRL conversational prompt/chosen/rejected)", pair_fields));
	out = json_pack("{s:s, s:i, s:o, s:o}", "format", "kforge-dataset", "format_version",
			DATASET_FORMAT_VERSION, "files", files,
			"types", json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}",
					   "string", "JSON string", "integer", "JSON integer",
					   "number", "JSON number, written as a real (2.0; the shortest text "
					   "that reads back to the same double)", "boolean", "true or false",
					   "object", "JSON object", "array", "JSON array",
					   "json", "any JSON value (parsed from a JSON text column)"));
	files = NULL;
	json_add_canonical_pretty(&b, out);
	buf_addc(&b, '\n');
	json_decref(out);
	ret = ds_stage_file(st, "schema.json", b.s, b.len, err);
out:
	json_decref(files);
	buf_release(&b);
	return ret;
}

int ds_write_provenance(struct ds_stage *st, const char *name, const char *version,
			const json_t *filter, struct buf *err)
{
	json_t *p = store_export_provenance(st->s, err);
	struct buf b = BUF_INIT;
	int ret;

	if (!p)
		return -1;
	json_object_set_new(p, "format", json_string("kforge-dataset"));
	json_object_set_new(p, "format_version", json_integer(DATASET_FORMAT_VERSION));
	json_object_set_new(p, "name", json_string(name));
	json_object_set_new(p, "version", json_string(version));
	json_object_set_new(p, "packed_by", json_sprintf("kforge %s", kforge_version()));
	json_object_set_new(p, "sqlite_version", json_string(sqlite3_libversion()));
	json_object_set_new(p, "archiver", json_string(archive_version_string()));
	json_object_set_new(p, "source_date_epoch", json_integer(st->mtime));
	json_object_set(p, "filter", (json_t *)filter);
	json_add_canonical_pretty(&b, p);
	buf_addc(&b, '\n');
	ret = ds_stage_file(st, "provenance.json", b.s, b.len, err);
	buf_release(&b);
	json_decref(st->prov);
	st->prov = p;
	return ret;
}

static const char *size_category(long long n)
{
	return n < 1000 ? "n<1K" : n < 10000 ? "1K<n<10K" : n < 100000 ? "10K<n<100K"
	       : n < 1000000 ? "100K<n<1M" : "1M<n<10M";
}

/* A config per file with rows (loaders refuse an empty file); the first
 * one is the default. */
static void config(struct buf *b, struct ds_stage *st, const char *cname, const char *path,
		   int *have_default)
{
	if (json_integer_value(json_object_get(st->counts, path)) <= 0)
		return;
	buf_addf(b, "- config_name: %s\n  data_files:\n  - split: train\n    path: %s\n", cname, path);
	if (!*have_default)
		buf_adds(b, "  default: true\n");
	*have_default = 1;
}

/* The i-th possible config: its name and file, in the card's order; 0 past
 * the last. */
static int config_at(int i, char name[64], const char **path)
{
	int nt = 0;

	while (ds_tables[nt].file)
		nt++;
	if (i == 0 || i == 1) {
		snprintf(name, 64, "%s", i ? "pairs" : "sft");
		*path = i ? "pairs.jsonl" : "sft.jsonl";
	} else if (i - 2 < nt) {
		const char *f = ds_tables[i - 2].file + 5; /* after "data/" */
		snprintf(name, 64, "%.*s", (int)(strlen(f) - 6), f);
		*path = ds_tables[i - 2].file;
	} else if (i - 2 == nt) {
		snprintf(name, 64, "trajectories");
		*path = "data/trajectories.jsonl";
	} else {
		return 0;
	}
	return 1;
}

/* dataset_info: each config's column types, so that `datasets` casts every
 * batch of a big file to them rather than to the first batch's. */
static void features(struct buf *b, struct ds_stage *st)
{
	struct buf f = BUF_INIT;
	const char *path;
	char cn[64];

	for (int i = 0; config_at(i, cn, &path); i++) {
		size_t len = f.len;
		if (json_integer_value(json_object_get(st->counts, path)) <= 0)
			continue;
		buf_addf(&f, "- config_name: %s\n", cn);
		if (ds_features_yaml(&f, json_object_get(st->types, path), 2) < 0)
			buf_truncate(&f, len);
	}
	if (f.len)
		buf_addf(b, "dataset_info:\n%s", f.s);
	buf_release(&f);
}

static void count_row(struct buf *b, struct ds_stage *st, const char *path, const char *what)
{
	buf_addf(b, "| `%s` | %lld | %s |\n", path,
		 (long long)json_integer_value(json_object_get(st->counts, path)), what);
}

int ds_write_card(struct ds_stage *st, const char *name, const char *version,
		  const char *license, struct buf *err)
{
	struct buf b = BUF_INIT;
	json_t *v, *gpus = json_object_get(st->prov, "gpus");
	size_t i;
	int ret;

	buf_addf(&b, "---\nlicense: %s\npretty_name: \"kforge %s %s\"\nlanguage:\n- en\n", license, name,
		 version);
	buf_adds(&b, "tags:\n- cuda\n- gpu-kernels\n- code\n- kernelbench\n- kforge\n");
	buf_adds(&b, "task_categories:\n- text-generation\n");
	buf_addf(&b, "size_categories:\n- %s\n",
		 size_category((long long)json_integer_value(json_object_get(st->counts, "sft.jsonl"))));
	{
		struct buf cf = BUF_INIT;
		int have_default = 0;
		const char *path;
		char cn[64];
		for (int c = 0; config_at(c, cn, &path); c++)
			config(&cf, st, cn, path, &have_default);
		if (cf.len)
			buf_addf(&b, "configs:\n%s", cf.s);
		buf_release(&cf);
		features(&b, st);
	}
	buf_adds(&b, "---\n\n");
	buf_addf(&b, "# kforge dataset `%s` %s\n\n", name, version);
	buf_adds(&b, "Searches for fast CUDA kernels on KernelBench problems, recorded by kforge: every "
		     "idea, kernel, prompt, response, compile log, correctness result and timing, and the "
		     "re-verification of the best kernels on each GPU. Kernels are CUDA C++ compiled by "
		     "NVRTC with a launch block (`/*@launch ... @*/`) that kforge executes.\n\n");
	{
		json_t *f = json_object_get(st->prov, "filter"), *p = json_object_get(f, "problems"), *x;
		size_t j;
		buf_addf(&b, "Data recorded from %s to %s. ",
			 jget_str(st->prov, "first_created_at", "(none)"),
			 jget_str(st->prov, "last_created_at", "(none)"));
		if (!jget_bool(f, "only_verified", 0) && !json_is_array(p)) {
			buf_adds(&b, "Packed from the whole store.\n\n");
		} else {
			buf_adds(&b, "Packed with a filter:");
			if (jget_bool(f, "only_verified", 0))
				buf_adds(&b, " only kernels verified on at least one GPU;");
			if (json_is_array(p)) {
				buf_adds(&b, " problems");
				json_array_foreach(p, j, x)
					buf_addf(&b, " `%s`", json_string_value(x));
				buf_adds(&b, ";");
			}
			buf_truncate(&b, b.len - 1);
			buf_adds(&b, ".\n\n");
		}
	}
	buf_adds(&b, "## Contents\n\n| file | rows | what |\n|---|---:|---|\n");
	count_row(&b, st, "sft.jsonl", "chat messages (prompt + correct kernel) with speedups");
	count_row(&b, st, "pairs.jsonl", "preference pairs: faster vs slower, correct vs incorrect");
	for (int t = 0; ds_tables[t].file; t++)
		count_row(&b, st, ds_tables[t].file, ds_tables[t].what);
	count_row(&b, st, "data/trajectories.jsonl", "best-so-far by round and lineage per run and problem");
	buf_adds(&b, "\nAlso: `kernels/<problem>/<kernel_hash>.cu` (every kernel file), `kforge.db` (the "
		     "SQLite store these files were exported from), `schema.json` (every field, its type "
		     "and meaning), `provenance.json` (versions, GPUs, drivers, dates) and `SHA256SUMS`. "
		     "Each file with rows is a config of this card (an empty file is none; the first is "
		     "the default).\n\n"
		     "Every field has one JSON shape in all rows, so that Arrow (and `datasets`) infers "
		     "one column type: a real is always written as a real (`2.0`, never `2`), as the "
		     "shortest text that reads back to the same double; a GPU name is null, not \"\", "
		     "for compile-only rows; in `problems.spec` every `init_args` value is a list, every "
		     "dimension of a shape a string (`\"batch_size\"`, `\"11\"`), `dist.post` a list "
		     "(`schema.json` has the details). The `dataset_info` above gives each config's "
		     "column types.\n\n");
	buf_adds(&b, "## Protocol\n\nCorrectness: fresh inputs per trial from their own seed, tolerance "
		     "per precision class (fp32 atol = rtol = 1e-4), NaN fails; outputs poisoned before "
		     "each run and checked whole, inputs checksummed after. Timing: warm-ups, then timed "
		     "trials with the L2 flushed before each, CUDA events around the launch block plus CUPTI "
		     "kernel durations. Speedup = PyTorch baseline mean time / kernel mean time on the same "
		     "GPU (KernelBench's definition). Every protocol parameter is stored with each "
		     "evaluation (`protocol_params`). Verification (verify-vN) adds more seeds and input "
		     "distributions, repeated runs that must agree, and longer timing; verify-v2 bounds "
		     "its wide uniform draw per operator where fp32 cannot hold 1e-4 at magnitude 100 "
		     "(cumprod U[-2,2), attention U[-4,4); verify-v1: U[-100,100) for all).\n\nProtocols in this "
		     "dataset:");
	json_array_foreach(json_object_get(st->prov, "protocols"), i, v)
		buf_addf(&b, " `%s`", json_string_value(v));
	buf_adds(&b, "\n\n## GPUs\n\n| GPU | arch | driver | CUDA | verified kernels |\n|---|---|---|---|---:|\n");
	json_array_foreach(gpus, i, v) {
		const char *g = jget_str(v, "name", "");
		long long nv = 0;
		size_t j;
		json_t *w;
		json_array_foreach(json_object_get(st->prov, "verified_per_gpu"), j, w)
			if (!strcmp(jget_str(w, "gpu_name", ""), g))
				nv = jget_int(w, "kernels", 0);
		buf_addf(&b, "| %s | %s | %s | %s | %lld |\n", g, jget_str(v, "arch", ""),
			 jget_str(v, "driver", ""), jget_str(v, "cuda_version", ""), nv);
	}
	buf_adds(&b, "\n## How to load\n\n```python\nfrom datasets import load_dataset\n"
		     "sft = load_dataset(\"json\", data_files=\"sft.jsonl\", split=\"train\")\n"
		     "evals = load_dataset(\"json\", data_files=\"data/evaluations.jsonl\", split=\"train\")\n"
		     "# or, from a directory holding this card: load_dataset(PATH) (the default "
		     "config), load_dataset(PATH, \"pairs\")\n\n"
		     "import pandas as pd\nproblems = pd.read_json(\"data/problems.jsonl\", lines=True)\n\n"
		     "import sqlite3\ndb = sqlite3.connect(\"kforge.db\")  # the full store\n```\n\n");
	buf_adds(&b, "## Checking\n\n`kforge dataset verify FILE.tar.zst` checks every checksum, every "
		     "line against `schema.json` and the counts above; `sha256sum -c SHA256SUMS` checks the "
		     "files. The same store and version always pack to the same bytes.\n");
	ret = ds_stage_file(st, "README.md", b.s, b.len, err);
	buf_release(&b);
	return ret;
}
