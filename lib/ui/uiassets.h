/*
 * uiassets.h - the page's files (ui/), built into the binary at build time
 * by tools/ui-embed.sh into uiassets.c: no file is read at run time.
 */
#ifndef STROBE_UIASSETS_H
#define STROBE_UIASSETS_H

#include <stddef.h>

struct ui_asset {
	const char *path;		/* "/index.html", "/vendor/uPlot.min.css" */
	const char *type;		/* its Content-Type */
	const unsigned char *data;
	size_t len;
};

extern const struct ui_asset ui_assets[];
extern const size_t ui_nassets;

#endif
