/*
 * resolve.c - names for sampled locations (see resolve.h).  Work in
 * progress: the code still lives in report.c.
 */
#include "config.h"
#include "resolve.h"
