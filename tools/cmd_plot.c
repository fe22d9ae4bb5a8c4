/*
 * cmd_plot.c - strobe plot (work in progress: issue 4).
 */
#include "config.h"
#include "cmd.h"

int cmd_plot(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cmd_usage_error("plot", "not implemented yet");
}
