/*
 * cmd_export.c - strobe export (work in progress: issue 4).
 */
#include "config.h"
#include "cmd.h"

int cmd_export(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cmd_usage_error("export", "not implemented yet");
}
