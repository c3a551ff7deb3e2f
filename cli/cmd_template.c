#include "cmds.h"

#include <stdlib.h>
#include <string.h>

#include "core/fsutil.h"
#include "core/json.h"
#include "site/mustache.h"

#define MAX_DATA (64u << 20)

const char usage_template[] =
	"kforge template render TEMPLATE DATA.json [--partials DIR]\n"
	"\n"
	"Renders the Mustache TEMPLATE with the JSON value in DATA.json to stdout.\n"
	"Partials {{>name}} and parents {{<name}} are read from DIR/name.mustache\n"
	"(default: the template's directory). DATA.json may be '-' for stdin.\n"
	"Limits: template 4 MiB, data 64 MiB, output 256 MiB.\n"
	"Exit status: 0 rendered, 1 read, compile or render error, 2 usage.\n";

static int read_data(const char *path, json_t **out, struct buf *err)
{
	struct buf b = BUF_INIT;
	char tmp[65536];
	size_t n;

	if (strcmp(path, "-")) {
		*out = mustache_data_load(path, MAX_DATA, err);
		return *out ? 0 : -1;
	}
	while ((n = fread(tmp, 1, sizeof(tmp), stdin)) > 0) {
		if (b.len + n > MAX_DATA) {
			buf_release(&b);
			return kf_err(err, "stdin: larger than the limit of %u bytes", MAX_DATA);
		}
		buf_add(&b, tmp, n);
	}
	*out = mustache_data_parse(b.s, b.len, MAX_DATA, err);
	if (!*out) {
		struct buf e2 = BUF_INIT;
		buf_addf(&e2, "stdin: %s", err->s);
		buf_reset(err);
		buf_add(err, e2.s, e2.len);
		buf_release(&e2);
	}
	buf_release(&b);
	return *out ? 0 : -1;
}

int cmd_template(int argc, char **argv, struct cli_ctx *ctx)
{
	static const struct option opts[] = {
		{ "partials", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *pdir = NULL, *tpath, *dpath;
	struct buf text = BUF_INIT, err = BUF_INIT, out = BUF_INIT, dir = BUF_INIT;
	struct mustache_tpl tpl;
	struct mustache_partials parts;
	json_t *data = NULL;
	int c, ret = EXIT_FAIL;

	(void)ctx;
	while ((c = cli_getopt(argc, argv, "template", "hp:", opts)) != -1) {
		if (c == -2)
			return EXIT_USAGE;
		if (c == 'p')
			pdir = optarg;
	}
	if (argc - optind != 3 || strcmp(argv[optind], "render")) {
		if (argc - optind >= 1 && strcmp(argv[optind], "render"))
			fprintf(stderr, "kforge template: unknown subcommand '%s'\n", argv[optind]);
		else
			fprintf(stderr, "kforge template render: needs TEMPLATE and DATA.json\n");
		return cli_usage("template");
	}
	tpath = argv[optind + 1];
	dpath = argv[optind + 2];
	if (pdir && !is_dir(pdir))
		return cli_fail(EXIT_FAIL, "template: --partials %s: not a directory", pdir);
	if (!pdir) {
		const char *slash = strrchr(tpath, '/');
		if (slash)
			buf_add(&dir, tpath, (size_t)(slash - tpath) + (slash == tpath));
		else
			buf_adds(&dir, ".");
		pdir = dir.s;
	}
	mustache_init(&tpl);
	mustache_partials_dir(&parts, pdir);
	mustache_set_name(&tpl, tpath);
	if (buf_read_file(&text, tpath, MUSTACHE_MAX_TEMPLATE, &err) < 0 ||
	    mustache_compile(&tpl, text.s, text.len, &err) < 0 ||
	    read_data(dpath, &data, &err) < 0 ||
	    mustache_render(&tpl, data, &parts, &out, &err) < 0) {
		cli_fail(EXIT_FAIL, "template: %s", err.s);
		goto out;
	}
	if (fwrite(out.s, 1, out.len, stdout) != out.len || fflush(stdout)) {
		cli_fail(EXIT_FAIL, "template: writing stdout failed");
		goto out;
	}
	ret = EXIT_OK;
out:
	json_decref(data);
	mustache_partials_release(&parts);
	mustache_release(&tpl);
	buf_release(&text);
	buf_release(&err);
	buf_release(&out);
	buf_release(&dir);
	return ret;
}
