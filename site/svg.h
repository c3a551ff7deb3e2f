/* Inline SVG charts drawn from data at build time: lines (trajectories)
 * and bars (distributions, per-category counts). Every chart has a
 * <title>, axis labels, and colours from CSS classes (so the page's light
 * and dark schemes apply). Points and bars carry data-x/data-y/data-value
 * attributes and a <title> tooltip, which tests read through the DOM. */
#ifndef KF_SITE_SVG_H
#define KF_SITE_SVG_H

#include "core/buf.h"

struct svg_chart {
	const char *id;         /* element id (ASCII word), may be NULL */
	const char *title;      /* required */
	const char *xlabel, *ylabel;
	int logy;               /* log2 y axis (values <= 0 dropped) */
	double yref;            /* dashed reference line at this y; NaN: none */
	const char *yunit;      /* appended to values in tooltips ("×") */
	double ymax;            /* > 0: a fixed 0..ymax y axis (percentages: 100) */
	const char *empty;      /* the note drawn when there is no data ("no data") */
};

struct svg_series {
	const char *name;
	const double *x, *y;    /* n points; NaN y leaves a gap */
	int n;
	int step;               /* draw as a step line (best so far) */
	int dots;               /* draw points */
	int cls;                /* colour index 0..5 */
	const char *const *labels; /* per-point tooltip text, may be NULL */
};

void svg_lines(struct buf *out, const struct svg_chart *c, const struct svg_series *s, int ns);
/* One bar per label; values >= 0, NaN: no bar. No finite value at all
 * draws the empty note instead of bars. */
void svg_bars(struct buf *out, const struct svg_chart *c, const char *const *labels,
	      const double *v, int n);

#endif
