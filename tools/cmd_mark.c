/*
 * cmd_mark.c - strobe mark (work in progress: issue 4).
 */
#include "config.h"
#include "cmd.h"

int cmd_mark(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cmd_usage_error("mark", "not implemented yet");
}
