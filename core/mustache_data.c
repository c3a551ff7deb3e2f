/* Data for rendering. jansson's default decoder wants an object or an
 * array at the top; the Mustache spec renders any JSON value as the root
 * context ("world" with {{.}}, 42, null, [1,2] with {{#.}}), so the data
 * is decoded with JSON_DECODE_ANY. */
#include "mustache.h"

#include "core/json.h"

json_t *mustache_data_parse(const char *s, size_t len, size_t max, struct buf *err)
{
	json_error_t je;
	json_t *v;

	if (len > max) {
		kf_err(err, "JSON text of %zu bytes is over the limit of %zu", len, max);
		return NULL;
	}
	v = json_loadb(s, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
	if (!v)
		kf_err(err, "invalid JSON at line %d column %d: %s", je.line, je.column, je.text);
	return v;
}

json_t *mustache_data_load(const char *path, size_t max, struct buf *err)
{
	struct buf b = BUF_INIT, e2 = BUF_INIT;
	json_t *v = NULL;

	if (buf_read_file(&b, path, max, err) < 0)
		goto out;
	v = mustache_data_parse(b.s, b.len, max, &e2);
	if (!v)
		kf_err(err, "%s: %s", path, e2.s);
out:
	buf_release(&b);
	buf_release(&e2);
	return v;
}
