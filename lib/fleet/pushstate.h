/*
 * pushstate.h - what a ClickHouse server has of a host's session, asked
 * by push before it sends anything (push.h; push_check_schema() and
 * push_parse_batches() are there too).  Each a query through c, 0 or -1
 * with e set.
 */
#ifndef STROBE_PUSHSTATE_H
#define STROBE_PUSHSTATE_H

#include <stddef.h>
#include <stdint.h>
#include "push.h"

struct chclient;

/* The server's max_insert_block_size: the most rows a batch may have. */
int pushstate_batch_max(struct chclient *c, size_t *max, struct error *e);

/* The batch size of session of host on the server, into *rows if it is
 * there (left as it is otherwise). */
int pushstate_batch_rows(struct chclient *c, const char *host, int64_t session, size_t *rows,
			 struct error *e);

/* The session's interval rows on the server, checked (push_parse_intervals):
 * *iv malloc'ed, by k. */
int pushstate_intervals(struct chclient *c, const char *host, int64_t session,
			struct push_interval **iv, size_t *n, struct error *e);

/* The session's content hash on the server into hash (hsize bytes; empty:
 * none) and the batches it has into have[0..n); *extra set when it holds
 * batches numbered n or more, which this push does not make (the caller
 * compares the hash first: other content explains them). */
int pushstate_session(struct chclient *c, const char *host, int64_t session, char *hash,
		      size_t hsize, uint8_t *have, size_t n, int *extra, struct error *e);

#endif
