/* What a sensitivity trial redraws (docs/engine.md, "Sensitivity trials"):
 * every input and parameter tensor, and for a recurrent model (a graph
 * with an "rnn" node) the first quarter of the time steps of its sequence
 * input. Shared by the worker (GPU) and `kforge problems sensitivity`
 * (CPU oracle). */
#ifndef KF_SENSITIVITY_H
#define KF_SENSITIVITY_H

#include "problem/inputs.h"

/* The sequence input of the problem's first "rnn" node and its early
 * region (inputs.h: flat i with i % stride < block: time steps [0, T/4)).
 * 1 when there is one, else 0. */
int sens_seq_region(const struct problem *p, int *t, long long *stride, long long *block);

/* 1 when some tensor has an "alive" draw. */
int sens_has_alive(const struct problem *p);

/* Sensitivity trial j (0 .. sens_count-1) of problem p as a draw: j <
 * n_in redraws tensor j whole, j == n_in the early region (when there is
 * one). The draw is alive when the problem has an alive draw. */
int sens_count(const struct problem *p);
void sens_draw(const struct problem *p, int j, struct inputs_draw *d);
/* "NAME" or "NAME[steps 0..K)" for reports. */
void sens_name(const struct problem *p, const struct inputs_draw *d, char *out, size_t n);

#endif
