/*
 * probe_file.h - the latest probe, kept per user so that 'strobe plot
 * --expect' can draw its expected onsets: $XDG_CACHE_HOME/strobe/probe.json
 * (else ~/.cache/strobe/probe.json), the JSON 'strobe probe --format json'
 * prints.  The directory is created 0700; a symlink at the directory or the
 * file, or either owned by another user, is refused, and the file is
 * replaced by a rename from a new file created O_EXCL beside it.
 */
#ifndef STROBE_PROBE_FILE_H
#define STROBE_PROBE_FILE_H

#include <stddef.h>
#include "probe.h"
#include "util.h"

/* The file's path into buf.  -1 (e set) when neither XDG_CACHE_HOME nor
 * HOME is set to an absolute path. */
int probe_file_path(char *buf, size_t len, struct error *e);

/* Write r (as probe_table's JSON) to the file; creates the directory. */
int probe_file_save(const struct probe_result *r, struct error *e);

/* Read the rows back (kind, size_bytes, line_bytes, ways, latency_ns,
 * error_pct, pages, l2_tlb_pages, note).  1 when read, 0 when there is no file, -1 (e set)
 * when it cannot be read or parsed. */
int probe_file_load(const char *path, struct probe_result *r, struct error *e);

/* Parse the JSON text of probe_table into r (tests use it directly). */
int probe_file_parse(const char *text, struct probe_result *r, struct error *e);

#endif
