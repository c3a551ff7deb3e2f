/* The short text form of a kernel's profile that goes into a prompt
 * (kforge search --profile-feedback). The profile comes from the store:
 * numbers are formatted here, the limiter is one of the known four, and
 * kernel names, the only free text, are capped and reduced to the
 * characters of a C++ name. */
#include "collector/proposer.h"
#include "core/json.h"
#include "store/store_profile.h"

#include <string.h>

#define NAME_MAX_BYTES 48

static int num(const json_t *o, const char *k, double *v)
{
	const json_t *x = json_object_get(o, k);
	if (!json_is_number(x))
		return 0;
	*v = json_number_value(x);
	return 1;
}

static void add_bytes(struct buf *b, double v)
{
	if (v >= 1e9)
		buf_addf(b, "%.3g GB", v / 1e9);
	else if (v >= 1e6)
		buf_addf(b, "%.3g MB", v / 1e6);
	else if (v >= 1e3)
		buf_addf(b, "%.3g KB", v / 1e3);
	else
		buf_addf(b, "%.0f B", v < 0 ? 0 : v);
}

static void add_pct(struct buf *b, const json_t *o, const char *k, const char *label)
{
	double v;
	if (num(o, k, &v))
		buf_addf(b, "; %s %.0f%%", label, v < 0 ? 0 : v > 999 ? 999 : v);
}

static void add_name(struct buf *b, const char *s)
{
	size_t n = 0;

	if (!s || !*s) {
		buf_adds(b, "(unnamed)");
		return;
	}
	for (; s[n] && n < NAME_MAX_BYTES; n++) {
		unsigned char c = (unsigned char)s[n];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			 (c && strchr("_:<>,.()*&~ -", c));
		buf_addc(b, ok ? (char)c : '?');
	}
	if (s[n])
		buf_adds(b, "...");
}

void proposer_profile_text(const json_t *prof, struct buf *out)
{
	const json_t *ks = json_object_get(prof, "kernels");
	const char *lim = json_string_value(json_object_get(prof, "limiter"));
	size_t top[3], ntop = 0, i;
	double v, r, w;

	buf_reset(out);
	if (!json_is_object(prof))
		return;
	buf_addf(out, "limiter %s", store_profile_limiter_ok(lim) ? lim : "unknown");
	if (num(prof, "kernel_ms", &v))
		buf_addf(out, "; kernel time %.4g ms", v);
	if (num(prof, "launches", &v))
		buf_addf(out, " over %.0f launch%s", v < 0 ? 0 : v > 1e9 ? 1e9 : v, v == 1 ? "" : "es");
	add_pct(out, prof, "dram_pct", "DRAM");
	if (num(prof, "dram_read_bytes", &r) | num(prof, "dram_write_bytes", &w)) {
		buf_adds(out, " (");
		if (num(prof, "dram_read_bytes", &r)) {
			buf_adds(out, "read ");
			add_bytes(out, r);
		}
		if (num(prof, "dram_write_bytes", &w)) {
			buf_adds(out, num(prof, "dram_read_bytes", &r) ? ", write " : "write ");
			add_bytes(out, w);
		}
		buf_addc(out, ')');
	}
	add_pct(out, prof, "l2_hit_pct", "L2 hit");
	add_pct(out, prof, "sm_pct", "SM");
	add_pct(out, prof, "tensor_pct", "tensor");
	add_pct(out, prof, "occupancy_pct", "occupancy");
	buf_addc(out, '\n');
	/* the three longest kernels, ties by index: one pass, whatever the count */
	for (i = 0; i < json_array_size(ks); i++) {
		double d = -1, e;
		size_t j;
		num(json_array_get(ks, i), "duration_ms", &d);
		for (j = ntop; j > 0; j--) {
			e = -1;
			num(json_array_get(ks, top[j - 1]), "duration_ms", &e);
			if (e >= d)
				break;
		}
		if (j >= 3)
			continue;
		if (ntop < 3)
			ntop++;
		memmove(&top[j + 1], &top[j], (ntop - 1 - j) * sizeof(top[0]));
		top[j] = i;
	}
	if (ntop)
		buf_addf(out, "longest kernels of %zu:\n", json_array_size(ks));
	for (i = 0; i < ntop; i++) {
		const json_t *k = json_array_get(ks, top[i]);
		buf_adds(out, "- ");
		add_name(out, json_string_value(json_object_get(k, "name")));
		if (num(k, "duration_ms", &v))
			buf_addf(out, ": %.4g ms", v);
		if (num(k, "registers", &v))
			buf_addf(out, ", %.0f registers", v < 0 ? 0 : v > 1e6 ? 1e6 : v);
		if (num(k, "shared_bytes", &v)) {
			buf_adds(out, ", shared ");
			add_bytes(out, v);
		}
		lim = json_string_value(json_object_get(k, "limiter"));
		if (store_profile_limiter_ok(lim))
			buf_addf(out, ", %s-limited", lim);
		buf_addc(out, '\n');
	}
	if (out->len > PROPOSER_PROFILE_TEXT_MAX)
		buf_truncate(out, PROPOSER_PROFILE_TEXT_MAX);
}
