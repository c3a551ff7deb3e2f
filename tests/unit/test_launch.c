/* engine/: candidate split and canonical hash, include allow-list, kernel
 * signatures, launch expressions and plans, plan JSON, ptxas parsing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "problem/problem.h"
#include "engine/candidate.h"
#include "engine/compile.h"
#include "engine/launch.h"

static const char spec[] =
	"{\"id\":\"level1/099_T\",\"level\":1,\"number\":99,\"name\":\"T\","
	"\"kernelbench_file\":\"99_T.py\",\"family\":\"elementwise\",\"operation\":\"t\","
	"\"sizes\":{\"n\":1000,\"m\":3,\"big\":1099511627776},"
	"\"scalars\":{\"alpha\":0.5},\"init_args\":{},"
	"\"inputs\":[{\"name\":\"x\",\"role\":\"input\",\"dtype\":\"float32\",\"shape\":[\"n\"],"
	"\"dist\":{\"kind\":\"uniform\",\"low\":0,\"high\":1}},"
	"{\"name\":\"idx\",\"role\":\"input\",\"dtype\":\"int64\",\"shape\":[\"m\"],"
	"\"dist\":{\"kind\":\"randint\",\"low\":0,\"high\":3}},"
	"{\"name\":\"h\",\"role\":\"param\",\"dtype\":\"float16\",\"shape\":[\"m\"],"
	"\"dist\":{\"kind\":\"uniform\",\"low\":0,\"high\":1}}],"
	"\"outputs\":[{\"name\":\"y\",\"dtype\":\"float32\",\"shape\":[\"n\"]}],"
	"\"tolerance\":\"fp32\",\"flops\":1000,\"min_bytes\":8000,\"notes\":\"\"}";

static const char kernel[] =
	"#include <cuda_fp16.h>\n"
	"extern \"C\" __global__ void k(const float* __restrict__ x, float* y, long long n)\n"
	"{ }\n"
	"extern \"C\" {\n"
	"__global__ void __launch_bounds__(256, 2) k2(const long long* idx, const __half* h,\n"
	"                                             void* any, int i, unsigned u, size_t s,\n"
	"                                             float f, double d) { }\n"
	"}\n"
	"template <int N> __global__ void tk(float* p) { }\n";

static struct problem prob;

static int setup(void **state)
{
	struct buf err = BUF_INIT;
	(void)state;
	problem_init(&prob);
	if (problem_load_json(&prob, spec, "spec", &err) < 0) {
		fprintf(stderr, "fixture: %s\n", err.s);
		buf_release(&err);
		return -1;
	}
	buf_release(&err);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	problem_release(&prob);
	return 0;
}

/* Builds KERNEL + a launch block with `body`; returns 0/-1 and the error. */
static int build(const char *body, struct launch_plan *lp, struct buf *err)
{
	struct buf text = BUF_INIT;
	struct launch_limits lim;
	int r;
	launch_limits_default(&lim);
	buf_setf(&text, "%s/*@launch\n%s\n@*/\n", kernel, body);
	r = launch_plan_build(lp, &prob, text.s, &lim, err);
	buf_release(&text);
	return r;
}

/* The grid.x that `expr` gives (or -1 with the error in err). */
static long long grid_of(const char *expr, struct buf *err)
{
	struct launch_plan lp;
	struct buf body = BUF_INIT;
	long long g = -1;
	launch_plan_init(&lp);
	buf_setf(&body, "k<<<%s, 1>>>(x, y, 1);", expr);
	if (build(body.s, &lp, err) == 0)
		g = lp.steps[0].grid[0];
	launch_plan_release(&lp);
	buf_release(&body);
	return g;
}

