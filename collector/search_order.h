/* The order in which a search starts its problems. */
#ifndef KF_SEARCH_ORDER_H
#define KF_SEARCH_ORDER_H

#include "problem/problem.h"

/* order[0..n): indices into probs, the costliest first (longest processing
 * time first), ties in the given order. */
void search_order(const struct problem *probs, int n, int *order);

/* A problem's cost for the order: its roofline floor in ms on nominal
 * ceilings (the spec's flops and min_bytes). */
double search_order_cost(const struct problem *p);

#endif
