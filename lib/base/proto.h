/*
 * proto.h - the control protocol between strobe and strobed.
 *
 * Over a Unix stream socket, each message is one line:
 *     VERB key=value key=value ...\n
 * VERB and keys are [a-z0-9_-]; values are percent-encoded (%XX) wherever
 * they hold '%', '=', space, control or non-ASCII bytes.  The client sends
 * one request and reads one reply, "ok ..." or "error msg=...".
 * Requests: start, stop, status, mark, rm, ping, shutdown, count-begin,
 * count-data, count-end.
 *   start  events= sample_event= freq= period= name= buffer_pages=
 *          marker0= marker1= ... (USDT probes, PATH:PROVIDER:NAME)
 *          call_graph= (fp, dwarf, dwarf,BYTES) keep_stacks= (0, 1; 1 from root only)
 *          attribution= (exact, sample)
 *   mark   text= time_ns= (the client's CLOCK_MONOTONIC when it was run)
 *   rm     sessions=ID,ID,... (replies removed=ID,ID,...)
 *   count-begin  name= start_ns= wall_offset_ns= ev0= ev1= ... (at most 8,
 *          TYPE:CONFIG:CONFIG1:CONFIG2:NAME): a count session of the
 *          caller's ('strobe count --save'); replies session=
 *   count-data   session= values= (countsave.h: T_NS,IDX,UNIT,VALUE,PCT;...)
 *   count-end    session= end_ns=
 * status replies running=0|1 and, while a session runs, session= samples=
 * lost= throttled= elapsed_ns= rate=, taken= (samples taken from the
 * rings, stored or not), nr_cpus= and per CPU, as lists N,N,... of the
 * first 1024: cpus= cpu_samples= (taken) cpu_lost=; stopping=1 while a
 * stop waits for the database; blocked_ms= and lock_holder= while another
 * process holds a lock on the database; removing=1 while removed
 * sessions' rows go; always db= and db_bytes= (file and WAL) db_wal_bytes=.
 */
#ifndef STROBE_PROTO_H
#define STROBE_PROTO_H

#include <stddef.h>
#include "util.h"

#define PROTO_MAX_LINE		65536
#define PROTO_MAX_FIELDS	32
#define PROTO_MAX_NAME		32

struct proto_msg {
	char verb[PROTO_MAX_NAME];
	int nr;
	struct proto_field {
		char key[PROTO_MAX_NAME];
		char *value;		/* malloc'ed, decoded */
	} f[PROTO_MAX_FIELDS];
};

void proto_init(struct proto_msg *m, const char *verb);
void proto_free(struct proto_msg *m);
/* Add a field (the value is copied). -1 if the message is full or the key bad. */
int proto_add(struct proto_msg *m, const char *key, const char *value);
int proto_addf(struct proto_msg *m, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Value of key, or NULL. */
const char *proto_get(const struct proto_msg *m, const char *key);

/* Encode as one line ending in '\n'; free() it. */
char *proto_format(const struct proto_msg *m);
/* Decode one line (without or with its '\n'). Malformed input (bad verb or
 * key, missing '=', bad escape, duplicate key, too many fields, too long)
 * fails with a message naming the problem. */
int proto_parse(const char *line, struct proto_msg *m, struct error *e);

/* Client: connect to path, send req, read the reply into resp. A reply
 * "error msg=..." is returned as -1 with e = the message. */
int proto_call(const char *path, const struct proto_msg *req,
	       struct proto_msg *resp, struct error *e);

#endif