static void test_expressions(void **state)
{
	struct buf err = BUF_INIT;
	(void)state;
	assert_int_equal(grid_of("ceil_div(n, 256)", &err), 4);
	assert_int_equal(grid_of("ceil_div(n, 1000)", &err), 1);
	assert_int_equal(grid_of("ceil_div(n, 999)", &err), 2);
	assert_int_equal(grid_of("n / 3 * 3 + n % 3", &err), 1000);
	assert_int_equal(grid_of("-(-n) - 2 * (m + 1) + 0x10", &err), 1000 - 8 + 16);
	assert_int_equal(grid_of("min(n, 7) * max(m, 2)", &err), 21);
	assert_int_equal(grid_of("(n - 1) / 7 - -1", &err), 143);
	assert_int_equal(grid_of("10ll + 5u", &err), 15);
	assert_int_equal(grid_of("-7 / 2 + 5", &err), 2);          /* C truncation */
	assert_int_equal(grid_of("big / big", &err), 1);
	assert_int_equal(grid_of("big * big", &err), -1);
	assert_non_null(strstr(err.s, "overflow"));
	assert_int_equal(grid_of("big * big / big", &err), -1);
	assert_int_equal(grid_of("-(big * 8388607) - big * 8388608 - big * 8388608", &err), -1);
	assert_non_null(strstr(err.s, "overflow"));
	assert_int_equal(grid_of("(big * 8388607 - big * 8388606) / big", &err), 1);
	assert_int_equal(grid_of("n / (m - 3)", &err), -1);
	assert_non_null(strstr(err.s, "division by zero"));
	assert_int_equal(grid_of("n % (m - 3)", &err), -1);
	assert_non_null(strstr(err.s, "division by zero"));
	assert_int_equal(grid_of("ceil_div(n, -1)", &err), -1);
	assert_int_equal(grid_of("99999999999999999999", &err), -1);
	assert_non_null(strstr(err.s, "does not fit in 64 bits"));
	assert_int_equal(grid_of("alpha", &err), -1);
	assert_non_null(strstr(err.s, "`alpha` is a float scalar"));
	assert_int_equal(grid_of("x", &err), -1);
	assert_non_null(strstr(err.s, "`x` is a tensor"));
	assert_int_equal(grid_of("sqrt(n)", &err), -1);
	assert_non_null(strstr(err.s, "unknown function `sqrt`"));
	assert_int_equal(grid_of("1.5", &err), -1);
	assert_non_null(strstr(err.s, "found the float `1.5`"));
	assert_int_equal(grid_of("(n", &err), -1);
	assert_non_null(strstr(err.s, "expected `)`"));
	assert_int_equal(grid_of("n $ 2", &err), -1);
	assert_non_null(strstr(err.s, "unexpected character `$`"));
	{
		struct buf deep = BUF_INIT;
		for (int i = 0; i < 1000; i++)
			buf_adds(&deep, "(-");
		buf_adds(&deep, "1");
		for (int i = 0; i < 1000; i++)
			buf_adds(&deep, ")");
		assert_int_equal(grid_of(deep.s, &err), -1);
		assert_non_null(strstr(err.s, "nested too deeply"));
		buf_reset(&deep);
		for (int i = 0; i < 30; i++)
			buf_adds(&deep, "min(");
		buf_adds(&deep, "7");
		for (int i = 0; i < 30; i++)
			buf_adds(&deep, ", 9)");
		assert_int_equal(grid_of(deep.s, &err), 7);
		buf_reset(&deep);
		for (int i = 0; i < 130; i++)
			buf_addc(&deep, 'n');
		assert_int_equal(grid_of(deep.s, &err), -1);
		assert_non_null(strstr(err.s, "too long"));
		buf_release(&deep);
	}
	/* Positions are the file's: line 11 (10 lines of kernel + the marker). */
	assert_int_equal(grid_of("n / (m - 3)", &err), -1);
	assert_string_equal(err.s, "11:7: division by zero");
	buf_release(&err);
}

static void test_args(void **state)
{
	struct launch_plan lp;
	struct buf err = BUF_INIT;
	const struct launch_step *st;
	(void)state;
	launch_plan_init(&lp);
	assert_int_equal(build("scratch zeroed unsigned long long tmp[n * 2];\n"
			       "k2<<<dim3(2, 3, 4), dim3(8, 8), 49152>>>(idx, h, tmp, -5, 7, n, alpha, 2.5f);",
			       &lp, &err), 0);
	assert_int_equal(lp.n_scratch, 1);
	assert_string_equal(lp.scratch[0].name, "tmp");
	assert_int_equal(lp.scratch[0].elem_size, 8);
	assert_int_equal(lp.scratch[0].count, 2000);
	assert_int_equal(lp.scratch[0].zeroed, 1);
	st = &lp.steps[0];
	assert_string_equal(st->kernel, "k2");
	assert_int_equal(st->grid[1], 3);
	assert_int_equal(st->grid[2], 4);
	assert_int_equal(st->block[0], 8);
	assert_int_equal(st->block[2], 1);
	assert_int_equal(st->smem, 49152);
	assert_int_equal(st->line, 12);
	assert_int_equal(st->n_args, 8);
	assert_int_equal(st->args[0].kind, LARG_TENSOR);
	assert_int_equal(st->args[0].index, 1);
	assert_int_equal(st->args[1].index, 2);
	assert_int_equal(st->args[2].kind, LARG_SCRATCH);
	assert_int_equal(st->args[3].kind, LARG_INT);
	assert_int_equal(st->args[3].ival, -5);
	assert_int_equal(st->args[3].size, 4);
	assert_int_equal(st->args[5].size, 8);
	assert_int_equal(st->args[6].kind, LARG_FLOAT);
	assert_true(st->args[6].fval == 0.5 && !st->args[6].is_double && st->args[6].size == 4);
	assert_true(st->args[7].fval == 2.5 && st->args[7].is_double && st->args[7].size == 8);

	/* A JSON round trip keeps everything. */
	{
		struct buf j1 = BUF_INIT, j2 = BUF_INIT;
		struct launch_plan back;
		launch_plan_init(&back);
		launch_plan_to_json(&lp, &j1);
		assert_int_equal(launch_plan_from_json(&back, j1.s, &err), 0);
		launch_plan_to_json(&back, &j2);
		assert_string_equal(j1.s, j2.s);
		assert_int_equal(launch_plan_from_json(&back, "{\"scratch\":[],\"steps\":[{\"kernel\":\"k\","
						       "\"grid\":[1,1,1],\"block\":[2048,1,1],\"smem\":0,"
						       "\"args\":[]}]}", &err), -1);
		assert_int_equal(launch_plan_from_json(&back, "[", &err), -1);
		launch_plan_release(&back);
		buf_release(&j1);
		buf_release(&j2);
	}

	/* Type mismatches. */
	assert_int_equal(build("k2<<<1, 1>>>(x, h, y, 1, 1, 1, 1.0, 1.0);", &lp, &err), -1);
	assert_non_null(strstr(err.s, "tensor `x` is float32, but parameter `idx`"));
	assert_int_equal(build("k2<<<1, 1>>>(idx, x, y, 1, 1, 1, 1.0, 1.0);", &lp, &err), -1);
	assert_non_null(strstr(err.s, "parameter `h` of `k2` is `const __half* h` (expected float* or void*)"));
	assert_int_equal(build("k2<<<1, 1>>>(idx, h, y, 1, -1, 1, 1.0, 1.0);", &lp, &err), -1);
	assert_non_null(strstr(err.s, "value -1 does not fit parameter `u`"));
	assert_int_equal(build("k2<<<1, 1>>>(idx, h, y, 2147483648, 1, 1, 1.0, 1.0);", &lp, &err), -1);
	assert_non_null(strstr(err.s, "does not fit parameter `i`"));
	assert_int_equal(build("k2<<<1, 1>>>(idx, h, y, alpha, 1, 1, 1.0, 1.0);", &lp, &err), -1);
	assert_non_null(strstr(err.s, "`alpha` is a float scalar"));
	assert_int_equal(build("k2<<<1, 1>>>(idx, h, y, 1, 1, 1, 2.0 * alpha, 1.0);", &lp, &err), -1);
	assert_int_equal(build("k2<<<1, 1>>>(idx, h, y, 1, 1, 1, n, 1.0);", &lp, &err), 0);
	assert_true(lp.steps[0].args[6].fval == 1000.0);
	assert_int_equal(build("k2<<<1, 257>>>(idx, h, y, 1, 1, 1, 1.0, 1.0);", &lp, &err), -1);
	assert_string_equal(err.s, "11:9: block of 257 threads is over the kernel's __launch_bounds__(256)");
	assert_int_equal(build("k2<<<1, dim3(16, 16)>>>(idx, h, y, 1, 1, 1, 1.0, 1.0);", &lp, &err), 0);
	assert_int_equal(build("tk<<<1, 1>>>(y);", &lp, &err), -1);
	assert_non_null(strstr(err.s, "not extern \"C\""));
	assert_int_equal(build("scratch float x[4];\nk<<<1, 1>>>(x, y, 1);", &lp, &err), -1);
	assert_non_null(strstr(err.s, "`x` is already a name"));
	assert_int_equal(build("scratch float t[m - 3];\nk<<<1, 1>>>(x, y, 1);", &lp, &err), -1);
	assert_non_null(strstr(err.s, "needs at least one"));
	assert_int_equal(build("scratch double t[big];\nk<<<1, 1>>>(x, y, 1);", &lp, &err), -1);
	assert_non_null(strstr(err.s, "over the limit"));
	assert_int_equal(build("k<<<1, 1>>>(y, y, 1);", &lp, &err), 0);   /* a step may read an output */
	assert_int_equal(build("k<<<1, 1>>>(x, x, 1);", &lp, &err), 0);
	launch_plan_release(&lp);
	buf_release(&err);
}

