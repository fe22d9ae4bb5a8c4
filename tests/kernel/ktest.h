/*
 * ktest.h - what the static guest test programs (reader.c, stress.c,
 * callchain.c) share: the PASS/FAIL/# line protocol, clocks, and the
 * driver's configuration.  Header-only, because each program is built
 * alone by lib.sh's guest_programs.  Include kernel/uapi/strobe.h first.
 */
#ifndef STROBE_KTEST_H
#define STROBE_KTEST_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The kernel's PAGE_SIZE: the unit of the driver's mmap offsets and sizes. */
#define STROBE_PAGE ((size_t)sysconf(_SC_PAGESIZE))

static int failures;

/* An attribute of event (type, config), all else zero. */
static inline void attr_init(struct perf_event_attr *a, uint32_t type, unsigned long long config)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = type;
	a->config = config;
}

/* A CONFIG request: sampler s, n counting events ctr, pages per CPU. */
static inline void cfg_init(struct strobe_config *c, struct perf_event_attr *s,
			    struct perf_event_attr *ctr, unsigned n, unsigned pages)
{
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	c->nr_counters = n;
	c->sample_attr = (uintptr_t)s;
	c->counter_attrs = (uintptr_t)ctr;
	c->attr_size = sizeof(*s);
	c->buffer_pages = pages;
}

/* "PASS name", or "FAIL name: why" (counted in failures; thread-safe). */
static void check(int ok, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), unused));
static void check(int ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		printf("PASS %s\n", name);
	} else {
		__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
		printf("FAIL %s: ", name);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("\n");
	}
	fflush(stdout);
}

/* "# ...": information, never a verdict. */
static void info(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));
static void info(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static __attribute__((unused)) unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static __attribute__((unused)) void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

#endif
