/* Text from outside (LLM servers, model output, files) on its way to a
 * terminal or a message: control characters would move the cursor, clear
 * the screen, set the window title, forge hyperlinks (OSC 8) or reorder
 * what is shown (bidi overrides). These make them inert. */
#ifndef KF_TERMSAFE_H
#define KF_TERMSAFE_H

#include <stddef.h>
#include "buf.h"

/* Length of the dangerous character at s (at most n bytes): 1 for a C0
 * control (tab and newline included) or DEL, 2 for a C1 control
 * (U+0080-U+009F), 3 for a bidi control (U+061C as 2, U+200E-U+200F,
 * U+202A-U+202E, U+2066-U+2069); 0 when s starts no such character. */
size_t text_control_len(const char *s, size_t n);

#define TERMSAFE_KEEP_NL 1u /* keep '\n' and '\t' (multi-line messages) */

/* Appends s (n bytes) with every control character above and every byte
 * that is not well-formed UTF-8 written as a visible escape (\x1b, \n,
 * \u202e), so nothing reaches the terminal as a control. ESC, and with it
 * every CSI/OSC sequence, becomes text. Returns how many were escaped. */
size_t termsafe_add(struct buf *out, const char *s, size_t n, unsigned flags);
/* Makes b itself safe that way. */
void termsafe_buf(struct buf *b, unsigned flags);

#endif