static void test_limits(void **state)
{
	struct launch_plan lp;
	struct launch_limits lim;
	struct buf err = BUF_INIT;
	const char *t = "extern \"C\" __global__ void k(float* y) {}\n"
			"/*@launch\nk<<<dim3(1, 1, 65535), dim3(1, 1, 64), 1024>>>(y);\n@*/\n";
	(void)state;
	launch_plan_init(&lp);
	launch_limits_default(&lim);
	assert_int_equal(launch_plan_build(&lp, &prob, t, &lim, &err), 0);
	lim.max_block[2] = 32;
	assert_int_equal(launch_plan_build(&lp, &prob, t, &lim, &err), -1);
	assert_string_equal(err.s, "3:24: block.z = 64 is over the device limit 32");
	launch_limits_default(&lim);
	lim.max_smem_optin = 1000;
	assert_int_equal(launch_plan_build(&lp, &prob, t, &lim, &err), -1);
	assert_non_null(strstr(err.s, "1024 bytes of dynamic shared memory is over"));
	/* No limits given: sm_90 defaults. */
	assert_int_equal(launch_plan_build(&lp, &prob, t, NULL, &err), 0);
	/* The harness's prefix. */
	assert_int_equal(launch_plan_build(&lp, &prob,
					   "extern \"C\" __global__ void kf_h_compare(float* y) {}\n"
					   "/*@launch\nkf_h_compare<<<1, 1>>>(y);\n@*/\n", &lim, &err), -1);
	assert_string_equal(err.s, "3:1: kernel names beginning with `kf_` are the harness's; rename "
				   "`kf_h_compare`");
	/* LAUNCH_MAX_SCRATCH scratch buffers, and one more */
	for (int extra = 0; extra < 2; extra++) {
		struct buf b = BUF_INIT;
		buf_adds(&b, "extern \"C\" __global__ void k(float* y) {}\n/*@launch\n");
		for (int i = 0; i < LAUNCH_MAX_SCRATCH + extra; i++)
			buf_addf(&b, "scratch float s%d[16];\n", i);
		buf_adds(&b, "k<<<1, 1>>>(y);\n@*/\n");
		assert_int_equal(launch_plan_build(&lp, &prob, b.s, &lim, &err), extra ? -1 : 0);
		if (extra)
			assert_non_null(strstr(err.s, "too many scratch buffers (at most 64)"));
		else
			assert_int_equal(lp.n_scratch, 64);
		buf_release(&b);
	}
	launch_plan_release(&lp);
	buf_release(&err);
}

