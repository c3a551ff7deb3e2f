/* Differential test of the include scan against NVRTC itself:
 *   kfscanfuzz SEED N
 * generates N small sources that try to include a marker header through
 * preprocessor corners (splices, comments across lines, CR, digraphs,
 * unterminated literals, raw strings, macros), and for every source the
 * scan accepts, asks NVRTC to preprocess it with the marker's directory on
 * the include path. A marker that shows up is a bypass. Prints
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
};

static unsigned long long rng;
static unsigned rnd(unsigned n)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned)((rng >> 33) % n);
}

int main(int argc, char **argv)
{
	struct nvrtc nv;
	struct buf err = BUF_INIT, src = BUF_INIT, marker = BUF_INIT, inc = BUF_INIT;
	static const char marker_text[] = "#error KF_MARKER_INCLUDED\n";
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
			kf_nvrtcProgram prog;
			const char *opts[] = { "--gpu-architecture=sm_90", inc.s, "--preprocess" };
			size_t sz = 0;
			char *log;
			if (nv.CreateProgram(&prog, src.s, "c.cu", 0, NULL, NULL) != 0)
				continue;
			nv.CompileProgram(prog, 2, opts);
			nv.GetProgramLogSize(prog, &sz);
			log = calloc(1, sz + 1);
			if (log && nv.GetProgramLog(prog, log) == 0 && strstr(log, "KF_MARKER_INCLUDED")) {
				bypasses++;
				printf("BYPASS: ");
				for (size_t j = 0; j < src.len; j++)
					printf(src.s[j] == '\n' ? "\\n" : src.s[j] == '\r' ? "\\r" : "%c",
					       src.s[j]);
				printf("\n");
			}
			free(log);
			nv.DestroyProgram(&prog);
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
	return bypasses ? 1 : 0;
}
