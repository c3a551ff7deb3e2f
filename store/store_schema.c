#include "store_schema.h"

#include <stddef.h>

/* Times are ISO-8601 UTC text ("2026-11-22T05:31:57Z"). JSON columns hold
 * compact JSON text. Times in milliseconds, sizes in bytes. */
static const char schema_v1[] =
"CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);\n"

/* One row per GPU model; measured ceilings for the roofline. */
"CREATE TABLE gpus(\n"
"  name TEXT PRIMARY KEY,\n"
"  arch TEXT, sm_count INTEGER, memory_bytes INTEGER, l2_bytes INTEGER,\n"
"  peak_bw_gbs REAL, peak_fp32_tflops REAL,\n"
"  driver TEXT, cuda_version TEXT, first_seen TEXT NOT NULL);\n"

"CREATE TABLE problems(\n"
"  id TEXT PRIMARY KEY,                    -- 'level1/023_Softmax'\n"
"  level INTEGER NOT NULL, number INTEGER NOT NULL, name TEXT NOT NULL,\n"
"  kernelbench_file TEXT, family TEXT, op TEXT,\n"
"  spec TEXT NOT NULL, spec_sha256 TEXT NOT NULL, torch_text TEXT,\n"
"  flops REAL, min_bytes REAL);\n"

"CREATE TABLE runs(\n"
"  id TEXT PRIMARY KEY,\n"
"  created_at TEXT NOT NULL, finished_at TEXT,\n"
"  status TEXT NOT NULL CHECK(status IN ('running','finished','failed','stopped')),\n"
"  strategy TEXT NOT NULL, proposer TEXT NOT NULL, model TEXT,\n"
"  seed INTEGER NOT NULL, config TEXT NOT NULL,   -- budgets, protocol (JSON)\n"
"  gpu_name TEXT, kforge_version TEXT NOT NULL);\n"

"CREATE TABLE rounds(\n"
"  run_id TEXT NOT NULL REFERENCES runs(id), problem_id TEXT NOT NULL REFERENCES problems(id),\n"
"  round INTEGER NOT NULL, status TEXT NOT NULL CHECK(status IN ('open','done')),\n"
"  started_at TEXT NOT NULL, finished_at TEXT, best_candidate TEXT,\n"
"  PRIMARY KEY(run_id, problem_id, round));\n"

"CREATE TABLE llm_calls(\n"
"  id TEXT PRIMARY KEY,\n"
"  run_id TEXT NOT NULL REFERENCES runs(id), problem_id TEXT REFERENCES problems(id),\n"
"  round INTEGER, purpose TEXT NOT NULL CHECK(purpose IN ('ideas','implement','repair')),\n"
"  proposer TEXT NOT NULL, model TEXT, request TEXT NOT NULL, response TEXT,\n"
"  request_sha256 TEXT,                    -- response-cache key (replay)\n"
"  http_status INTEGER, error TEXT,\n"
"  prompt_tokens INTEGER, completion_tokens INTEGER, reasoning_tokens INTEGER,\n"
"  latency_ms REAL, retries INTEGER NOT NULL DEFAULT 0, cached INTEGER NOT NULL DEFAULT 0,\n"
"  created_at TEXT NOT NULL);\n"

"CREATE TABLE ideas(\n"
"  id TEXT PRIMARY KEY,\n"
"  run_id TEXT NOT NULL REFERENCES runs(id), problem_id TEXT NOT NULL REFERENCES problems(id),\n"
"  round INTEGER NOT NULL, text TEXT NOT NULL,\n"
"  source TEXT NOT NULL,                   -- 'llm' or 'builtin'\n"
"  catalogue_id TEXT, parent_ids TEXT NOT NULL DEFAULT '[]',\n"
"  llm_call_id TEXT REFERENCES llm_calls(id), created_at TEXT NOT NULL);\n"

"CREATE TABLE idea_categories(\n"
"  idea_id TEXT NOT NULL REFERENCES ideas(id),\n"
"  category TEXT NOT NULL CHECK(category IN ('memory','async','precision','compute','parallelism','control')),\n"
"  method TEXT NOT NULL CHECK(method IN ('model','keyword','catalogue')),\n"
"  PRIMARY KEY(idea_id, category));\n"

/* Content-addressed candidate files: identical candidates are stored and
 * evaluated once. hash = candidate_hash() of the canonical form. */
"CREATE TABLE kernels(\n"
"  hash TEXT PRIMARY KEY, source TEXT NOT NULL, bytes INTEGER NOT NULL,\n"
"  created_at TEXT NOT NULL);\n"

