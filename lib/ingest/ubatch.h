/*
 * ubatch.h - the samples ingest (sample.c) holds while their user stacks
 * wait to be unwound in a batch by the unwind worker (uworker.h): one
 * round trip for many samples instead of one each.
 *
 * A held sample is a copy of its record (its callchain, registers and
 * stack copy included: the record's own bytes are the caller's and gone
 * when ingest_record() returns); nothing else of ingest's is kept, no
 * struct proc pointer: the process is looked up again when the sample is
 * finished.  Entry i is sample i of the uworker's batch.
 *
 * The invariants that make finishing a held sample later the same as
 * finishing it at once are sample.c's, written where it relies on them
 * (samples_flush): the samples are flushed, in the order they came,
 * before anything else changes what finishing depends on.
 */
#ifndef STROBE_UBATCH_H
#define STROBE_UBATCH_H

#include <stddef.h>
#include "record.h"

struct ubatch;

struct ubatch *ubatch_new(void);
void ubatch_free(struct ubatch *q);
/* Hold a copy of sample r (STROBE_REC_SAMPLE) as the next entry. */
void ubatch_put(struct ubatch *q, const struct record *r);
size_t ubatch_nr(const struct ubatch *q);
/* Entry i (< ubatch_nr()), valid until ubatch_clear(). */
const struct record *ubatch_get(const struct ubatch *q, size_t i);
/* Forget every entry (their buffers are kept for the next ones). */
void ubatch_clear(struct ubatch *q);

#endif
