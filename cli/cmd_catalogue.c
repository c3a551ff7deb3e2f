#include "cmds.h"

#include <stdlib.h>
#include <string.h>

#include "collector/catalogue.h"
#include "collector/proposer.h"

const char usage_catalogue[] =
	"kforge catalogue [--json]\n"
	"  Lists the built-in proposer's optimization ideas: id, categories, the\n"
	"  problem families they apply to, and the template that realizes them\n"
	"  (ideas without one are listed but never proposed).\n";

int cmd_catalogue(int argc, char **argv, struct cli_ctx *ctx)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	int c, json = 0, realized = 0;

	(void)ctx;
	while ((c = cli_getopt(argc, argv, "catalogue", "h", opts)) != -1) {
		if (c == -2)
			return EXIT_USAGE;
		if (c == 'j')
			json = 1;
	}
	if (optind < argc)
		return cli_fail(EXIT_USAGE, "catalogue: unexpected argument '%s'", argv[optind]);
	if (json) {
		json_t *a = catalogue_json();
		char *s = json_dumps(a, JSON_INDENT(2));
		puts(s);
		free(s);
		json_decref(a);
		return EXIT_OK;
	}
	for (int i = 0; i < catalogue_count; i++) {
		const struct catalogue_idea *it = &catalogue[i];
		struct buf cats = BUF_INIT, fams = BUF_INIT;
		for (int b = 0; b < CAT_COUNT; b++)
			if (it->categories & (1u << b))
				buf_addf(&cats, "%s%s", cats.len ? "," : "", idea_category_name(b));
		for (int b = 0; b < FAM_COUNT; b++)
			if (it->families & (1u << b))
				buf_addf(&fams, "%s%s", fams.len ? "," : "", family_name(b));
		printf("%-20s %-24s %-30s %s\n    %s\n", it->id, cats.s, fams.s,
		       it->template_id ? it->template_id : "(no template yet)", it->text);
		realized += it->template_id != NULL;
		buf_release(&cats);
		buf_release(&fams);
	}
	printf("%d ideas, %d realized by templates\n", catalogue_count, realized);
	return EXIT_OK;
}
