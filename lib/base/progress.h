/*
 * progress.h - a progress meter on a terminal: one line, redrawn in place
 * with \r, for the long reads of 'strobe report', 'export', 'plot',
 * 'flamegraph' and 'diff'.
 *
 *	strobe export: 43% 1.2 M of 2.8 M samples, 2.1 s, 0:03 left
 *
 * The caller owns a struct progress (there is no global state).  It shows
 * only when its fd is a terminal and STROBE_PROGRESS is not "0", and then
 * only once the operation has run for the delay (1000 ms; the environment
 * variable STROBE_PROGRESS_DELAY_MS overrides it): what finishes sooner
 * draws nothing.  Past the delay it is redrawn at most 10 times a second,
 * clipped to the terminal's width, and progress_done() erases it, so that
 * the output left on the terminal is what it would be without it.
 *
 * progress_update() is cheap enough to call for every row: an increment
 * and a compare, the clock read only every 'every' calls, which adapts so
 * that the clock is read about every 10 ms.  Every function accepts a NULL
 * progress and does nothing with it, so that libraries can take an
 * optional one.
 */
#ifndef STROBE_PROGRESS_H
#define STROBE_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

struct progress {
	int on;			/* may draw: fd is a terminal, not turned off */
	int fd;
	const char *label;	/* "strobe export" */
	const char *unit;	/* "samples" */
	uint64_t total;		/* 0: unknown (no percentage) */
	uint64_t done;
	uint64_t start_ns, phase_ns;	/* CLOCK_MONOTONIC at init and phase */
	uint64_t delay_ns;
	uint64_t last_check_ns, last_draw_ns;
	uint32_t ticks, every;	/* calls since the clock was read; period */
	int drawn;		/* a line is on the terminal */
};

/* Start p for an operation of total units (0: unknown) named unit. */
void progress_init(struct progress *p, const char *label, int fd, uint64_t total,
		   const char *unit);
/* A new total and unit: a second phase, counted from 0 (the delay still
 * runs from progress_init()). */
void progress_phase(struct progress *p, uint64_t total, const char *unit);
/* A new total for this phase, done kept (a total that turned out smaller
 * than planned). */
void progress_total(struct progress *p, uint64_t total);
void progress_tick(struct progress *p);
/* done of the total so far: non-decreasing within a phase. */
static inline void progress_update(struct progress *p, uint64_t done)
{
	if (!p || !p->on)
		return;
	p->done = done;
	if (++p->ticks >= p->every)
		progress_tick(p);
}

static inline void progress_add(struct progress *p, uint64_t n)
{
	if (p && p->on)
		progress_update(p, p->done + n);
}

/* The end: the line, if drawn, is erased. */
void progress_done(struct progress *p);

/*
 * The line (no \r) for done of total units after elapsed_ns of this
 * phase, into buf, at most width - 1 characters (so that the cursor stays
 * on the line) and size - 1 bytes: the label, the percentage, done and
 * total with k/M/G suffixes, the elapsed seconds and the time left
 * (elapsed * (total - done) / done), the parts that do not fit left out
 * from the end.  Returns the length.
 */
size_t progress_format(char *buf, size_t size, const char *label, uint64_t done,
		       uint64_t total, const char *unit, uint64_t elapsed_ns, int width);

#endif
