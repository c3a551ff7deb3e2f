/* A candidate file (docs/formats.md): CUDA C++ device code followed by one
 * launch block in a comment (a line "/" "*@launch" ... a line "@*" "/").
 *
 * candidate_parse splits the file, bounds its size, and runs the include
 * scan; it is the whole format check that happens before NVRTC sees the
 * code. The file is UTF-8 text without NUL bytes. The include scan is the
 * guarantee that NVRTC reads nothing from the disk on the candidate's
 * behalf and runs no pragma but unroll: only `#include <NAME>` with NAME on
 * the allow-list passes; quotes, paths, macros as include names,
 * `#include_next`, `#import`, `#embed`, `#line`, `#pragma` other than
 * unroll/nounroll, names containing `pragma`/`has_include`/`has_embed`
 * (`_Pragma`, `__has_include`, libcu++'s `_CCCL_PRAGMA`), a `##` that
 * could paste such a name, unterminated literals and the clock macros are
 * all format errors (docs/formats.md). Errors read "LINE:COL: message"
 * with positions in the candidate file (1-based, columns in bytes). */
#ifndef KF_CANDIDATE_H
#define KF_CANDIDATE_H

#include <stddef.h>
#include "core/buf.h"

#define CANDIDATE_MAX_BYTES (256 * 1024)
#define CANDIDATE_MAX_LINE 4096       /* bytes in one line */

struct candidate {
	char *text;            /* canonical whole file (LF line ends), owned */
	size_t len;
	char *device_src;      /* the code: the file up to the launch block's first
				  line, same lines as the file (NVRTC's line numbers
				  are the file's), owned */
	size_t device_len;
	char *launch_text;     /* the launch block's body, between the marker lines,
				  owned; "" when parsing failed */
	int launch_line;       /* file line of launch_text's first line (1-based) */
};

void candidate_init(struct candidate *c);
void candidate_release(struct candidate *c);

/* Canonicalises (CRLF -> LF; NUL bytes, bytes that are not UTF-8 and
 * over-size are errors), splits and scans. 0, or -1 with a "LINE:COL: ..." format error in err. On error
 * c->text is still set when the file could be read (for the store). */
int candidate_parse(struct candidate *c, const char *text, size_t len, struct buf *err);

/* The include / preprocessor scan of device code alone (also run by the
 * compile child, as a second line of defence). first_line is the file line
 * of src's first line. 0 or -1 with "LINE:COL: ..." in err. */
int candidate_scan_source(const char *src, size_t len, int first_line, struct buf *err);

/* 1 if NAME (the text between < and >) is on the allow-list. */
int candidate_include_allowed(const char *name);

/* Content address of a candidate: sha256 hex of its canonical text (CRLF
 * -> LF, trailing whitespace of each line dropped, exactly one final
 * newline). Identical candidates hash alike whatever their line ends. */
void candidate_hash(const char *text, size_t len, char hex[65]);
/* The canonical text that candidate_hash hashes (for the store's kernels.source). */
void candidate_canonical(const char *text, size_t len, struct buf *out);

/* Joins a code fence and a separate launch fence of an LLM response into
 * one candidate file (adds the markers when the launch text lacks them). */
void candidate_assemble(const char *code, const char *launch, struct buf *out);

#endif
