#include "svg.h"

#include <math.h>
#include <string.h>

#include "html.h"

#define W 640.0
#define H 280.0
#define ML 60.0
#define MR 16.0
#define MT 46.0
#define MB 46.0

struct axis {
	double lo, hi;
	int log;
};

static double map(const struct axis *a, double v, double p0, double p1)
{
	double t;

	if (a->log)
		v = log2(v);
	t = a->hi > a->lo ? (v - a->lo) / (a->hi - a->lo) : 0.5;
	return p0 + t * (p1 - p0);
}

static double nice_step(double range, int want)
{
	double raw = range / want, mag = pow(10, floor(log10(raw))), f = raw / mag;

	if (f < 1.5)
		return mag;
	if (f < 3.5)
		return 2 * mag;
	if (f < 7.5)
		return 5 * mag;
	return 10 * mag;
}

static void open_svg(struct buf *out, const struct svg_chart *c)
{
	buf_adds(out, "<figure class=\"chart\"><svg xmlns=\"http://www.w3.org/2000/svg\" "
		 "viewBox=\"0 0 640 280\" role=\"img\"");
	if (c->id)
		buf_addf(out, " id=\"%s\" aria-labelledby=\"%s-t\"", c->id, c->id);
	buf_adds(out, "><title");
	if (c->id)
		buf_addf(out, " id=\"%s-t\"", c->id);
	buf_adds(out, ">");
	html_escapes(out, c->title);
	buf_adds(out, "</title>");
	buf_adds(out, "<text class=\"ct\" x=\"320\" y=\"18\" text-anchor=\"middle\">");
	html_escapes(out, c->title);
	buf_adds(out, "</text>");
	if (c->xlabel) {
		buf_addf(out, "<text class=\"al\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
			 ML + (W - ML - MR) / 2, H - 8);
		html_escapes(out, c->xlabel);
		buf_adds(out, "</text>");
	}
	if (c->ylabel) {
		buf_addf(out, "<text class=\"al\" transform=\"translate(14 %.1f) rotate(-90)\" "
			 "text-anchor=\"middle\">", MT + (H - MT - MB) / 2);
		html_escapes(out, c->ylabel);
		buf_adds(out, "</text>");
	}
	buf_addf(out, "<rect class=\"plot\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>",
		 ML, MT, W - ML - MR, H - MT - MB);
}

static void close_svg(struct buf *out)
{
	buf_adds(out, "</svg></figure>");
}

static void empty_note(struct buf *out, const struct svg_chart *c)
{
	buf_adds(out, "<text class=\"al empty\" x=\"320\" y=\"150\" text-anchor=\"middle\">");
	html_escapes(out, c->empty ? c->empty : "no data");
	buf_adds(out, "</text>");
	close_svg(out);
}

static void y_ticks(struct buf *out, const struct axis *ay)
{
	double y0 = H - MB, y1 = MT;

	if (ay->log && ay->hi - ay->lo < 2.5) {
		/* under a few octaves: plain values, placed on the log scale */
		double a = pow(2, ay->lo), b = pow(2, ay->hi), st = nice_step(b - a, 4);
		for (double v = ceil(a / st) * st; v <= b + st * 1e-9; v += st) {
			if (v <= 0)
				continue;
			double py = map(ay, v, y0, y1);
			buf_addf(out, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>",
				 ML, W - MR, py, py);
			buf_addf(out, "<text class=\"tk\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">",
				 ML - 6, py + 4);
			fmt_num(out, v);
			buf_adds(out, "</text>");
		}
		return;
	}
	if (ay->log) {
		double step = ceil((ay->hi - ay->lo) / 6);
		if (step < 1)
			step = 1;
		for (double e = ceil(ay->lo); e <= ay->hi + 1e-9; e += step) {
			double v = pow(2, e), py = map(&(struct axis){ ay->lo, ay->hi, 0 }, e, y0, y1);
			buf_addf(out, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>",
				 ML, W - MR, py, py);
			buf_addf(out, "<text class=\"tk\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">",
				 ML - 6, py + 4);
			fmt_num(out, v);
			buf_adds(out, "</text>");
		}
		return;
	}
	double st = nice_step(ay->hi - ay->lo, 5);
	for (double v = ceil(ay->lo / st) * st; v <= ay->hi + st * 1e-9; v += st) {
		double py = map(ay, v, y0, y1);
		buf_addf(out, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>",
			 ML, W - MR, py, py);
		buf_addf(out, "<text class=\"tk\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", ML - 6,
			 py + 4);
		if (st >= 1)
			buf_addf(out, "%.0f", v);
		else
			fmt_num(out, fabs(v) < st * 1e-9 ? 0 : v);
		buf_adds(out, "</text>");
	}
}

