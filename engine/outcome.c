#include "engine.h"

#include <string.h>

void eval_outcome_init(struct eval_outcome *o)
{
	memset(o, 0, sizeof(*o));
	buf_init(&o->detail);
}

void eval_outcome_release(struct eval_outcome *o)
{
	buf_release(&o->detail);
	json_decref(o->phases);
	memset(o, 0, sizeof(*o));
	buf_init(&o->detail);
}
