/* LLM call rows: every attempt is kept (schema v2). The call's own id holds
 * its latest attempt, which ideas and candidates reference; an earlier,
 * failed attempt that a resumed search retries moves to ID#N (attempt N,
 * retry_of ID). Budgets count the calls, not their failed attempts. */
#ifndef KF_STORE_LLM_H
#define KF_STORE_LLM_H

#include "store.h"

/* Moves the attempt stored under `id` to ID#N and returns the attempt
 * number its retry gets (N + 1), or -1. Call inside the transaction that
 * writes the retry. */
int store_llm_call_archive(struct store *s, const char *id, struct buf *err);

#endif