static void test_signatures(void **state)
{
	struct kernel_sigs s;
	struct buf err = BUF_INIT;
	const struct kernel_sig *k;
	(void)state;
	kernel_sigs_init(&s);
	assert_int_equal(kernel_sigs_parse(&s,
		"// extern \"C\" __global__ void commented(int a) {}\n"
		"#define X(a) extern \"C\" __global__ void a()\n"
		"extern \"C\" __global__ void decl(float4 *v, const int &r, my_t q, unsigned long long w);\n"
		"extern \"C\" __global__ void decl(float4 *v, const int &r, my_t q, unsigned long long w) {}\n"
		"extern \"C\" __global__ void none(void) {}\n"
		"struct S { int a; }; static __device__ int g[3] = {1, 2, 3};\n"
		"extern \"C\" __global__ void arr(float p[], const char* s = \"a,b\", short h) {}\n"
		"static const int big = 1'000'000; char q = '\n\n"
		"#define NOT_A_KERNEL extern \"C\" __global__ void fake(int a)\n",
		&err), 0);
	assert_int_equal(s.n, 3);
	assert_null(kernel_sigs_find(&s, "commented"));
	k = kernel_sigs_find(&s, "decl");
	assert_non_null(k);
	assert_int_equal(k->n_params, 4);
	assert_true(k->extern_c);
	assert_int_equal(k->params[0].base, SIG_FLOAT);
	assert_int_equal(k->params[0].vec, 4);
	assert_int_equal(k->params[0].is_pointer, 1);
	assert_string_equal(k->params[0].name, "v");
	assert_int_equal(k->params[1].is_ref, 1);
	assert_int_equal(k->params[2].base, SIG_OTHER);
	assert_int_equal(k->params[3].base, SIG_ULLONG);
	k = kernel_sigs_find(&s, "none");
	assert_int_equal(k->n_params, 0);
	k = kernel_sigs_find(&s, "arr");
	assert_int_equal(k->n_params, 3);
	assert_int_equal(k->params[0].is_pointer, 1);
	assert_int_equal(k->params[1].base, SIG_CHAR);
	assert_int_equal(k->params[2].base, SIG_SHORT);
	kernel_sigs_release(&s);
	buf_release(&err);
}

static void test_candidate(void **state)
{
	struct candidate c;
	struct buf err = BUF_INIT, canon = BUF_INIT;
	char h1[65], h2[65];
	const char *a = "int a;  \r\nint b;\r\n/*@launch\r\nk<<<1,1>>>();\r\n@*/\r\n\r\n";
	const char *b = "int a;\nint b;\n/*@launch\nk<<<1,1>>>();\n@*/\n";
	(void)state;
	candidate_init(&c);
	candidate_canonical(a, strlen(a), &canon);
	assert_string_equal(canon.s, b);
	candidate_hash(a, strlen(a), h1);
	candidate_hash(b, strlen(b), h2);
	assert_string_equal(h1, h2);
	assert_int_equal(candidate_parse(&c, a, strlen(a), &err), 0);
	assert_string_equal(c.device_src, "int a;\nint b;\n");
	assert_string_equal(c.launch_text, "k<<<1,1>>>();\n");
	assert_int_equal(c.launch_line, 4);
	/* A lone CR is a line end: the directive after it is seen (line 2). */
	assert_int_equal(candidate_parse(&c, "int a;\r#include \"x\"\n/*@launch\n@*/\n", 34, &err), -1);
	assert_string_equal(err.s, "2:10: `#include \"x\"` is not allowed: only `#include <NAME>` of "
			    "the allowed NVRTC headers (cuda_fp16.h, cuda_bf16.h, mma.h, "
			    "cooperative_groups.h, cuda/std/..., see docs/formats.md); nothing is read "
			    "from the disk");
	assert_int_equal(candidate_parse(&c, "int a;\0x", 8, &err), -1);
	assert_string_equal(err.s, "1:7: NUL byte in the candidate");
	/* UTF-8 text: the first bad byte's line and byte column (a valid
	 * two-byte character before it counts two columns). */
	assert_int_equal(candidate_parse(&c, "int a;\n// caf\xC3\xA9 \xE9t\xE9\n", 20, &err), -1);
	assert_string_equal(err.s, "2:10: byte 0xE9 is not valid UTF-8 (a candidate is UTF-8 text)");
	assert_int_equal(candidate_parse(&c, "int a;\r\n\xED\xA0\x80", 11, &err), -1);
	assert_string_equal(err.s, "2:1: byte 0xED is not valid UTF-8 (a candidate is UTF-8 text)");
	assert_int_equal(candidate_parse(&c, "// \xE2\x82\xAC \xCE\xB1\n/*@launch\n@*/\n", 24, &err), 0);
	{
		char *big = malloc(CANDIDATE_MAX_BYTES + 2);
		memset(big, ' ', CANDIDATE_MAX_BYTES + 1);
		big[CANDIDATE_MAX_BYTES + 1] = '\0';
		assert_int_equal(candidate_parse(&c, big, strlen(big), &err), -1);
		assert_non_null(strstr(err.s, "over the limit"));
		free(big);
	}
	/* An LLM response's separate launch fence. */
	candidate_assemble("int a;", "k<<<1,1>>>();", &canon);
	assert_string_equal(canon.s, "int a;\n\n/*@launch\nk<<<1,1>>>();\n@*/\n");
	candidate_release(&c);
	buf_release(&err);
	buf_release(&canon);
}

