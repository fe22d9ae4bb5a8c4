/*
 * stacks_stub.c - stand-ins for stacks.h's loader while it is written on
 * another branch (ic-query): every call fails with a clear message.
 * Removed when that branch, which implements lib/query/stacks.c, merges.
 */
#include "config.h"
#include <stdlib.h>
#include "stacks.h"

struct stack_set *stacks_load(struct db *db, const struct report_opts *o, struct error *e)
{
	(void)db;
	(void)o;
	error_set(e, "call stacks cannot be read by this build (lib/query/stacks.c missing)");
	return NULL;
}

void stacks_free(struct stack_set *set)
{
	free(set);
}

int stacks_scan(struct db *db, const struct stack_set *set, const struct report_opts *o,
		stacks_sample_fn fn, void *ctx, struct error *e)
{
	(void)db;
	(void)set;
	(void)o;
	(void)fn;
	(void)ctx;
	return error_set(e, "call stacks cannot be read by this build (lib/query/stacks.c missing)");
}
