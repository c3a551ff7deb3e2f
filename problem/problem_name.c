/* Naming problems: the one matcher behind every command that takes a
 * problem, over the suite's directories or the store's problems rows. */
#include "problem/problem.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NAME_MAX_LEN 256

/* "level1/019_ReLU" -> "ReLU"; "" when the id has no name. */
static const char *id_name(const char *id)
{
	const char *s = strrchr(id, '/'), *us;
	us = strchr(s ? s + 1 : id, '_');
	return us ? us + 1 : "";
}

/* KernelBench's file names keep trailing underscores that the directory
 * names drop ("1_Square_matrix_multiplication_.py"): ignore them. */
static size_t trim_len(const char *s, size_t n)
{
	while (n && s[n - 1] == '_')
		n--;
	return n;
}

static int name_eq(const char *a, const char *b)
{
	size_t na = trim_len(a, strlen(a)), nb = trim_len(b, strlen(b));
	return na == nb && !strncasecmp(a, b, na);
}

static int all_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

/* Case-insensitive Levenshtein distance; 999 past NAME_MAX_LEN. */
static int distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	int row[NAME_MAX_LEN + 1];

	if (la > NAME_MAX_LEN || lb > NAME_MAX_LEN)
		return 999;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		int diag = row[0];
		row[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int up = row[j];
			int best = diag + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

static int has_prefix_ci(const char *s, const char *prefix)
{
	return !strncasecmp(s, prefix, strlen(prefix));
}

/* The closest id to REST (already without level and ".py"), or NULL when
 * nothing is close: a third of the length in edits (at least 2, at most
 * 8; 1 for two letters), else a name that REST begins. */
static const char *suggest(const struct problem_name *v, int n, const char *rest)
{
	const char *best = NULL;
	int len = (int)trim_len(rest, strlen(rest)), bestd, limit;
	char form[NAME_MAX_LEN + 32], q[NAME_MAX_LEN + 1];

	if (all_digits(rest) || len < 2)
		return NULL;
	snprintf(q, sizeof(q), "%.*s", len, rest);
	limit = len <= 2 ? 1 : len / 3 < 2 ? 2 : len / 3 > 8 ? 8 : len / 3;
	bestd = limit + 1;
	for (int i = 0; i < n; i++) {
		const char *nm = id_name(v[i].id);
		int d = distance(q, nm), d2;
		snprintf(form, sizeof(form), "%d_%s", v[i].number, nm);
		d2 = distance(q, form);
		if (d2 < d)
			d = d2;
		if (d < bestd) {
			bestd = d;
			best = v[i].id;
		}
	}
	for (int i = 0; !best && len >= 3 && i < n; i++)
		if (has_prefix_ci(id_name(v[i].id), q))
			best = v[i].id;
	return best;
}

static int unknown(const struct problem_name *v, int n, const char *query, const char *rest,
		   struct buf *err)
{
	const char *s = suggest(v, n, rest);
	if (s)
		kf_err(err, "unknown problem '%s'; did you mean '%s'?", query, s);
	else
		kf_err(err, "unknown problem '%s'", query);
	return PROBLEM_UNKNOWN;
}

int problem_name_find(const struct problem_name *v, int n, const char *query, int *idx, int cap,
		      struct buf *err)
{
	char rest[NAME_MAX_LEN + 1];
	const char *r = query;
	int level = 0, hits = 0;
	size_t len;

	if (!query || !*query) {
		kf_err(err, "no problem given");
		return PROBLEM_UNKNOWN;
	}
	if (strlen(query) > NAME_MAX_LEN) {
		kf_err(err, "problem name longer than %d bytes", NAME_MAX_LEN);
		return PROBLEM_UNKNOWN;
	}
	if (!strncasecmp(r, "level", 5) && isdigit((unsigned char)r[5])) {
		char *end;
		long l = strtol(r + 5, &end, 10);
		if ((*end != '/' && *end != ':') || l < 1 || l > 100)
			return unknown(v, n, query, "", err);
		level = (int)l;
		r = end + 1;
	}
	len = strlen(r);
	if (len > 3 && !strcmp(r + len - 3, ".py"))
		len -= 3;
	memcpy(rest, r, len);
	rest[len] = '\0';
	if (!len)
		return unknown(v, n, query, "", err);
	for (int i = 0; i < n; i++) {
		const struct problem_name *p = &v[i];
		int match;
		if (level && p->level != level)
			continue;
		if (all_digits(rest)) {
			/* A bare number is level 1's, as KernelBench's lists count. */
			match = p->level == (level ? level : 1) && p->number == strtol(rest, NULL, 10);
		} else {
			char *end = rest;
			long num = isdigit((unsigned char)rest[0]) ? strtol(rest, &end, 10) : -1;
			/* NUM_Name must agree on both: "19_Softmax" is no problem. A
			 * name may itself begin with a digit ("3D_tensor_..."). */
			match = (num >= 0 && *end == '_' && p->number == num && name_eq(end + 1, id_name(p->id))) ||
				name_eq(rest, id_name(p->id));
		}
		if (match) {
			if (hits < cap)
				idx[hits] = i;
			hits++;
		}
	}
	if (!hits)
		return unknown(v, n, query, rest, err);
	return hits < cap ? hits : cap;
}

int problem_name_one(const struct problem_name *v, int n, const char *query, struct buf *err)
{
	int idx[3], r = problem_name_find(v, n, query, idx, 3, err);

	if (r > 1) {
		kf_err(err, "problem '%s' is ambiguous (%s, %s%s): give the full id", query,
		       v[idx[0]].id, v[idx[1]].id, r > 2 ? ", ..." : "");
		return PROBLEM_UNKNOWN;
	}
	return r < 0 ? r : idx[0];
}
