#include "cmds.h"

#include <stdlib.h>
#include <string.h>

#include "collector/catalogue.h"
#include "collector/proposer.h"

int cmd_catalogue(int argc, char **argv, struct cli_ctx *ctx)
{
	int json = 0, realized = 0, n, rc;
	struct cli_opt opts[] = {
		OPT_FLAG("json", 0, &json, "print the catalogue as JSON"),
		OPT_END,
	};
	struct cli_spec spec = { "catalogue", "[--json]",
		"Lists the built-in proposer's optimization ideas: id, categories, the\n"
		"problem families they apply to, and the template that realizes them\n"
		"(ideas without one are listed but never proposed).\n", opts, NULL, 0, NULL, NULL };

	if ((rc = cli_parse(&spec, argc, argv, ctx, &n)) != CLI_GO)
		return rc;
	if (n > 0)
		return cli_fail(EXIT_USAGE, "catalogue: unexpected argument '%s'", argv[1]);
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