static int usable(const struct svg_chart *c, double y)
{
	return isfinite(y) && (!c->logy || y > 0);
}

void svg_lines(struct buf *out, const struct svg_chart *c, const struct svg_series *s, int ns)
{
	struct axis ax = { INFINITY, -INFINITY, 0 }, ay = { INFINITY, -INFINITY, c->logy };
	double x0, x1;
	int any = 0;

	for (int k = 0; k < ns; k++)
		for (int i = 0; i < s[k].n; i++) {
			double y = s[k].y[i];
			if (!usable(c, y) || !isfinite(s[k].x[i]))
				continue;
			y = c->logy ? log2(y) : y;
			ax.lo = fmin(ax.lo, s[k].x[i]);
			ax.hi = fmax(ax.hi, s[k].x[i]);
			ay.lo = fmin(ay.lo, y);
			ay.hi = fmax(ay.hi, y);
			any = 1;
		}
	if (isfinite(c->yref) && usable(c, c->yref)) {
		double y = c->logy ? log2(c->yref) : c->yref;
		ay.lo = fmin(ay.lo, y);
		ay.hi = fmax(ay.hi, y);
	}
	open_svg(out, c);
	if (!any) {
		empty_note(out, c);
		return;
	}
	if (c->ymax > 0) {
		ay.lo = 0;
		ay.hi = c->ymax;
	} else if (ay.hi - ay.lo < 1e-9) {
		ay.lo -= c->logy ? 1 : fabs(ay.lo) * 0.1 + 1;
		ay.hi += c->logy ? 1 : fabs(ay.hi) * 0.1 + 1;
	} else {
		double pad = (ay.hi - ay.lo) * 0.08;
		ay.hi += pad;
		if (c->logy || ay.lo - pad > 0 || ay.lo < 0)
			ay.lo -= pad;
		else
			ay.lo = 0;
	}
	x0 = ax.lo;
	x1 = ax.hi;
	if (ax.hi - ax.lo < 1e-9) {
		ax.lo -= 1;
		ax.hi += 1;
	} else {
		/* keep end points off the frame */
		double pad = (ax.hi - ax.lo) * 0.04;
		ax.lo -= pad;
		ax.hi += pad;
	}
	y_ticks(out, &ay);
	double xs = nice_step(ax.hi - ax.lo, 8);
	if (xs < 1)
		xs = 1;
	for (double v = ceil(x0 / xs) * xs; v <= x1 + 1e-9; v += xs)
		buf_addf(out, "<text class=\"tk\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>",
			 map(&ax, v, ML, W - MR), H - MB + 16, v);
	if (isfinite(c->yref) && usable(c, c->yref)) {
		double py = map(&ay, c->yref, H - MB, MT);
		buf_addf(out, "<line class=\"ref\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>",
			 ML, W - MR, py, py);
	}
	for (int k = 0; k < ns; k++) {
		const struct svg_series *se = &s[k];
		int pen = 0;

		buf_addf(out, "<g class=\"s%d\" data-series=\"", se->cls % 6);
		html_escapes(out, se->name ? se->name : "");
		buf_adds(out, "\"><path d=\"");
		for (int i = 0; i < se->n; i++) {
			if (!usable(c, se->y[i])) {
				pen = se->step ? pen : 0;
				continue;
			}
			double px = map(&ax, se->x[i], ML, W - MR), py = map(&ay, se->y[i], H - MB, MT);
			if (!pen)
				buf_addf(out, "M%.1f %.1f", px, py);
			else if (se->step)
				buf_addf(out, "H%.1fV%.1f", px, py);
			else
				buf_addf(out, "L%.1f %.1f", px, py);
			pen = 1;
		}
		buf_adds(out, "\"/>");
		if (se->dots)
			for (int i = 0; i < se->n; i++) {
				if (!usable(c, se->y[i]))
					continue;
				buf_addf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" data-x=\"%.17g\" "
					 "data-y=\"%.17g\"><title>", map(&ax, se->x[i], ML, W - MR),
					 map(&ay, se->y[i], H - MB, MT), se->x[i], se->y[i]);
				if (se->labels && se->labels[i])
					html_escapes(out, se->labels[i]);
				else {
					buf_addf(out, "%g: ", se->x[i]);
					fmt_num(out, se->y[i]);
					html_escapes(out, c->yunit ? c->yunit : "");
				}
				buf_adds(out, "</title></circle>");
			}
		buf_adds(out, "</g>");
	}
	/* legend */
	/* three entries a row (a fourth GPU's name would leave the frame),
	 * the last row just over the plot */
	int nrows = (ns + 2) / 3;
	if (ns > 1)
		for (int k = 0; k < ns; k++) {
			double lx = ML + 8 + (k % 3) * 190, ly = MT - 9 - 12.0 * (nrows - 1 - k / 3);
			buf_addf(out, "<g class=\"s%d\">", s[k].cls % 6);
			if (s[k].cls % 6 == 5)
				buf_addf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\"/>", lx + 8, ly);
			else
				buf_addf(out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>",
					 lx, lx + 16, ly, ly);
			buf_addf(out, "<text class=\"tk\" x=\"%.1f\" y=\"%.1f\">", lx + 20, ly + 4);
			html_escapes(out, s[k].name ? s[k].name : "");
			buf_adds(out, "</text></g>");
		}
	close_svg(out);
}