/* A kernel as the search produced it: where it came from. */
"CREATE TABLE candidates(\n"
"  id TEXT PRIMARY KEY,                    -- kernel_r1_idea_r1_2b1e23a7_0_f47082\n"
"  run_id TEXT NOT NULL REFERENCES runs(id), problem_id TEXT NOT NULL REFERENCES problems(id),\n"
"  round INTEGER NOT NULL, idea_id TEXT REFERENCES ideas(id), impl_index INTEGER NOT NULL,\n"
"  kernel_hash TEXT REFERENCES kernels(hash),   -- NULL when the response was malformed\n"
"  parent_ids TEXT NOT NULL DEFAULT '[]', template_id TEXT, params TEXT,\n"
"  llm_call_id TEXT REFERENCES llm_calls(id),\n"
"  status TEXT NOT NULL DEFAULT 'pending',  -- pending or an eval status\n"
"  detail TEXT, created_at TEXT NOT NULL);\n"

"CREATE TABLE compiles(\n"
"  id TEXT PRIMARY KEY,                    -- sha256(kernel_hash|arch|options)\n"
"  kernel_hash TEXT NOT NULL REFERENCES kernels(hash),\n"
"  arch TEXT NOT NULL, options TEXT NOT NULL, nvrtc_version TEXT,\n"
"  status TEXT NOT NULL CHECK(status IN ('ok','format_error','compile_error')),\n"
"  message TEXT, log TEXT, duration_ms REAL, created_at TEXT NOT NULL);\n"

"CREATE TABLE compile_kernels(\n"
"  compile_id TEXT NOT NULL REFERENCES compiles(id), kernel_name TEXT NOT NULL,\n"
"  registers INTEGER, shared_bytes INTEGER, spill_store_bytes INTEGER,\n"
"  spill_load_bytes INTEGER, stack_bytes INTEGER, const_bytes INTEGER,\n"
"  PRIMARY KEY(compile_id, kernel_name));\n"

/* One evaluation of a kernel on a GPU model under a protocol. */
"CREATE TABLE evals(\n"
"  id TEXT PRIMARY KEY,                    -- sha256(kernel_hash|problem|gpu|protocol)\n"
"  kernel_hash TEXT NOT NULL REFERENCES kernels(hash),\n"
"  problem_id TEXT NOT NULL REFERENCES problems(id),\n"
"  gpu_name TEXT NOT NULL, protocol TEXT NOT NULL, protocol_params TEXT NOT NULL,\n"
"  status TEXT NOT NULL CHECK(status IN ('format_error','compile_error','launch_error',\n"
"    'runtime_error','timeout','incorrect','correct','not_run')),\n"
"  failed_check TEXT, detail TEXT,\n"
"  max_abs_err REAL, max_rel_err REAL, mismatches INTEGER,\n"
"  time_mean_ms REAL, time_median_ms REAL, time_std_ms REAL, time_min_ms REAL,\n"
"  time_max_ms REAL, cupti_mean_ms REAL, cupti_median_ms REAL, n_trials INTEGER,\n"
"  env TEXT,                               -- clocks, temperature, driver (JSON)\n"
"  created_at TEXT NOT NULL);\n"

"CREATE TABLE eval_trials(\n"
"  eval_id TEXT NOT NULL REFERENCES evals(id),\n"
"  kind TEXT NOT NULL CHECK(kind IN ('check','time')), idx INTEGER NOT NULL,\n"
"  seed INTEGER, time_ms REAL, cupti_ms REAL,\n"
"  max_abs_err REAL, max_rel_err REAL, mismatches INTEGER, ok INTEGER,\n"
"  PRIMARY KEY(eval_id, kind, idx));\n"

"CREATE TABLE verifications(\n"
"  id TEXT PRIMARY KEY,\n"
"  eval_id TEXT NOT NULL REFERENCES evals(id),\n"
"  kernel_hash TEXT NOT NULL REFERENCES kernels(hash),\n"
"  problem_id TEXT NOT NULL REFERENCES problems(id),\n"
"  gpu_name TEXT NOT NULL, protocol TEXT NOT NULL,\n"
"  verdict TEXT NOT NULL CHECK(verdict IN ('verified','failed')),\n"
"  failed_check TEXT, review_flags TEXT NOT NULL DEFAULT '[]',\n"
"  sanitizer TEXT, env TEXT NOT NULL, kforge_version TEXT NOT NULL,\n"
"  created_at TEXT NOT NULL);\n"

"CREATE TABLE baselines(\n"
"  problem_id TEXT NOT NULL REFERENCES problems(id), gpu_name TEXT NOT NULL,\n"
"  variant TEXT NOT NULL CHECK(variant IN ('eager','compile')),\n"
"  mean_ms REAL NOT NULL, std_ms REAL, min_ms REAL, max_ms REAL, median_ms REAL,\n"
"  num_trials INTEGER, hardware TEXT, device TEXT, source TEXT, imported_at TEXT NOT NULL,\n"
"  PRIMARY KEY(problem_id, gpu_name, variant));\n"

