/* Evaluates the matmul/conv/pool oracle geometry over every output element
 * of a (small) problem, with inputs read from files, for
 * problems/gen/level1/emulate.py which compares it against reference.cu run on the
 * CPU.
 *   build/tests/oracle_b_eval SPECDIR INDIR OUTFILE
 * INDIR/NAME.bin holds each input/param as raw float32; OUTFILE gets the
 * output as raw float64. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle/oracle_geom.h"
#include "problem/problem.h"

struct arrays {
	double *t[PROBLEM_MAX_TENSORS];
};

static double fetch(void *u, int t, long long i)
{
	return ((struct arrays *)u)->t[t][i];
}

static int read_tensor(const char *dir, const struct problem_tensor *t, double **out)
{
	char path[4096];
	FILE *f;
	float *tmp = malloc((size_t)t->numel * sizeof(float));
	double *d = malloc((size_t)t->numel * sizeof(double));
	size_t n;

	snprintf(path, sizeof(path), "%s/%s.bin", dir, t->name);
	f = fopen(path, "rb");
	if (!f || !tmp || !d) {
		fprintf(stderr, "cannot read %s\n", path);
		goto fail;
	}
	n = fread(tmp, sizeof(float), (size_t)t->numel, f);
	fclose(f);
	if (n != (size_t)t->numel) {
		fprintf(stderr, "%s: short file\n", path);
		goto fail;
	}
	for (long long i = 0; i < t->numel; i++)
		d[i] = tmp[i];
	free(tmp);
	*out = d;
	return 0;
fail:
	free(tmp);
	free(d);
	return -1;
}

int main(int argc, char **argv)
{
	struct problem p;
	struct buf err = BUF_INIT;
	struct arrays a;
	struct mm_geom mm;
	struct conv_geom cv;
	struct pool_geom pl;
	long long n;
	FILE *f;
	int rc = 1;

	if (argc != 4) {
		fprintf(stderr, "usage: %s SPECDIR INDIR OUTFILE\n", argv[0]);
		return 2;
	}
	memset(&a, 0, sizeof(a));
	problem_init(&p);
	if (problem_load(&p, argv[1], &err) < 0)
		goto out;
	if (!strcmp(p.family, "matmul")) {
		if (mm_geom_from_problem(&p, &mm, &err) < 0)
			goto out;
		n = mm_numel(&mm);
	} else if (!strcmp(p.family, "conv")) {
		if (conv_geom_from_problem(&p, &cv, &err) < 0)
			goto out;
		n = conv_numel(&cv);
	} else if (!strcmp(p.family, "pool")) {
		if (pool_geom_from_problem(&p, &pl, &err) < 0)
			goto out;
		n = pool_numel(&pl);
	} else {
		kf_err(&err, "%s: family %s is not matmul, conv or pool", p.id, p.family);
		goto out;
	}
	for (int t = 0; t < p.n_in; t++)
		if (read_tensor(argv[2], &p.t[t], &a.t[t]) < 0)
			goto out;
	f = fopen(argv[3], "wb");
	if (!f) {
		kf_err(&err, "cannot write %s", argv[3]);
		goto out;
	}
	for (long long i = 0; i < n; i++) {
		double v = !strcmp(p.family, "matmul") ? mm_value(&mm, fetch, &a, i)
			 : !strcmp(p.family, "conv") ? conv_value(&cv, fetch, &a, i)
			 : pool_value(&pl, fetch, &a, i);
		fwrite(&v, sizeof(v), 1, f);
	}
	rc = fclose(f) ? 1 : 0;
out:
	if (err.len)
		fprintf(stderr, "%s\n", err.s);
	for (int t = 0; t < PROBLEM_MAX_TENSORS; t++)
		free(a.t[t]);
	problem_release(&p);
	buf_release(&err);
	return rc;
}
