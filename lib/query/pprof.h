/*
 * pprof.h - a stack_set as a pprof profile (profile.proto of
 * github.com/google/pprof), encoded here by hand and gzip-compressed.
 *
 * Sample types: samples/count, then, when the set is weighted, the
 * sampling event's summed periods (<event>/count), then one per counting
 * event (<event>/count).  default_sample_type is samples.  One sample per
 * stack_set entry, with labels pid (num) and comm (str).  One location
 * per distinct (binary, offset), its address the offset (a file offset;
 * a kernel address for the kernel), in a mapping per binary whose
 * memory_start/limit span the offsets used and whose file_offset equals
 * memory_start, with the binary's file name and build id; one function
 * per stack_sym, named as flame.h names frames (without "_[k]").
 * time_nanos is the session's start (wall clock), duration_nanos its
 * length, period_type the sampling event.
 */
#ifndef STROBE_PPROF_H
#define STROBE_PPROF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "stacks.h"
#include "util.h"

/* A growing protobuf message. */
struct pb {
	unsigned char *buf;
	size_t n, cap;
};

void pb_varint(struct pb *b, uint64_t v);
/* Field of wire type 0 (varint); zero values are written too. */
void pb_uint(struct pb *b, uint32_t field, uint64_t v);
/* Field of wire type 2 (length-delimited). */
void pb_bytes(struct pb *b, uint32_t field, const void *p, size_t len);
void pb_free(struct pb *b);

/* The uncompressed profile of set into out (pb_free it). */
void pprof_encode(const struct stack_set *set, struct pb *out);
/* set's profile, gzip-compressed, to f. */
int pprof_write(const struct stack_set *set, FILE *f, struct error *e);

#endif