"CREATE INDEX candidates_by_problem ON candidates(problem_id, run_id, round);\n"
"CREATE INDEX candidates_by_kernel ON candidates(kernel_hash);\n"
"CREATE INDEX ideas_by_problem ON ideas(problem_id, run_id, round);\n"
"CREATE INDEX evals_by_kernel ON evals(kernel_hash, problem_id, gpu_name);\n"
"CREATE INDEX evals_by_problem ON evals(problem_id, gpu_name, status);\n"
"CREATE INDEX verifications_by_kernel ON verifications(kernel_hash, gpu_name);\n"
"CREATE INDEX compiles_by_kernel ON compiles(kernel_hash);\n"
"CREATE INDEX llm_calls_by_run ON llm_calls(run_id, problem_id, round);\n"
"CREATE INDEX llm_calls_by_request ON llm_calls(request_sha256);\n"

/* Speedups are derived, never stored: baselines may arrive later. */
"CREATE VIEW eval_speedups AS\n"
"  SELECT e.id AS eval_id, e.kernel_hash, e.problem_id, e.gpu_name, e.protocol, e.status,\n"
"    e.time_mean_ms, e.time_median_ms,\n"
"    be.mean_ms / e.time_mean_ms AS speedup_eager,\n"
"    be.median_ms / e.time_median_ms AS speedup_eager_median,\n"
"    bc.mean_ms / e.time_mean_ms AS speedup_compile\n"
"  FROM evals e\n"
"  LEFT JOIN baselines be ON be.problem_id = e.problem_id AND be.gpu_name = e.gpu_name AND be.variant = 'eager'\n"
"  LEFT JOIN baselines bc ON bc.problem_id = e.problem_id AND bc.gpu_name = e.gpu_name AND bc.variant = 'compile';\n";

/* v2: every attempt of an LLM call is kept. The call's id holds its latest
 * attempt (the one ideas and candidates reference); each earlier, failed
 * attempt is kept as ID#N with attempt = N and retry_of = ID (a resumed
 * search used to overwrite them). */
static const char schema_v2[] =
"ALTER TABLE llm_calls ADD COLUMN attempt INTEGER NOT NULL DEFAULT 1;\n"
"ALTER TABLE llm_calls ADD COLUMN retry_of TEXT REFERENCES llm_calls(id);\n"
"CREATE INDEX llm_calls_by_retry ON llm_calls(retry_of);\n";

/* v3: baseline variant eager_notf32 (eager with TF32 off for matmul and
 * cuDNN). SQLite cannot change a CHECK: the table is rebuilt, and the view
 * that reads it is dropped first (a rename would rewrite it) and made again,
 * as in v1. */
static const char schema_v3[] =
"DROP VIEW IF EXISTS eval_speedups;\n"
"CREATE TABLE baselines_v3(\n"
"  problem_id TEXT NOT NULL REFERENCES problems(id), gpu_name TEXT NOT NULL,\n"
"  variant TEXT NOT NULL CHECK(variant IN ('eager','eager_notf32','compile')),\n"
"  mean_ms REAL NOT NULL, std_ms REAL, min_ms REAL, max_ms REAL, median_ms REAL,\n"
"  num_trials INTEGER, hardware TEXT, device TEXT, source TEXT, imported_at TEXT NOT NULL,\n"
"  PRIMARY KEY(problem_id, gpu_name, variant));\n"
"INSERT INTO baselines_v3 SELECT problem_id, gpu_name, variant, mean_ms, std_ms, min_ms, max_ms,\n"
"  median_ms, num_trials, hardware, device, source, imported_at FROM baselines;\n"
"DROP TABLE baselines;\n"
"ALTER TABLE baselines_v3 RENAME TO baselines;\n"
"CREATE VIEW eval_speedups AS\n"
"  SELECT e.id AS eval_id, e.kernel_hash, e.problem_id, e.gpu_name, e.protocol, e.status,\n"
"    e.time_mean_ms, e.time_median_ms,\n"
"    be.mean_ms / e.time_mean_ms AS speedup_eager,\n"
"    be.median_ms / e.time_median_ms AS speedup_eager_median,\n"
"    bc.mean_ms / e.time_mean_ms AS speedup_compile\n"
"  FROM evals e\n"
"  LEFT JOIN baselines be ON be.problem_id = e.problem_id AND be.gpu_name = e.gpu_name AND be.variant = 'eager'\n"
"  LEFT JOIN baselines bc ON bc.problem_id = e.problem_id AND bc.gpu_name = e.gpu_name AND bc.variant = 'compile';\n";

