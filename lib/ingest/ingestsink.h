/*
 * ingestsink.h - ingest as a capture sink (sink.h): what strobed wires
 * between a session's backend and its ingest.
 */
#ifndef STROBE_INGESTSINK_H
#define STROBE_INGESTSINK_H

#include "ingest.h"
#include "sink.h"

/* Fill k with callbacks that feed in (ingest.h's functions, one each). */
void ingestsink_init(struct sink *k, struct ingest *in);

#endif
