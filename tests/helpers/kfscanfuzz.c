/* Differential test of the include scan against NVRTC itself:
 *   kfscanfuzz SEED N
 * generates N small sources that try to include a marker header, probe for
 * it (__has_include, libcu++'s _CCCL_HAS_INCLUDE, pasted names) or run a
 * pragma (_Pragma, pasted, libcu++'s _CCCL_PRAGMA, universal character
 * names) through preprocessor corners (splices, comments across lines, CR,
 * digraphs, unterminated literals, raw strings, macros), and for every
 * source the scan accepts, asks NVRTC to compile it with the marker's
 * directory and the toolkit's headers on the include path. The marker's
 * #error or a `#pragma message` naming it in the log is a bypass. Prints
 * "accepted A of N, bypasses B" (and each bypass); exit 1 on a bypass,
 * 2 when NVRTC is missing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/buf.h"
#include "core/fsutil.h"
#include "engine/candidate.h"
#include "engine/nvrtc.h"

static const char *const pieces[] = {
	"", " ", "\t", "/* c */", "/*\n*/", "//x\n", "\\\n", "\r", "\r\n", "\n", "\"", "'",
	"\"\\\"", "'\\''", "R\"(", ")\"", "R\"x(", ")x\"", "1'2", "u8", "L", "#", "%:", "/", "*",
	"#define A\n", "#if 0\n", "#endif\n", "int a;", "/*", "*/", "#define S \"kf_marker.h\"\n",
	"#define Q <kf_marker.h>\n", "\\", "\f", "\v", "\\\r\n", "*\\\r\n/", "/\\\n*",
};
static const char soup[] = "\"'/\\*#%:\n\r?R()<> \tu8L";
static const char *const incs[] = {
	"#include \"kf_marker.h\"", "#include <kf_marker.h>", "%:include \"kf_marker.h\"",
	"# include \"kf_marker.h\"", "#\\\ninclude \"kf_marker.h\"", "#inc\\\nlude \"kf_marker.h\"",
	"#include S", "#include Q", "#include_next \"kf_marker.h\"", "#import \"kf_marker.h\"",
	"%:\\\ninclude <kf_marker.h>", "#include\\\n\"kf_marker.h\"", "#include INC(kf_marker.h)",
	/* Probes: the marker's existence turns into an #error. */
	"#if __has_include(<kf_marker.h>)\n#error KF_MARKER_INCLUDED\n#endif",
	"#if __has_inc\\\nlude(\"kf_marker.h\")\n#error KF_MARKER_INCLUDED\n#endif",
	"#define C1(a, b) a##b\n#define C2(a, b) C1(a, b)\n"
	"#if C2(__has_, include)(<kf_marker.h>)\n#error KF_MARKER_INCLUDED\n#endif",
	"#define H(x) __has_##x\n#if H(include)(<kf_marker.h>)\n#error KF_MARKER_INCLUDED\n#endif",
	"#include <cuda/std/cstdint>\n#if _CCCL_HAS_INCLUDE(<kf_marker.h>)\n#error KF_MARKER_INCLUDED\n#endif",
	/* Pragmas: a `#pragma message` naming the marker. */
	"_Pragma(\"message(\\\"KF_MARKER_INCLUDED\\\")\")",
	"#pragma message(\"KF_MARKER_INCLUDED\")", "%:pragma message(\"KF_MARKER_INCLUDED\")",
	"#define P(x) _Pragma(#x)\nP(message(\"KF_MARKER_INCLUDED\"))",
	"#define C1(a, b) a %:%: b\n#define C2(a, b) C1(a, b)\n"
	"C2(_Pra, gma)(\"message(\\\"KF_MARKER_INCLUDED\\\")\")",
	"#define P(x) x##agma\n#define Q(x) P(x)\nQ(_Pr)(\"message(\\\"KF_MARKER_INCLUDED\\\")\")",
	"#include <cuda/std/cstdint>\n_CCCL_PRAGMA(message(\"KF_MARKER_INCLUDED\"))",
	"_Pr\\u0061gma(\"message(\\\"KF_MARKER_INCLUDED\\\")\")",
};

static unsigned long long rng;
static unsigned rnd(unsigned n)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned)((rng >> 33) % n);
}

/* Compiles src: 1 when the marker's #error fired, 2 when a pragma message
 * named it (what they print; a source line echoed in the log holds
 * neither), 0 otherwise. */