static void test_include_scan(void **state)
{
	struct buf err = BUF_INIT;
	static const char *const good[] = {
		"#include <cuda_fp16.h>\n", "  #  include <mma.h> // tensor cores\n",
		"#include <cuda/std/type_traits>\n", "#pragma unroll 4\n", "%:pragma nounroll\n",
		"const char *s = \"#include \\\"/etc/passwd\\\"\";\n", "int a = 1'000'000;\n",
		"#if 0\n#error no\n#endif\n", "#\n", "char c = '\"'; /* \" */\n",
		/* Pastes with a fixed part that no dangerous name holds. */
		"#define K(name) extern \"C\" __global__ void name##_kernel()\n",
		"#define F(op, T) op##_f32(T x)\n#define V(n) float##n\n#define G(x) x ## f\n",
		"#define L(fmt, ...) printf(fmt, ## __VA_ARGS__)\n#define N(a) a##2\n",
		"#define S(x) #x\nconst char *p = S(unroll);\n",
		"// _Pragma(\"x\") __has_include(<x>)\n/* #pragma GCC x */\n",
		"const char *s = \"__has_include _Pragma __DATE__\";\n",
		"const char *f = __FILE__; int l = __LINE__;\n",
		"#error don't \"compile\n#warning it's _Pragma\n", NULL,
	};
	static const char *const bad[] = {
		"#include \"x.h\"\n", "#include <stdio.h>\n", "#include </etc/passwd>\n",
		"#include <cuda/std/__config>\n", "#include <cuda_fp16.h> extra\n",
		"#include <cuda_fp16.h\n", "#import <cuda_fp16.h>\n", "#embed </dev/zero>\n",
		"#ident \"x\"\n", "#pragma GCC poison x\n", "auto s = R\"(x)\";\n",
		"auto s = u8R\"(x)\";\n", "/*\n*/ #include \"/etc/passwd\"\n",
		"/* */ %:include </dev/zero>\n",
		"/* a comment that the scan may misjudge\n#include \"/etc/shadow\"\n*/\n",
		"#if __has_include(<cuda_fp16.h>)\n#endif\n", "#include <cuda_runtime.h>\n",
		"int x;\r#include \"/etc/passwd\"\n", "int x; // c\r#include </dev/zero>\n",
		/* Found by the differential fuzzer: an unterminated literal must not
		 * swallow the line end before a comment that hides the directive. */
		"int a;'//x\n/*\n*/#include \"secret.h\")x\"\n",
		"#endif\n1'2R\"(*/\n/*\n*/#include_next \"secret.h\"\"\\\"\n",
		")\"%:\n/*\n*/#import \"secret.h\"\t\n",
		/* Pragmas other than unroll, in every spelling. */
		"#pragma once\n", "#pragma nv_diag_suppress 177\n", "#pragma pack(1)\n",
		"#pragma push_macro(\"X\")\n", "%:pragma GCC dependency \"/etc/passwd\"\n",
		"#pragma\n", "_Pragma(\"unroll\")\n", "#define P(x) _Pragma(#x)\n",
		"#define P(x) _Pra\\\ngma(#x)\n", "__pragma(unroll)\n",
		"#define U _CCCL_PRAGMA_UNROLL(4)\n",
		/* File probes, direct, through libcu++ and pasted. */
		"#if __has_include_next(<x>)\n#endif\n", "#if __has_embed(</dev/zero>)\n#endif\n",
		"#include <cuda/std/cstdint>\n#if _CCCL_HAS_INCLUDE(</etc/passwd>)\n#endif\n",
		"#define CAT(a, b) a##b\n", "#define CAT(a, b) a %:%: b\n",
		"#define CAT(a, ...) a ## __VA_ARGS__\n",
		"#define C(a, b) a##b\n#define X(a, b) C(a, b)\n#if X(__has_, include)(</etc/passwd>)\n#endif\n",
		"#define H(x) x##include\n", "#define H(x) __has_##x\n", "#define P(x) x##agma\n",
		"#define P(x) _Pr##x\n", "#define P(x) x##_PRAGMA\n", "#define P(x) _CCCL_##x\n",
		"#define P(x) x ## /* c */ _\n", "#define P(x) x##\\\n_\n",
		/* Identifiers the scan cannot see, the clock. */
		"_Pr\\u0061gma(\"message(\\\"x\\\")\")\n", "int \\u0061;\n",
		"__device__ const char *d = __DATE__;\n", "unsigned t = sizeof(__TIMESTAMP__);\n",
		/* Found by the differential fuzzer: NVRTC lexes on after a lone
		 * quote, where the scan saw the rest of the line as a literal. */
		"\r*8'(?_Pragma(\"message(\\\"x\\\")\")\n", "int a = '\n", "auto s = \"abc\n",
		NULL,
	};
	(void)state;
	for (int i = 0; good[i]; i++) {
		if (candidate_scan_source(good[i], strlen(good[i]), 1, &err) != 0)
			fail_msg("refused: %s (%s)", good[i], err.s);
	}
	for (int i = 0; bad[i]; i++) {
		if (candidate_scan_source(bad[i], strlen(bad[i]), 1, &err) != -1)
			fail_msg("accepted: %s", bad[i]);
		assert_true(err.s[0] >= '1' && err.s[0] <= '9');   /* LINE:COL: ... */
	}
	assert_true(candidate_include_allowed("cooperative_groups/reduce.h"));
	assert_false(candidate_include_allowed("cooperative_groups/../../x"));
	assert_false(candidate_include_allowed("cuda/std/"));
	buf_release(&err);
}

