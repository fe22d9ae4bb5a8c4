/*
 * strobe_dev.h - the client side of /dev/strobe (kernel/strobe.ko): one
 * configured session of the driver, its per-CPU rings mapped, read record
 * by record.  The ABI is kernel/uapi/strobe.h; the ring protocol is
 * described there and in kernel/strobe.c.
 */
#ifndef STROBE_STROBE_DEV_H
#define STROBE_STROBE_DEV_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>
#include "record.h"
#include "util.h"

#define STROBE_DEV_PATH "/dev/strobe"

struct strobe_dev;

/*
 * Open path, configure one sampling event and nr counting events on the
 * given CPUs with pages of ring each, and map the rings.  config_flags are
 * strobe_config.flags (STROBE_CONFIG_CALLCHAIN: samples carry the kernel and
 * the frame-pointer user callchain).  Nothing runs until strobe_dev_start().
 * Errors name the device, the event and what to do (load the module, use
 * --backend perf, ...).
 */
struct strobe_dev *strobe_dev_open(const char *path, const struct perf_event_attr *sampler,
				   const char *sampler_name,
				   const struct perf_event_attr *counters,
				   const char *const *counter_names, int nr,
				   const int *cpus, int nr_cpus, unsigned pages,
				   uint32_t config_flags, struct error *e);

/* The pollable fd: readable when a ring passed its watermark, or after stop. */
int strobe_dev_fd(const struct strobe_dev *d);
/* STROBE_IOC_START; on failure errno is the ioctl's (ENOSPC: the PMU has
 * too few counters for the events). */
int strobe_dev_start(struct strobe_dev *d, struct error *e);
int strobe_dev_stop(struct strobe_dev *d);

/*
 * Hand each complete record of ring i (the i-th CPU given to open) to fn,
 * in the order written, then free the space.  Padding is skipped.  A
 * record that fails record_decode() is an error; the ring is skipped to
 * its head so that later records still arrive.
 */
typedef int (*strobe_dev_fn)(void *ctx, const struct record *r, struct error *e);
int strobe_dev_read(struct strobe_dev *d, int i, strobe_dev_fn fn, void *ctx,
		    struct error *e);

/*
 * For a thread that only empties the rings: the whole records ring i
 * holds, up to max bytes, as one span in two parts (it may wrap), given to
 * put with the number of records and samples in it; their space is freed
 * once put returns 0.  0: the ring was empty, 1: all copied, 2: some (the
 * rest, past max bytes, stays in the ring), -1: none (put refused, or not
 * one record fits in max).
 * Lock-free against the driver; one caller per ring at a time.
 */
typedef int (*strobe_dev_put_fn)(void *ctx, const void *a, size_t alen, const void *b,
				 size_t blen, uint64_t records, uint64_t samples);
int strobe_dev_copy(struct strobe_dev *d, int i, uint64_t max, strobe_dev_put_fn put,
		    void *ctx);

/* The records of such a copy of ring i (len bytes at buf) to fn, as
 * strobe_dev_read hands them; a malformed record skips the rest. */
int strobe_dev_parse(struct strobe_dev *d, int i, const void *buf, size_t len,
		     strobe_dev_fn fn, void *ctx, struct error *e);

/* Per-CPU statistics (entry i for the i-th CPU given to open). */
int strobe_dev_stats(struct strobe_dev *d, struct strobe_cpu_stats *out, struct error *e);

void strobe_dev_close(struct strobe_dev *d);

#endif