void svg_bars(struct buf *out, const struct svg_chart *c, const char *const *labels,
	      const double *v, int n)
{
	struct axis ay = { 0, 0, 0 };
	double bw;
	int any = 0;

	for (int i = 0; i < n; i++)
		if (isfinite(v[i])) {
			ay.hi = fmax(ay.hi, v[i]);
			/* all-zero counts are no data; 0% of something is data */
			any |= v[i] > 0 || c->ymax > 0;
		}
	open_svg(out, c);
	if (!any) {
		empty_note(out, c);
		return;
	}
	if (c->ymax > 0)
		ay.hi = c->ymax;
	else
		ay.hi *= 1.1;
	y_ticks(out, &ay);
	bw = n ? (W - ML - MR) / n : 0;
	for (int i = 0; i < n; i++) {
		double val = isfinite(v[i]) ? v[i] : 0, x = ML + i * bw;
		double y = map(&ay, val, H - MB, MT);
		if (!isfinite(v[i]))
			goto label;
		buf_addf(out, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
			 "data-label=\"", x + bw * 0.12, y, bw * 0.76, H - MB - y);
		html_escapes(out, labels[i]);
		buf_addf(out, "\" data-value=\"%.17g\"><title>", val);
		html_escapes(out, labels[i]);
		buf_adds(out, ": ");
		fmt_num(out, val);
		html_escapes(out, c->yunit ? c->yunit : "");
		buf_adds(out, "</title></rect>");
label:
		if (n <= 16) {
			buf_addf(out, "<text class=\"tk\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
				 x + bw / 2, H - MB + 16);
			html_escapes(out, labels[i]);
			buf_adds(out, "</text>");
		}
	}
	close_svg(out);
}