static void test_ptxas(void **state)
{
	struct compile_result r;
	const char *log =
		"ptxas info    : 0 bytes gmem\n"
		"ptxas info    : Compiling entry function 'a' for 'sm_90'\n"
		"ptxas info    : Function properties for a\n"
		"ptxas         .     16 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
		"ptxas info    : Used 40 registers, used 1 barriers, 4096 bytes smem, 368 bytes cmem[0]\n"
		"ptxas info    : Compiling entry function 'b' for 'sm_90'\n"
		"ptxas info    : Function properties for b\n"
		"ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
		"ptxas info    : Used 8 registers, used 0 barriers\n";
	(void)state;
	compile_result_init(&r);
	assert_int_equal(compile_parse_ptxas(log, &r), 2);
	assert_string_equal(r.kernels[0].name, "a");
	assert_int_equal(r.kernels[0].registers, 40);
	assert_int_equal(r.kernels[0].smem_static, 4096);
	assert_int_equal(r.kernels[0].cmem, 368);
	assert_int_equal(r.kernels[0].stack, 16);
	assert_int_equal(r.kernels[0].spill_stores, 8);
	assert_int_equal(r.kernels[0].spill_loads, 12);
	assert_int_equal(r.kernels[1].registers, 8);
	assert_int_equal(r.kernels[1].smem_static, 0);
	assert_int_equal(compile_parse_ptxas("", &r), 0);
	compile_result_release(&r);
}

/* Every launch of a plan, resolved, one line each (the executor's view). */
static int trace_one(void *ctx, int s, const long long *vars)
{
	void **c = ctx;
	const struct launch_plan *lp = c[0];
	struct buf *out = c[1], e = BUF_INIT;
	const struct launch_step *st = &lp->steps[s];
	struct launch_call call;

	assert_int_equal(launch_step_eval(st, vars, &call, &e), 0);
	buf_addf(out, "%s<<<%u,%u,%u|%u,%u,%u|%u>>>(", st->kernel, call.grid[0], call.grid[1],
		 call.grid[2], call.block[0], call.block[1], call.block[2], call.smem);
	for (int a = 0; a < st->n_args; a++) {
		const struct launch_arg *la = &st->args[a];
		if (la->kind == LARG_TENSOR || la->kind == LARG_SCRATCH)
			buf_addf(out, "%c%d+%lld ", la->kind == LARG_TENSOR ? 't' : 's', la->index,
				 call.ival[a]);
		else if (la->kind == LARG_INT)
			buf_addf(out, "%lld ", call.ival[a]);
		else
			buf_addf(out, "%g ", call.fval[a]);
	}
	buf_adds(out, ")\n");
	buf_release(&e);
	return 0;
}

static void trace(const struct launch_plan *lp, struct buf *out)
{
	const void *c[2] = { lp, out };
	struct buf e = BUF_INIT;
	buf_reset(out);
	assert_int_equal(launch_plan_walk(lp, trace_one, (void *)c, &e), 0);
	buf_release(&e);
}

