/*
 * phases.c - a workload whose CPU use changes at moments it prints: the
 * truth for 'strobe onsets' (issue 33).
 *
 *     phases DUTY:SECONDS [DUTY:SECONDS ...]
 *
 * Each phase runs for SECONDS, spinning DUTY percent (0..100) of every
 * period and sleeping the rest (to an absolute deadline, so the periods do
 * not drift), so that a sampling profiler sees its samples at DUTY percent
 * of one CPU.  A period's length is drawn at random from 1 to 3 ms: a
 * fixed one would lock onto a sampling timer's (2 ms against 2 kHz's
 * 500 us puts the same share of samples in the spin at 20 % and at 40 %).  Phase I spins in function spinI%4 (spin0 ..
 * spin3), so that each phase has code of its own ('strobe phases').  At
 * the start of each phase it prints
 *
 *     phase I duty DUTY start_ns NS
 *
 * NS being CLOCK_MONOTONIC in ns, the clock of strobe's sample times; and
 * "end_ns NS" after the last.  Output is flushed at each line.
 *
 * The machine may take the CPU from it for a while (another process, the
 * hypervisor): its samples then drop, a real change, though not one it
 * made.  It notes each such stall, a spin that got STALL_NS less CPU time
 * than wall time or whose clock reads show STALL_NS of gaps (the CPU
 * taken by the hypervisor may still count as its CPU time), or a sleep
 * that overran its deadline by STALL_NS, and
 * prints them after end_ns, one a line (the first MAX_STALLS):
 *
 *     stall FROM_NS TO_NS LOST_NS
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PERIOD_MIN_NS	1000000LL	/* a period: 1 to 3 ms */
#define PERIOD_SPAN_NS	2000000LL
#define MAX_PHASES	64
#define STALL_NS	2000000LL
#define MAX_STALLS	4096

static struct stall {
	int64_t from, to, lost;
} stalls[MAX_STALLS];
static int nstalls;

static void stall_note(int64_t from, int64_t to, int64_t lost)
{
	if (lost < STALL_NS)
		return;
	if (nstalls && stalls[nstalls - 1].to >= from - STALL_NS) {
		stalls[nstalls - 1].to = to;	/* one stall, continued */
		stalls[nstalls - 1].lost += lost;
		return;
	}
	if (nstalls < MAX_STALLS)
		stalls[nstalls++] = (struct stall){ from, to, lost };
}

static int64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_until(int64_t ns)
{
	struct timespec ts = { ns / 1000000000LL, ns % 1000000000LL };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static volatile uint64_t sink;

/* Spin until ns: a function each, so that a phase's samples name it.
 * Returns the time it did not run: the gaps between its clock reads
 * (every few us while it runs) longer than GAP_NS, which a preemption or
 * the hypervisor taking the CPU leaves, seen or not in its CPU time. */
#define GAP_NS	200000LL
#define SPIN_FN(name)							\
	static __attribute__((noinline)) int64_t name(int64_t until)	\
	{								\
		uint64_t x = 88172645463325252ULL;			\
		int64_t t = now_ns(), prev = t, lost = 0;		\
									\
		while (t < until) {					\
			for (int i = 0; i < 200; i++) {			\
				x ^= x << 13;				\
				x ^= x >> 7;				\
				x ^= x << 17;				\
			}						\
			sink = x;					\
			t = now_ns();					\
			if (t - prev > GAP_NS)				\
				lost += t - prev;			\
			prev = t;					\
		}							\
		return lost;						\
	}
SPIN_FN(spin0)
SPIN_FN(spin1)
SPIN_FN(spin2)
SPIN_FN(spin3)

static int64_t (*const spin[4])(int64_t) = { spin0, spin1, spin2, spin3 };

/* Phase i: from start for len ns at duty percent. */
static void phase_run(int i, int64_t start, int64_t len, int duty)
{
	static uint64_t rng = 0x9e3779b97f4a7c15ULL;
	int64_t end = start + len, p = start;

	while (p < end) {
		int64_t period;

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		period = PERIOD_MIN_NS + (int64_t)(rng % PERIOD_SPAN_NS);
		if (p + period > end)
			period = end - p;
		{
			int64_t w0 = now_ns(), c0 = cpu_ns(), w1, late, gaps, off;

			gaps = spin[i % 4](p + period * duty / 100);
			w1 = now_ns();
			off = (w1 - w0) - (cpu_ns() - c0);
			stall_note(w0, w1, off > gaps ? off : gaps);
			if (duty < 100) {
				sleep_until(p + period);
				late = now_ns() - (p + period);
				stall_note(p + period, p + period + late, late);
			}
		}
		p += period;
	}
}

int main(int argc, char **argv)
{
	int duty[MAX_PHASES];
	double secs[MAX_PHASES];
	int n = argc - 1;
	int64_t t;

	if (n < 1 || n > MAX_PHASES) {
		fprintf(stderr, "usage: phases DUTY:SECONDS [DUTY:SECONDS ...] (at most %d)\n",
			MAX_PHASES);
		return 2;
	}
	for (int i = 0; i < n; i++) {
		char *end;
		long d = strtol(argv[i + 1], &end, 10);

		if (end == argv[i + 1] || *end != ':' || d < 0 || d > 100) {
			fprintf(stderr, "phases: bad phase '%s': give DUTY:SECONDS, DUTY 0..100\n",
				argv[i + 1]);
			return 2;
		}
		errno = 0;
		secs[i] = strtod(end + 1, &end);
		if (errno || *end || !(secs[i] > 0 && secs[i] <= 3600)) {
			fprintf(stderr, "phases: bad phase '%s': SECONDS from 0 to 3600\n",
				argv[i + 1]);
			return 2;
		}
		duty[i] = (int)d;
	}
	t = now_ns();
	for (int i = 0; i < n; i++) {
		int64_t len = (int64_t)(secs[i] * 1e9);

		printf("phase %d duty %d start_ns %lld\n", i, duty[i], (long long)t);
		fflush(stdout);
		phase_run(i, t, len, duty[i]);
		t += len;
	}
	printf("end_ns %lld\n", (long long)now_ns());
	for (int i = 0; i < nstalls; i++)
		printf("stall %lld %lld %lld\n", (long long)stalls[i].from,
		       (long long)stalls[i].to, (long long)stalls[i].lost);
	return 0;
}
