/*
 * kallsyms.h - kernel symbols from a /proc/kallsyms snapshot.
 *
 * strobed snapshots /proc/kallsyms (text symbols only, as root so that
 * addresses are real) at session start and stores it in the bincache;
 * reports load the snapshot, not the live file, so a later reboot (KASLR)
 * or module change does not misname old samples.
 */
#ifndef STROBE_KALLSYMS_H
#define STROBE_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>
#include "util.h"

struct kallsyms;

/* Read /proc/kallsyms (or path) keeping text symbols, sorted by address,
 * as text "addr type name [module]\n" lines. Fails if all addresses are
 * zero (kptr_restrict). *buf is malloc'ed. */
int kallsyms_snapshot(const char *path, char **buf, size_t *len, struct error *e);

/* Parse a snapshot (as written by kallsyms_snapshot). */
struct kallsyms *kallsyms_parse(const char *buf, size_t len, struct error *e);
struct kallsyms *kallsyms_load(const char *path, struct error *e);
void kallsyms_free(struct kallsyms *k);

/* Symbol containing addr (the last symbol at or below it, within the
 * kernel text or a module), or NULL. *module is NULL for the core kernel. */
const char *kallsyms_lookup(const struct kallsyms *k, uint64_t addr,
			    uint64_t *offset, const char **module);

#endif