/* Loops in the launch block: expansion, checks per iteration, JSON. */
static void test_loops(void **state)
{
	struct launch_plan lp, un, back;
	struct buf err = BUF_INIT, t1 = BUF_INIT, t2 = BUF_INIT, j1 = BUF_INIT, j2 = BUF_INIT;
	const char *looped =
		"scratch float tmp[m * 8];\n"
		"for (int t = 0; t < m; ++t) {   // m = 3\n"
		"  k<<<ceil_div(n, 256) - t, dim3(32 * (t + 1), 2), t * 1024>>>(x + t * 7, y, t);\n"
		"  for (int j = t; j < 2 * t; j += 1) {\n"
		"    k<<<1, 1>>>(x, tmp + j * 4 + t, -j);\n"
		"  }\n"
		"  for (int r = t; r >= 0; r--) { k2<<<r + 1, 64>>>(idx, h, tmp, r, t, n - r, t, 0.5); }\n"
		"}\n"
		"k<<<1, 1>>>(x, y, 0);";
	const char *unrolled =
		"scratch float tmp[m * 8];\n"
		"k<<<4, dim3(32, 2), 0>>>(x, y, 0);\n"
		"k2<<<1, 64>>>(idx, h, tmp, 0, 0, n, 0, 0.5);\n"
		"k<<<3, dim3(64, 2), 1024>>>(x + 7, y, 1);\n"
		"k<<<1, 1>>>(x, tmp + 5, -1);\n"
		"k2<<<2, 64>>>(idx, h, tmp, 1, 1, n - 1, 1, 0.5);\n"
		"k2<<<1, 64>>>(idx, h, tmp, 0, 1, n, 1, 0.5);\n"
		"k<<<2, dim3(96, 2), 2048>>>(x + 14, y, 2);\n"
		"k<<<1, 1>>>(x, tmp + 10, -2);\n"
		"k<<<1, 1>>>(x, tmp + 14, -3);\n"
		"k2<<<3, 64>>>(idx, h, tmp, 2, 2, n - 2, 2, 0.5);\n"
		"k2<<<2, 64>>>(idx, h, tmp, 1, 2, n - 1, 2, 0.5);\n"
		"k2<<<1, 64>>>(idx, h, tmp, 0, 2, n, 2, 0.5);\n"
		"k<<<1, 1>>>(x, y, 0);";
	(void)state;
	launch_plan_init(&lp);
	launch_plan_init(&un);
	launch_plan_init(&back);
	if (build(looped, &lp, &err) < 0)
		fail_msg("%s", err.s);
	if (build(unrolled, &un, &err) < 0)
		fail_msg("%s", err.s);
	assert_int_equal(lp.n_steps, 4);
	assert_int_equal(lp.n_loops, 3);
	assert_int_equal(lp.n_launches, 13);
	assert_int_equal(un.n_launches, 13);
	/* the kernel must allow the largest block and smem of all iterations */
	assert_int_equal(lp.steps[0].block[0] * lp.steps[0].block[1], 192);
	assert_int_equal(lp.steps[0].smem, 2048);
	trace(&lp, &t1);
	trace(&un, &t2);
	assert_string_equal(t1.s, t2.s);

	/* JSON keeps the loops (not 13 expanded steps) and gives the same launches */
	launch_plan_to_json(&lp, &j1);
	assert_non_null(strstr(j1.s, "\"loops\""));
	assert_int_equal(launch_plan_from_json(&back, j1.s, &err), 0);
	launch_plan_to_json(&back, &j2);
	assert_string_equal(j1.s, j2.s);
	assert_int_equal(back.n_launches, 13);
	assert_int_equal(back.n_steps, 4);
	trace(&back, &t2);
	assert_string_equal(t1.s, t2.s);
	/* a plan without loops keeps its old JSON */
	launch_plan_to_json(&un, &j2);
	assert_null(strstr(j2.s, "loops"));
	assert_null(strstr(j2.s, "dyn"));
	/* from JSON: nesting, variables and postfix are checked */
	{
		static const char *const bad[] = {
			"{\"scratch\":[],\"steps\":[{\"kernel\":\"k\",\"grid\":[1,1,1],\"block\":[1,1,1],\"smem\":0,\"args\":[]}],"
			"\"loops\":[{\"var\":\"t\",\"depth\":0,\"first\":0,\"end\":2,\"cmp\":\"<\",\"init\":[0],\"bound\":[3],\"step\":[1]}]}",
			"{\"scratch\":[],\"steps\":[{\"kernel\":\"k\",\"grid\":[1,1,1],\"block\":[1,1,1],\"smem\":0,\"args\":[]}],"
			"\"loops\":[{\"var\":\"t\",\"depth\":1,\"first\":0,\"end\":1,\"cmp\":\"<\",\"init\":[0],\"bound\":[3],\"step\":[1]}]}",
			"{\"scratch\":[],\"steps\":[{\"kernel\":\"k\",\"grid\":[1,1,1],\"block\":[1,1,1],\"smem\":0,\"args\":[]}],"
			"\"loops\":[{\"var\":\"t\",\"depth\":0,\"first\":0,\"end\":1,\"cmp\":\"<\",\"init\":[\"$0\"],\"bound\":[3],\"step\":[1]}]}",
			"{\"scratch\":[],\"steps\":[{\"kernel\":\"k\",\"grid\":[1,1,1],\"block\":[1,1,1],\"smem\":0,\"args\":[]}],"
			"\"loops\":[{\"var\":\"t\",\"depth\":0,\"first\":0,\"end\":1,\"cmp\":\"<\",\"init\":[0],\"bound\":[3,\"+\"],\"step\":[1]}]}",
			"{\"scratch\":[],\"steps\":[{\"kernel\":\"k\",\"grid\":[1,1,1],\"block\":[1,1,1],\"smem\":0,\"args\":[]}],"
			"\"loops\":[{\"var\":\"t\",\"depth\":0,\"first\":0,\"end\":1,\"cmp\":\"<\",\"init\":[0],\"bound\":[3],\"step\":[0]}]}",
			"{\"scratch\":[],\"steps\":[{\"kernel\":\"k\",\"grid\":[1,1,1],\"block\":[1,1,1],\"smem\":0,\"args\":[],"
			"\"dyn\":{\"grid\":[[1],[1],[1]],\"block\":[[1],[1],[1]],\"smem\":[0]}}]}",
		};
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			if (launch_plan_from_json(&back, bad[i], &err) == 0)
				fail_msg("bad plan %zu accepted", i);
	}

	/* errors name LINE:COL and the iteration */
	assert_int_equal(build("for (int t = 0; t < 100; ++t) {\n k<<<40 - t, 1>>>(x, y, 1);\n}", &lp, &err), -1);
	assert_string_equal(err.s, "12:6: grid.x is 0: a launch needs at least one block (at t = 40)");
	assert_int_equal(build("for (int i = 0; i < 2; i++) { for (int t = 0; t < n; t += 250) {\n"
			       " k<<<1, 1>>>(x, y + t * (i + 1), 1); } }", &lp, &err), -1);
	assert_string_equal(err.s, "12:21: element offset 1000 is outside `y` (1000 elements) (at i = 1, t = 500)");
	assert_int_equal(build("for (int t = 0; t < 3; ++t) { k2<<<1, 1>>>(idx, h, y, 1, t - 1, 1, 1.0, 1.0); }",
			       &lp, &err), -1);
	assert_string_equal(err.s, "11:58: value -1 does not fit parameter `u` of `k2` (`unsigned u`) (at t = 0)");
	assert_int_equal(build("for (int t = 0; t < 3; ++t) { k<<<1, 1>>>(x, y, n / (t - 2)); }", &lp, &err), -1);
	assert_string_equal(err.s, "11:51: division by zero (at t = 2)");
	assert_int_equal(build("for (int t = 0; t < 3; ++t) { k2<<<1, 128 * (t + 1)>>>(idx, h, y, 1, 1, 1, 1.0, 1.0); }",
			       &lp, &err), -1);
	assert_non_null(strstr(err.s, "block of 384 threads is over the kernel's __launch_bounds__(256) (at t = 2)"));
	/* parse errors */
	assert_int_equal(build("for (int t = 0; t < m; ++t) {\n k<<<1, 1>>>(x, y, t);", &lp, &err), -1);
	assert_string_equal(err.s, "11:1: the loop over `t` has no closing `}`");
	assert_int_equal(build("for (int t = 0; t < alpha; ++t) { k<<<1, 1>>>(x, y, t); }", &lp, &err), -1);
	assert_non_null(strstr(err.s, "11:21: `alpha` is a float scalar, not an integer size"));
	assert_int_equal(build("for (int t = 0; t < nope; ++t) { k<<<1, 1>>>(x, y, t); }", &lp, &err), -1);
	assert_non_null(strstr(err.s, "unknown name `nope`"));
	assert_int_equal(build("for (int t = 0; t < m; t += 0.5) { k<<<1, 1>>>(x, y, t); }", &lp, &err), -1);
	assert_non_null(strstr(err.s, "11:29: expected an integer expression, found the float `0.5`"));
	assert_int_equal(build("for (float t = 0; t < m; ++t) { k<<<1, 1>>>(x, y, t); }", &lp, &err), -1);
	assert_non_null(strstr(err.s, "declared `int`"));
	assert_int_equal(build("for (int t = 0; t < m; t -= 1) { k<<<1, 1>>>(x, y, t); }", &lp, &err), -1);
	assert_string_equal(err.s, "11:1: loop `t`: the step -1 does not move it towards its bound");
	assert_int_equal(build("for (int n = 0; n < m; ++n) { k<<<1, 1>>>(x, y, n); }", &lp, &err), -1);
	assert_non_null(strstr(err.s, "`n` is already a name"));
	assert_int_equal(build("for (int t = 0; t < m; ++t) { }", &lp, &err), -1);
	assert_non_null(strstr(err.s, "launches nothing"));
	assert_int_equal(build("k<<<1, 1>>>(x, y, 1); }", &lp, &err), -1);
	assert_non_null(strstr(err.s, "without a loop"));
	assert_int_equal(build("for (int t = 0; t < m; ++t) { scratch float q[4]; k<<<1, 1>>>(x, y, t); }", &lp, &err), -1);
	assert_non_null(strstr(err.s, "outside loops"));
	assert_int_equal(build("k<<<1, 1>>>(x, y, t);", &lp, &err), -1);
	assert_non_null(strstr(err.s, "unknown name `t`"));
	{
		/* depth 4 is fine, 5 is refused */
		struct buf d = BUF_INIT;
		for (int i = 0; i < 4; i++)
			buf_addf(&d, "for (int v%d = 0; v%d < 2; ++v%d) { ", i, i, i);
		buf_adds(&d, "k<<<1, 1>>>(x, y, v0 + v1 + v2 + v3); } } } }");
		assert_int_equal(build(d.s, &lp, &err), 0);
		assert_int_equal(lp.n_launches, 16);
		buf_reset(&d);
		for (int i = 0; i < 5; i++)
			buf_addf(&d, "for (int v%d = 0; v%d < 2; ++v%d) { ", i, i, i);
		buf_adds(&d, "k<<<1, 1>>>(x, y, 1); } } } } }");
		assert_int_equal(build(d.s, &lp, &err), -1);
		assert_string_equal(err.s, "11:133: loops nested too deeply (at most 4)");
		buf_release(&d);
	}
	/* launches: 1 << 20 are fine, one more is refused */
	assert_int_equal(build("for (int i = 0; i < 1024; ++i) { for (int j = 0; j < 1024; ++j) {\n"
			       " k<<<1, 1>>>(x, y, j); } }", &lp, &err), 0);
	assert_int_equal(lp.n_launches, 1 << 20);
	assert_int_equal(build("for (int i = 0; i < 1024; ++i) { for (int j = 0; j < 1024; ++j) {\n"
			       " k<<<1, 1>>>(x, y, j); } }\nk<<<1, 1>>>(x, y, 0);", &lp, &err), -1);
	assert_non_null(strstr(err.s, "over 1048576 launches"));
	assert_int_equal(build("for (int i = 0; i < 4; ++i) { for (int j = 0; j < n * n; ++j) {\n"
			       " k<<<1, 1>>>(x, y, j); } }", &lp, &err), -1);
	assert_string_equal(err.s, "12:2: the launch block makes over 1048576 launches with its loops "
				   "(at i = 1, j = 48576)");
	launch_plan_release(&lp);
	launch_plan_release(&un);
	launch_plan_release(&back);
	buf_release(&err);
	buf_release(&t1);
	buf_release(&t2);
	buf_release(&j1);
	buf_release(&j2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expressions), cmocka_unit_test(test_args),
		cmocka_unit_test(test_limits),      cmocka_unit_test(test_signatures),
		cmocka_unit_test(test_candidate),   cmocka_unit_test(test_include_scan),
		cmocka_unit_test(test_ptxas),       cmocka_unit_test(test_loops),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