/* v4: every HTTP attempt of an LLM call, not only the last: a JSON array
 * [{n, http_status, class, error, start_ms, ms}] (NULL: no HTTP, as for
 * cached calls and the built-in proposer). */
static const char schema_v4[] =
"ALTER TABLE llm_calls ADD COLUMN attempts TEXT;\n";

/* v5: a hardware-counter profile of one extra launch block of an
 * evaluation (CUPTI's range profiler, docs/engine.md "Profiles"), taken
 * apart from the timed trials. Block-level figures are over the block's
 * kernels (bytes summed, percentages weighted by duration); limiter names
 * what bounds the kernel: memory, compute, latency or launch (count). */
static const char schema_v5[] =
"CREATE TABLE profiles(\n"
"  eval_id TEXT PRIMARY KEY REFERENCES evals(id),\n"
"  kernel_hash TEXT NOT NULL REFERENCES kernels(hash),\n"
"  problem_id TEXT NOT NULL REFERENCES problems(id),\n"
"  gpu_name TEXT NOT NULL,\n"
"  limiter TEXT NOT NULL CHECK(limiter IN ('memory','compute','latency','launch')),\n"
"  launches INTEGER NOT NULL, kernel_ms REAL,\n"
"  dram_read_bytes INTEGER, dram_write_bytes INTEGER, dram_pct REAL, l2_hit_pct REAL,\n"
"  sm_pct REAL, tensor_pct REAL, occupancy_pct REAL,\n"
"  cost_ms REAL NOT NULL, tool TEXT NOT NULL, created_at TEXT NOT NULL);\n"
"CREATE TABLE profile_kernels(\n"
"  eval_id TEXT NOT NULL REFERENCES profiles(eval_id), idx INTEGER NOT NULL,\n"
"  name TEXT NOT NULL, duration_ms REAL,\n"
"  dram_read_bytes INTEGER, dram_write_bytes INTEGER, dram_pct REAL, l2_hit_pct REAL,\n"
"  sm_pct REAL, tensor_pct REAL, occupancy_pct REAL,\n"
"  registers INTEGER, shared_bytes INTEGER, block_threads INTEGER, grid_blocks INTEGER,\n"
"  limiter TEXT NOT NULL CHECK(limiter IN ('memory','compute','latency','launch')),\n"
"  PRIMARY KEY(eval_id, idx));\n";

/* v6: one row per `kforge search` invocation that evaluated (on a GPU or
 * compile-only): its wall time, what it covered and how much it made, for
 * the release page's throughput (evaluations per GPU-minute, GPU busy).
 * The id is random, made once: merges carry a row once. gpu_name NULL:
 * compile-only. problems: JSON array of the problem ids it worked on;
 * levels: JSON array of their levels, ascending. evaluations: the
 * engine's fresh (not cached) evaluations; candidates: candidate rows. */
static const char schema_v6[] =
"CREATE TABLE search_sessions(\n"
"  id TEXT PRIMARY KEY,\n"
"  run_id TEXT NOT NULL REFERENCES runs(id),\n"
"  gpu_name TEXT,\n"
"  started_at TEXT NOT NULL, ended_at TEXT NOT NULL,\n"
"  wall_s REAL NOT NULL CHECK(wall_s >= 0),\n"
"  status TEXT NOT NULL CHECK(status IN ('finished','stopped','failed')),\n"
"  problems TEXT NOT NULL, levels TEXT NOT NULL,\n"
"  evaluations INTEGER NOT NULL CHECK(evaluations >= 0),\n"
"  candidates INTEGER NOT NULL CHECK(candidates >= 0),\n"
"  jobs INTEGER NOT NULL CHECK(jobs >= 1),\n"
"  kforge_version TEXT NOT NULL);\n"
"CREATE INDEX search_sessions_by_run ON search_sessions(run_id, started_at);\n";

const struct store_migration store_migrations[] = {
	{ 1, schema_v1 },
	{ 2, schema_v2 },
	{ 3, schema_v3 },
	{ 4, schema_v4 },
	{ 5, schema_v5 },
	{ 6, schema_v6 },
};
const int store_n_migrations = (int)(sizeof(store_migrations) / sizeof(store_migrations[0]));

const char *const store_tables[] = {
	"meta", "gpus", "problems", "runs", "rounds", "llm_calls", "ideas", "idea_categories",
	"kernels", "candidates", "compiles", "compile_kernels", "evals", "eval_trials",
	"verifications", "baselines", "profiles", "profile_kernels",
	"search_sessions", NULL,
};
