/*
 * binname.c - the name a binary is shown with (see binname.h).
 */
#include "config.h"
#include <string.h>
#include "binname.h"
#include "util.h"

int binname_is_kernel(const char *key)
{
	return !strncmp(key, "kernel:", 7);
}

int binname_is_nofile(const char *key)
{
	return key[0] == '[' || !key[0];
}

const char *binname_of(const char *key, const char *path, int flags)
{
	if (!key)
		return BINNAME_UNKNOWN;
	if (binname_is_kernel(key))
		return BINNAME_KERNEL;
	if (key[0] == '[' || !path || !path[0])
		return key[0] ? key : BINNAME_UNKNOWN;
	return flags & BINNAME_BASE ? util_path_base(path) : path;
}
