/* Throughput check for core/mustache: a ~10 KB template whose main
 * section runs over 100 items, rendered N times (default 10000).
 *   build/tests/mustache_bench [N]   (time it with `time`) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mustache.h"

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000;
	struct buf src = BUF_INIT, out = BUF_INIT, err = BUF_INIT;
	struct mustache_tpl t;
	json_t *items = json_array(), *data;
	size_t total = 0;

	buf_adds(&src, "<!doctype html>\n<html><head><title>{{title}}</title></head>\n<body>\n");
	while (src.len < 4500)
		buf_adds(&src, "<p class=\"intro\">Static text about kernels, timings and speedups.</p>\n");
	buf_adds(&src, "<table>\n{{#items}}\n  <tr><td>{{rank}}</td><td><a href=\"k/{{id}}.html\">{{name}}</a></td>"
		 "<td>{{speedup}}</td><td>{{#correct}}yes{{/correct}}{{^correct}}no{{/correct}}</td>"
		 "<td>{{#tags}}<span>{{.}}</span>{{/tags}}</td><td>{{gpu.name}}</td></tr>\n{{/items}}\n</table>\n");
	while (src.len < 10000)
		buf_adds(&src, "<p class=\"outro\">{{title}} footer text, links and notes for {{title}}.</p>\n");
	buf_adds(&src, "</body></html>\n");
	for (int i = 0; i < 100; i++)
		json_array_append_new(items, json_pack("{s:i, s:s, s:s, s:f, s:b, s:[s,s], s:{s:s}}",
			"rank", i + 1, "id", "level1-023-softmax", "name", "softmax <fused> & tiled",
			"speedup", 1.0 + i / 7.0, "correct", i % 3 != 0, "tags", "memory", "tiling",
			"gpu", "name", "H100"));
	data = json_pack("{s:s, s:o}", "title", "Level 1 results", "items", items);
	mustache_init(&t);
	if (mustache_compile(&t, src.s, src.len, &err) < 0) {
		fprintf(stderr, "%s\n", err.s);
		return 1;
	}
	for (long i = 0; i < n; i++) {
		buf_reset(&out);
		if (mustache_render(&t, data, NULL, &out, &err) < 0) {
			fprintf(stderr, "%s\n", err.s);
			return 1;
		}
		total += out.len;
	}
	printf("template %zu bytes, output %zu bytes, %ld renders, %zu bytes total\n",
	       src.len, out.len, n, total);
	mustache_release(&t);
	json_decref(data);
	buf_release(&src);
	buf_release(&out);
	buf_release(&err);
	return 0;
}
