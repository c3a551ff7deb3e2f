#include "cmds.h"

#include <stdlib.h>
#include <string.h>

#include "core/fsutil.h"
#include "core/json.h"
#include "core/mustache.h"

#define MAX_DATA (64u << 20)

static const char render_args[] = "TEMPLATE DATA.json [--partials DIR]";

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

static int sub_render(int argc, char **argv, struct cli_ctx *ctx)
{
	const char *pdir = NULL, *tpath, *dpath;
	struct buf text = BUF_INIT, err = BUF_INIT, out = BUF_INIT, dir = BUF_INIT;
	struct mustache_tpl tpl;
	struct mustache_partials parts;
	json_t *data = NULL;
	int ret = EXIT_FAIL, n;
	struct cli_opt opts[] = {
		OPT_STR("partials", 'p', &pdir, "DIR",
			"where partials and parents are read (default: the template's directory)"),
		OPT_END,
	};
	struct cli_spec spec = { "template render", render_args,
		"Renders the Mustache TEMPLATE with the JSON value in DATA.json to stdout.\n"
		"Partials {{>name}} and parents {{<name}} are read from DIR/name.mustache.\n"
		"DATA.json may be '-' for stdin.\n"
		"Limits: template 4 MiB, data 64 MiB, output 256 MiB.\n", opts,
		"Exit status: 0 rendered, 1 read, compile or render error, 2 usage.\n", 0, NULL, NULL };

	if ((ret = cli_parse(&spec, argc, argv, ctx, &n)) != CLI_GO)
		return ret;
	ret = EXIT_FAIL;
	if (n != 2) {
		fprintf(stderr, "kforge template render: needs TEMPLATE and DATA.json\n");
		return cli_usage(&spec);
	}
	tpath = argv[1];
	dpath = argv[2];
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
	if ((fwrite(out.s, 1, out.len, stdout) != out.len || fflush(stdout)) && !cli_stdout_gone()) {
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

int cmd_template(int argc, char **argv, struct cli_ctx *ctx)
{
	static const struct cli_sub subs[] = {
		{ "render", sub_render, render_args, "render a Mustache template with JSON data to stdout" },
		{ NULL, NULL, NULL, NULL },
	};
	return cli_dispatch("template", "Renders Mustache templates (the site's engine) with JSON data.\n",
			    subs, argc, argv, ctx);
}
