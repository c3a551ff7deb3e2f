/* Drives conv_epi_emit (kernels/emit/builtin_conv_epi.c) for tests:
 *   convepi_emit SHAPE-JSON [PARAMS-JSON]
 * SHAPE: {"transposed", "groups", "N", "C_in", "C_out", "in": [..], "out":
 * [..], "kernel", "stride", "padding", "dilation", "output_padding" (as many
 * as "in"), "x", "w", "y", "name", and optionally the epilogue "params",
 * "args", "code"}. Prints a candidate (the kernels, then the launch block).
 * Exit 0 emitted, 3 not supported, 1 error (message on stderr), 2 usage. */
#include <stdio.h>
#include <string.h>

#include "kernels/emit/builtin_epi.h"

static int ints(const json_t *o, const char *k, int n, int *v, int dflt)
{
	const json_t *a = json_object_get(o, k);

	for (int i = 0; i < 3; i++)
		v[i] = dflt;
	if (!a)
		return 0;
	if (!json_is_array(a) || (int)json_array_size(a) != n)
		return -1;
	for (int i = 0; i < n; i++)
		v[i] = (int)json_integer_value(json_array_get(a, (size_t)i));
	return 0;
}

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

int main(int argc, char **argv)
{
	json_t *sh, *par = NULL;
	json_error_t je;
	struct conv_shape c;
	struct epi e;
	struct buf src = BUF_INIT, launch = BUF_INIT, err = BUF_INIT;
	const json_t *in, *out;
	int rc, n;

	if (argc < 2 || argc > 3)
		return 2;
	sh = json_loads(argv[1], 0, &je);
	if (argc == 3)
		par = json_loads(argv[2], 0, &je);
	if (!sh || (argc == 3 && !par)) {
		fprintf(stderr, "bad JSON: %s\n", je.text);
		return 2;
	}
	memset(&c, 0, sizeof(c));
	in = json_object_get(sh, "in");
	out = json_object_get(sh, "out");
	n = (int)json_array_size(in);
	c.dims = n;
	c.transposed = json_is_true(json_object_get(sh, "transposed"));
	c.groups = (int)json_integer_value(json_object_get(sh, "groups"));
	c.N = json_integer_value(json_object_get(sh, "N"));
	c.C_in = json_integer_value(json_object_get(sh, "C_in"));
	c.C_out = json_integer_value(json_object_get(sh, "C_out"));
	for (int i = 0; i < n && i < 3; i++) {
		c.in_sp[i] = json_integer_value(json_array_get(in, (size_t)i));
		c.out_sp[i] = json_integer_value(json_array_get(out, (size_t)i));
	}
	if (n > 3 || (int)json_array_size(out) != n || ints(sh, "kernel", n, c.kernel, 1) ||
	    ints(sh, "stride", n, c.stride, 1) || ints(sh, "padding", n, c.padding, 0) ||
	    ints(sh, "dilation", n, c.dilation, 1) || ints(sh, "output_padding", n, c.output_padding, 0)) {
		fprintf(stderr, "bad shape\n");
		return 2;
	}
	e.params = str(sh, "params");
	e.args = str(sh, "args");
	e.code = str(sh, "code");
	rc = conv_epi_emit(&src, &launch, str(sh, "name"), &c, str(sh, "x"), str(sh, "w"),
			   str(sh, "y"), &e, par, &err);
	if (rc == 0)
		printf("%s/*@launch\n%s@*/\n", src.s, launch.s);
	else if (rc < 0)
		fprintf(stderr, "%s\n", err.s);
	buf_release(&src);
	buf_release(&launch);
	buf_release(&err);
	json_decref(sh);
	json_decref(par);
	return rc == 0 ? 0 : rc == 1 ? 3 : 1;
}
