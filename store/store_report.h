/* The queries behind `kforge report`: one problem's search, a run's
 * summary, and the cross-GPU table of verified kernels. Results are JSON
 * so the CLI can print them as text or JSON. Kernels that failed
 * verification on the run's GPU are never "best". */
#ifndef KF_STORE_REPORT_H
#define KF_STORE_REPORT_H

#include "problem/problem.h" /* PROBLEM_UNKNOWN */
#include "store.h"

/* Finds a problem of the store from any name problem_name_find takes
 * ("level1/023_Softmax", "23", "Softmax", "23_Softmax.py"); writes its id.
 * 0, PROBLEM_UNKNOWN, or -1 with err. */
int store_report_find_problem(struct store *s, const char *query, struct buf *id,
			      struct buf *err);

/* One problem's search in run_id (NULL: the latest run that searched it):
 * {problem:{id,name}, run:{id,strategy,proposer,model,rounds,seed,status,
 *  gpu_name,protocol}, stats:{kernels,compiled,correct,best_speedup,
 *  best_ms}, rounds:[{round,kernels,compiled,correct,best_speedup,best_ms,
 *  best}], best:{id,round,kernel_hash,speedup,time_ms,verified_on:[..],
 *  idea:{id,text,categories:[{category,method}]}, profile: its profile on
 *  the run's GPU or null} or null, chain: store_idea_chain of the best
 *  (root first; [] without one), excluded:[ids failing verification]}. NULL with err when the problem
 * was never searched. */
json_t *store_report_problem(struct store *s, const char *problem_id, const char *run_id,
			     struct buf *err);

/* A run's summary (NULL: the latest run): {run:{...}, problems:[{id,
 * kernels, correct, best_speedup, best_ms, best}]}. */
json_t *store_report_run(struct store *s, const char *run_id, struct buf *err);

/* Per problem, the best verified kernel on each GPU of the store:
 * {gpus:[names], problems:[{id, best:{GPU:{kernel_hash, speedup,
 * time_ms}}}]}. */
json_t *store_report_gpus(struct store *s, struct buf *err);

#endif