static int run(struct nvrtc *nv, const char *src, const char *const opts[5])
{
	kf_nvrtcProgram prog;
	size_t sz = 0;
	char *log;
	int r = 0;

	if (nv->CreateProgram(&prog, src, "c.cu", 0, NULL, NULL) != 0)
		return 0;
	nv->CompileProgram(prog, 5, opts);
	nv->GetProgramLogSize(prog, &sz);
	log = calloc(1, sz + 1);
	if (log && nv->GetProgramLog(prog, log) == 0)
		r = strstr(log, "#pragma message: \"KF_MARKER_INCLUDED") ? 2
		    : strstr(log, "#error directive: KF_MARKER_INCLUDED") ? 1 : 0;
	free(log);
	nv->DestroyProgram(&prog);
	return r;
}

int main(int argc, char **argv)
{
	struct nvrtc nv;
	struct buf err = BUF_INIT, src = BUF_INIT, marker = BUF_INIT, inc = BUF_INIT;
	struct buf cuda = BUF_INIT, cuda_inc = BUF_INIT, cccl_inc = BUF_INIT;
	static const char marker_text[] = "#error KF_MARKER_INCLUDED\n";
	const char *opts[5];
	int n, accepted = 0, bypasses = 0;
	char tmpl[] = "/tmp/kfscanfuzz.XXXXXX";

	if (argc != 3)
		return 2;
	rng = strtoull(argv[1], NULL, 10) * 2654435761ULL + 1;
	n = atoi(argv[2]);
	nvrtc_init(&nv);
	if (nvrtc_load(&nv, &err) < 0) {
		fprintf(stderr, "kfscanfuzz: %s\n", err.s);
		return 2;
	}
	if (!mkdtemp(tmpl))
		return 2;
	buf_setf(&marker, "%s/kf_marker.h", tmpl);
	if (write_file_atomic(marker.s, marker_text, strlen(marker_text), &err) < 0) {
		fprintf(stderr, "kfscanfuzz: %s\n", err.s);
		return 2;
	}
	buf_setf(&inc, "-I%s", tmpl);
	/* The toolkit's headers as the engine gives them (engine/compile.c). */
	if (nvrtc_include_dir(&cuda) == 0) {
		buf_setf(&cuda_inc, "-I%s", cuda.s);
		buf_setf(&cccl_inc, "-I%s/cccl", cuda.s);
	} else {
		buf_setf(&cuda_inc, "-I%s", tmpl);
		buf_setf(&cccl_inc, "-I%s", tmpl);
	}
	opts[0] = "--gpu-architecture=sm_90";
	opts[1] = "-std=c++17";
	opts[2] = inc.s;
	opts[3] = cuda_inc.s;
	opts[4] = cccl_inc.s;
	for (int i = 0; i < n; i++) {
		int soup_mode = i % 2, k;
		buf_reset(&src);
		buf_adds(&src, "#define STR(x) #x\n#define INC(x) STR(x)\n");
		for (k = (int)rnd(soup_mode ? 15 : 7); k > 0; k--) {
			if (soup_mode)
				buf_addc(&src, soup[rnd(sizeof(soup) - 1)]);
			else
				buf_adds(&src, pieces[rnd(sizeof(pieces) / sizeof(pieces[0]))]);
		}
		buf_adds(&src, incs[rnd(sizeof(incs) / sizeof(incs[0]))]);
		for (k = (int)rnd(5); k > 0; k--)
			buf_addc(&src, soup[rnd(sizeof(soup) - 1)]);
		buf_adds(&src, "\nint z;\n");
		if (candidate_scan_source(src.s, src.len, 1, &err) < 0)
			continue;
		accepted++;
		{
			int r = run(&nv, src.s, opts);
			/* An #error that fires also when the marker's name is changed
			 * was never conditional on the marker (the probe was not seen
			 * as one by NVRTC either): no bypass. */
			if (r == 1) {
				struct buf ctl = BUF_INIT;
				for (const char *p = src.s, *q; *p; p = q + 11) {
					q = strstr(p, "kf_marker.h");
					if (!q) {
						buf_adds(&ctl, p);
						break;
					}
					buf_add(&ctl, p, (size_t)(q - p));
					buf_adds(&ctl, "kf_nomark.h");
				}
				if (run(&nv, ctl.s, opts) == 1)
					r = 0;
				buf_release(&ctl);
			}
			if (r) {
				bypasses++;
				printf("BYPASS: ");
				for (size_t j = 0; j < src.len; j++)
					printf(src.s[j] == '\n' ? "\\n" : src.s[j] == '\r' ? "\\r" : "%c",
					       src.s[j]);
				printf("\n");
			}
		}
	}
	printf("accepted %d of %d, bypasses %d\n", accepted, n, bypasses);
	unlink(marker.s);
	rmdir(tmpl);
	/* NVRTC stays loaded (see compile_child.c). */
	buf_release(&err);
	buf_release(&src);
	buf_release(&marker);
	buf_release(&inc);
	buf_release(&cuda);
	buf_release(&cuda_inc);
	buf_release(&cccl_inc);
	return bypasses ? 1 : 0;
}
