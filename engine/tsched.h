/* The timed phase's secret schedule (docs/engine.md, issue 37): which input
 * set each warm-up and timed launch uses, and the rule that compares the
 * launches on inputs no launch has seen with those on replayed ones. Pure
 * host code (tests/unit/test_tsched.c). */
#ifndef KF_TSCHED_H
#define KF_TSCHED_H

#define TSCHED_A 0                 /* a replayed check set of the problem's distribution */
#define TSCHED_B 1                 /* a replayed check set drawn from the check mix */
#define TSCHED_FRESH 2             /* 2 + f: fresh set f (its first and only use) */
#define TSCHED_MAX_FRESH 8
#define TSCHED_FRESH_WITHIN 10     /* first uses among the first 10 timed trials: a
				      max_timing_s cut (after 10) still times them */
#define TSCHED_HISTORY_RATIO 0.7   /* replays' median under 0.7x every novel launch: rejected */
#define TSCHED_HISTORY_MIN_MS 0.01 /* and at least 10 us apart (events' jitter on tiny kernels) */

/* Fills set[0 .. warm + n_timed) from the secret key: each launch A or B by
 * a coin (A only when !have_b), and n_fresh fresh sets placed at distinct
 * timed trials drawn among the first TSCHED_FRESH_WITHIN; first[f] is the
 * launch index of set 2 + f. Returns the number of fresh sets placed
 * (n_fresh capped by TSCHED_MAX_FRESH and the trials there are). */
int tsched_build(unsigned long long key, int warm, int n_timed, int have_b, int n_fresh,
		 int *set, int *first);

/* The history rule: 1 (rejected) when the median of the replayed launches'
 * times is under TSCHED_HISTORY_RATIO times the fastest novel launch and
 * more than TSCHED_HISTORY_MIN_MS under it; 0 otherwise, or when there are
 * fewer than 1 novel or 3 replayed times. *ratio: median / min novel (0 when
 * not judged). */
int tsched_history(const double *novel, int n_novel, const double *replay, int n_replay,
		   double *ratio);

#endif
