/* UTF-8 checks for texts from outside (candidate files, LLM responses,
 * compiler logs). The store keeps text columns as valid UTF-8 without NUL
 * bytes: jansson refuses anything else in its checked constructors, and the
 * dataset's JSON Lines could not hold it. */
#ifndef KF_UTF8_H
#define KF_UTF8_H

#include <jansson.h>
#include <stddef.h>
#include "buf.h"

/* Length of the well-formed UTF-8 sequence at s (at most n bytes): 1-4,
 * or 0 when s[0] does not start one (overlong forms, surrogates and code
 * points past U+10FFFF are not well formed). A NUL byte counts as 1. */
size_t utf8_seq_len(const char *s, size_t n);

/* Offset of the first byte that is NUL or not part of a well-formed
 * sequence; n when there is none. */
size_t utf8_first_bad(const char *s, size_t n);

/* Appends s to out with every such byte replaced by U+FFFD; returns how
 * many were replaced. */
size_t utf8_add_clean(struct buf *out, const char *s, size_t n);

/* A new JSON string of s made valid that way (never NULL). */
json_t *json_utf8(const char *s, size_t n);

#endif
