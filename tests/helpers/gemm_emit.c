/* Drives gemm_epi_emit (kernels/emit/builtin_epi.h) for tests:
 *   gemm_emit NAME BATCH M N K A_KM B_NK A_BCAST B_BCAST [TPARAMS-JSON [EPI]]
 * prints the candidate (device code and its launch block) for operands
 * A, B and output C. EPI: none (default), bias (v += bias[n]), full
 * (bias, a float parameter alpha and the indices b, m, n), p:PARAMS (those
 * parameters, no code). GEMM_EMIT_A, _B, _C (environment): the operands'
 * launch names instead (`A + 64`: an element offset).
 * Exit 0 emitted, 1 refused (the reason on stderr), 2 error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/emit/builtin_epi.h"

int main(int argc, char **argv)
{
	struct gemm_shape sh = { 0 };
	struct epi e = { NULL, NULL, NULL };
	struct buf src = BUF_INIT, launch = BUF_INIT, err = BUF_INIT;
	json_t *tp = NULL;
	const char *mode = argc > 11 ? argv[11] : "none";
	int rc;

	if (argc < 10)
		return 2;
	sh.batch = atoll(argv[2]);
	sh.M = atoll(argv[3]);
	sh.N = atoll(argv[4]);
	sh.K = atoll(argv[5]);
	sh.a_km = atoi(argv[6]);
	sh.b_nk = atoi(argv[7]);
	sh.a_bcast = atoi(argv[8]);
	sh.b_bcast = atoi(argv[9]);
	if (argc > 10 && !(tp = json_loads(argv[10], 0, NULL)))
		return 2;
	if (!strcmp(mode, "bias")) {
		e.params = ", const float* __restrict__ bias";
		e.args = ", bias";
		e.code = "v += bias[n];";
	} else if (!strcmp(mode, "full")) {
		e.params = ", const float* __restrict__ bias, float alpha";
		e.args = ", bias, 0.5f";
		e.code = "v = fmaxf(v + bias[n], 0.0f) * alpha + (float)((b + m + n) & 1);";
	} else if (!strncmp(mode, "p:", 2)) {
		e.params = mode + 2;	/* parameters only: their parsing */
	} else if (strcmp(mode, "none")) {
		return 2;
	}
	rc = gemm_epi_emit(&src, &launch, argv[1], &sh, getenv("GEMM_EMIT_A") ? getenv("GEMM_EMIT_A") : "A",
			   getenv("GEMM_EMIT_B") ? getenv("GEMM_EMIT_B") : "B",
			   getenv("GEMM_EMIT_C") ? getenv("GEMM_EMIT_C") : "C", &e, tp, &err);
	if (rc == 0)
		printf("%s\n/*@launch\n%s@*/\n", src.s, launch.s);
	else
		fprintf(stderr, "%s\n", err.len ? err.s : "(no message)");
	json_decref(tp);
	buf_release(&src);
	buf_release(&launch);
	buf_release(&err);
	return rc == 0 ? 0 : rc == 1 ? 1 : 2;
}
