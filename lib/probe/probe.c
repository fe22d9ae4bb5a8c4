/*
 * probe.c - the experiments of 'strobe probe' (probe.h): pointer chases
 * over randomised cyclic chains, timed with CLOCK_MONOTONIC, each
 * measurement repeated until the 95% confidence half-width of its mean is
 * below the error bound; then probe_infer.c reads the caches off the
 * curves, and probe_sys.c says what the machine claims.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "output.h"
#include "probe.h"
#include "probe_infer.h"
#include "util.h"

#define SLOT 64			/* spacing of the size sweep's chain nodes */
#define HUGE_SZ (2u << 20)
#define MAX_POINTS 160
/*
 * Each curve is measured in rounds, point after point, and each point
 * keeps its fastest round: a neighbour sharing the core (another process
 * between samples, an SMT sibling, another VM) only ever adds time, and
 * comes and goes, so the fastest round is the one it disturbed least.  At
 * least MIN_ROUNDS; more (up to MAX_ROUNDS, 50 ms apart) while a round
 * still brings some point down by more than ROUND_GAIN.
 */
#define MIN_ROUNDS 3
#define MAX_ROUNDS 12
#define ROUND_GAIN 0.05

/* keep the faster of a new measurement (v, e) and the best so far; counts
 * in *gained the points it brought down by more than ROUND_GAIN */
static void best(double *y, double *er, double v, double e, int *gained)
{
	if (v < *y) {
		if (isfinite(*y) && v < *y * (1 - ROUND_GAIN))
			(*gained)++;
		*y = v;
		*er = e;
	}
}

/* whether to measure another round after round `round` (0-based) */
static int more_rounds(int round, int *gained)
{
	int more = round + 1 < MIN_ROUNDS || (*gained && round + 1 < MAX_ROUNDS);

	if (more && round + 1 >= MIN_ROUNDS)
		usleep(50000);
	*gained = 0;
	return more;
}

/* ---- timing ---- */

static double now_ns(void)
{
	return (double)clock_monotonic_ns();
}

/* The clock's resolution: the smallest step seen between two different
 * readings (document 002's delta()). */
static double timer_resolution(void)
{
	double best = INFINITY;

	for (int r = 0; r < 50; r++) {
		double a = now_ns(), b;

		while ((b = now_ns()) == a)
			;
		if (b - a < best)
			best = b - a;
	}
	return best;
}

static long nivcsw(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_nivcsw : 0;
}

/* Follow the chain from p for n steps (n a multiple of 8). */
static __attribute__((noinline)) void **chase(void **p, size_t n)
{
	for (size_t i = 0; i < n; i += 8) {
		p = (void **)*p; p = (void **)*p; p = (void **)*p; p = (void **)*p;
		p = (void **)*p; p = (void **)*p; p = (void **)*p; p = (void **)*p;
	}
	return p;
}

struct meter {
	double min_ns;		/* each sample lasts at least this long */
	double error_pct;
	unsigned max_reps;
	unsigned measurements, unbounded;
	void *volatile sink;	/* where each chase ended: keeps it from being
				 * optimised away */
};

/* mean and 95% error of the samples, leaving out those over 1.5 x the
 * median (disturbed: an interrupt, a stolen slice) */
static void stats(const double *v, size_t n, double *mean, double *err)
{
	double med = probe_median(v, n), s = 0, s2 = 0;
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (v[i] <= 1.5 * med) {
			s += v[i];
			k++;
		}
	*mean = s / k;
	for (size_t i = 0; i < n; i++)
		if (v[i] <= 1.5 * med)
			s2 += (v[i] - *mean) * (v[i] - *mean);
	*err = probe_rel_error_pct(*mean, k > 1 ? sqrt(s2 / (k - 1)) : 0, k);
}

/*
 * ns per step of the chain from start: warm it up with `warm` steps, then
 * time samples of at least m->min_ns each (document 002's duration for the
 * clock's resolution) until the relative error is below the bound (at
 * least 5 samples) or max_reps samples were taken.  Samples during which
 * the thread was preempted are taken again.
 */
static double measure(struct meter *m, void **start, size_t warm, double *err_pct)
{
	double v[512], mean = 0, err = INFINITY;
	size_t steps = 64, n = 0;
	unsigned tries = 0;
	void **p = chase(start, (warm + 7) & ~(size_t)7);

	/* calibrate the steps per sample */
	for (;;) {
		double t0 = now_ns();

		p = chase(p, steps);
		if (now_ns() - t0 >= m->min_ns || steps >= (1u << 30))
			break;
		steps *= 2;
	}
	while (n < m->max_reps && n < 512 && tries < 4 * m->max_reps) {
		long cs = nivcsw();
		double t0 = now_ns(), t1;

		p = chase(p, steps);
		t1 = now_ns();
		tries++;
		if (nivcsw() != cs && tries < 2 * m->max_reps)
			continue;
		v[n++] = (t1 - t0) / steps;
		if (n >= 5) {
			stats(v, n, &mean, &err);
			if (err < m->error_pct)
				break;
		}
	}
	if (n < 5)
		stats(v, n, &mean, &err);
	m->sink = p;
	m->measurements++;
	if (!(err < m->error_pct))
		m->unbounded++;
	*err_pct = err;
	return mean;
}

/* ---- chains ---- */

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Link the n nodes at[] into one cycle in a random order; returns the first. */
static void **link_cycle(void ***at, size_t n, uint64_t *seed)
{
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = rnd(seed) % (i + 1);
		void **t = at[i];

		at[i] = at[j];
		at[j] = t;
	}
	for (size_t i = 0; i < n; i++)
		*at[i] = at[(i + 1) % n];
	return at[0];
}

/* An anonymous region aligned to 2 MiB, with (huge = 1) or without
 * transparent huge pages, touched. */
static char *region(size_t len, int huge, void **map, size_t *maplen)
{
	size_t l = len + HUGE_SZ;
	char *m = mmap(NULL, l, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *p;

	if (m == MAP_FAILED)
		return NULL;
	p = (char *)(((uintptr_t)m + HUGE_SZ - 1) & ~(uintptr_t)(HUGE_SZ - 1));
	madvise(p, len, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	memset(p, 1, len);
	*map = m;
	*maplen = l;
	return p;
}

/* Whether [p, p+len) is backed by huge pages (AnonHugePages in smaps). */
static int is_huge(const char *p, size_t len)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[256];
	int in = 0, huge = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long a, b, kb;

		if (sscanf(line, "%lx-%lx ", &a, &b) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = a <= (uintptr_t)p && (uintptr_t)p < b;
			continue;
		}
		if (in && sscanf(line, "AnonHugePages: %lu kB", &kb) == 1) {
			huge = kb * 1024 >= len / 2;
			break;
		}
	}
	fclose(f);
	return huge;
}

/* ---- the experiments ---- */

struct ctx {
	struct meter m;
	struct probe_result *r;
	char *buf;		/* the size sweep's region, max_size bytes */
	size_t buflen;
	int huge;		/* buf is on huge pages */
	void ***at;		/* node pointers, scratch */
	uint64_t seed;
};

static void keep(struct ctx *c, const char *exp, const char *kind, double x, double ns,
		 double err)
{
	struct probe_result *r = c->r;
	struct probe_point *p;

	array_grow(&r->points, &r->cappoints, r->npoints + 1, sizeof(*r->points));
	p = &r->points[r->npoints++];
	snprintf(p->exp, sizeof(p->exp), "%s", exp);
	snprintf(p->kind, sizeof(p->kind), "%s", kind);
	p->x = x;
	p->ns = ns;
	p->error_pct = err;
}

/* Random chase over the first `size` bytes of buf, one node per SLOT. */
static double sweep_point(struct ctx *c, size_t size, double *err)
{
	size_t n = size / SLOT;

	for (size_t i = 0; i < n; i++)
		c->at[i] = (void **)(c->buf + i * SLOT);
	return measure(&c->m, link_cycle(c->at, n, &c->seed), n, err);
}

/*
 * Pairs d bytes apart, the far one first, in blocks of PAIR_BLOCK bytes
 * (17 lines: consecutive blocks start in different sets) visited in a
 * random order; nb blocks, several times the level's lines, so the far
 * access misses the level: the near one then hits the line the far one
 * brought in if d is below the line size, and misses too from the line
 * size on.  ns per access.
 */
#define PAIR_BLOCK (17 * 64)

static double pair_point(struct ctx *c, size_t nb, size_t d, double *err)
{
	void **first;

	for (size_t i = 0; i < nb; i++)
		c->at[i] = (void **)(c->buf + i * PAIR_BLOCK + d);
	first = link_cycle(c->at, nb, &c->seed);
	/* each block's far node -> its near node -> the next block's far node */
	for (size_t i = 0; i < nb; i++) {
		char *blk = (char *)c->at[i] - d;
		void *next = *c->at[i];

		*c->at[i] = blk;
		*(void **)blk = next;
	}
	return measure(&c->m, first, 2 * nb, err);
}

/* k nodes spaced by stride, chased cyclically in a random order */
static double conflict_point(struct ctx *c, size_t stride, size_t k, double *err)
{
	for (size_t i = 0; i < k; i++)
		c->at[i] = (void **)(c->buf + i * stride);
	return measure(&c->m, link_cycle(c->at, k, &c->seed), k * 16, err);
}

static const char *const level_kind[] = { "L1d", "L2", "L3", "L4" };

static void notef(struct probe_row *row, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void notef(struct probe_row *row, const char *fmt, ...)
{
	size_t n = strlen(row->note);
	va_list ap;

	if (n && n + 2 < sizeof(row->note)) {
		strcpy(row->note + n, "; ");
		n += 2;
	}
	va_start(ap, fmt);
	vsnprintf(row->note + n, sizeof(row->note) - n, fmt, ap);
	va_end(ap);
}

/* lines in one set the ways experiment tries: 24, or past twice the ways
 * sysfs claims (at most 64) */
static size_t ways_kmax(unsigned sysfs_ways)
{
	size_t k = 2 * (size_t)sysfs_ways + 2;

	return k < 24 ? 24 : k > 64 ? 64 : k;
}

static int pin(int cpu, struct error *e)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		return error_set(e, "cannot run on CPU %d: %s", cpu, strerror(errno));
	return 0;
}

static uint64_t default_max(const struct probe_sys *s)
{
	uint64_t big = 0;

	for (int l = 0; l < PROBE_SYS_LEVELS; l++)
		if (s->sysfs[l].have && s->sysfs[l].size_bytes > big)
			big = s->sysfs[l].size_bytes;
	big = big ? 2 * big : 64u << 20;
	return big > (1u << 30) ? 1u << 30 : big < (1u << 20) ? 1u << 20 : big;
}

/* The latency of a random cycle through one line in each of p pages from
 * base, the line moving by 64 bytes from page to page (so no cache set
 * gets them all). */
static double measure_pages(struct ctx *c, char *base, size_t p, long pg, double *e)
{
	for (size_t i = 0; i < p; i++)
		c->at[i] = (void **)(base + i * pg + (i * 64) % pg);
	return measure(&c->m, link_cycle(c->at, p, &c->seed), p, e);
}

/* The dTLB: one line per 4 KiB page over n pages (8 sizes per octave up to
 * 256 pages, which stay within a 32 KiB L1d: each page's line in another
 * set); the reach is the page count where the latency steps up. */
static void probe_dtlb(struct ctx *c, struct probe_result *r, const struct probe_sys *sys)
{
	struct probe_row *row = &r->rows[r->nrows++];
	long pg = sysconf(_SC_PAGESIZE);
	size_t maxp = 256, n = 0;
	double x[MAX_POINTS], y[MAX_POINTS], er[MAX_POINTS];
	struct probe_step st[2];
	void *map;
	size_t maplen;
	char *b;

	memset(row, 0, sizeof(*row));
	strcpy(row->kind, "dTLB");
	row->latency_ns = NAN;
	row->error_pct = NAN;
	row->line_bytes = (unsigned)pg;
	b = region(maxp * pg, 0, &map, &maplen);
	if (!b) {
		notef(row, "not measured: no memory for %zu pages", maxp);
		return;
	}
	/* 8 page counts per octave: 8, 9, .. 15, 16, 18, .. 30, 32, 36 .. */
	for (size_t p = 8; p <= maxp && n < MAX_POINTS; p += (1ul << (63 - __builtin_clzl(p))) / 8) {
		x[n] = (double)p;
		y[n] = INFINITY;
		er[n++] = INFINITY;
	}
	for (int round = 0, gained = 0; round == 0 || more_rounds(round - 1, &gained); round++)
		for (size_t k = 0; k < n; k++) {
			double v, e;

			v = measure_pages(c, b, (size_t)x[k], pg, &e);
			best(&y[k], &er[k], v, e, &gained);
		}
	for (size_t k = 0; k < n; k++)
		keep(c, "dtlb", "dTLB", x[k], y[k], er[k]);
	munmap(map, maplen);
	if (probe_find_steps(x, y, n, 0.3, st, 2) >= 1) {
		size_t i = st[0].last;

		row->pages = (uint64_t)x[i];
		row->size_bytes = row->pages * (uint64_t)pg;
		row->latency_ns = st[0].after - st[0].before;
		row->error_pct = er[i + 1 < n ? i + 1 : i];
	} else {
		notef(row, "no step up to %zu pages: the reach is larger, or misses are cheap here",
		      maxp);
	}
	if (sys->cpuid_dtlb_entries) {
		row->cpuid.have = 1;
		row->cpuid.size_bytes = (uint64_t)sys->cpuid_dtlb_entries * pg;
		row->cpuid.line_bytes = (unsigned)pg;
	}
}

/*
 * The second-level TLB: one line per 4 KiB page over 256 .. STLB_MAX pages
 * (4 counts per octave) against a control, the same lines at the same
 * offsets in the huge-page region (a few TLB entries cover it all), so the
 * caches see the same footprint and the difference is the TLB's cost: an
 * L2 TLB hit within its reach, a page walk past it.  The reach is where the
 * difference steps up.
 */
#define STLB_MAX 16384

static void probe_stlb(struct ctx *c, struct probe_row *row, const struct probe_sys *sys)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t maxp = STLB_MAX, n = 0;
	double x[MAX_POINTS], y[MAX_POINTS], er[MAX_POINTS], ctl[MAX_POINTS], cer[MAX_POINTS];
	double d[MAX_POINTS];
	struct probe_step st[2];
	void *map;
	size_t maplen;
	char *b;

	if (maxp * (size_t)pg > c->buflen)
		maxp = c->buflen / (size_t)pg;
	if (maxp < 1024 || !c->huge) {
		notef(row, "L2 TLB not measured: %s", !c->huge ? "no transparent huge pages for "
		      "the control" : "needs a --max-size of 4M or more");
		return;
	}
	b = region(maxp * pg, 0, &map, &maplen);
	if (!b) {
		notef(row, "L2 TLB not measured: no memory for %zu pages", maxp);
		return;
	}
	for (size_t p = 256; p <= maxp && n < MAX_POINTS; p += (1ul << (63 - __builtin_clzl(p))) / 4) {
		x[n] = (double)p;
		y[n] = er[n] = ctl[n] = cer[n] = INFINITY;
		n++;
	}
	for (int round = 0, gained = 0; round == 0 || more_rounds(round - 1, &gained); round++)
		for (size_t k = 0; k < n; k++) {
			double v, e;

			v = measure_pages(c, b, (size_t)x[k], pg, &e);
			best(&y[k], &er[k], v, e, &gained);
			v = measure_pages(c, c->buf, (size_t)x[k], pg, &e);
			best(&ctl[k], &cer[k], v, e, &gained);
		}
	munmap(map, maplen);
	for (size_t k = 0; k < n; k++) {
		keep(c, "stlb", "dTLB", x[k], y[k], er[k]);
		keep(c, "stlb-ctl", "dTLB", x[k], ctl[k], cer[k]);
		d[k] = fmax(y[k] - ctl[k], 0.05);
	}
	if (probe_find_steps(x, d, n, 0.5, st, 2) >= 1)
		row->l2_pages = (uint64_t)x[st[0].last];
	else
		notef(row, "L2 TLB: no step up to %zu pages", maxp);
	row->cpuid_l2_pages = sys->cpuid_l2_dtlb_entries;
}

int probe_run(const struct probe_opts *o, struct probe_result *r, struct error *e)
{
	struct probe_sys sys;
	struct ctx c;
	double x[MAX_POINTS], y[MAX_POINTS], er[MAX_POINTS];
	struct probe_step st[PROBE_SYS_LEVELS];
	size_t n = 0, nst, nodes;
	void *map;
	size_t maplen;
	int cpu = o->cpu;

	memset(r, 0, sizeof(*r));
	memset(&c, 0, sizeof(c));
	c.r = r;
	if (cpu < 0)
		cpu = sched_getcpu();
	if (cpu < 0)
		cpu = 0;
	if (pin(cpu, e) < 0)
		return -1;
	r->cpu = cpu;
	probe_sys_read(&sys, o->sysfs_root ? o->sysfs_root : "/sys/devices/system/cpu", cpu);
	r->max_size = o->max_size ? o->max_size : default_max(&sys);
	if (r->max_size < 64 * 1024)
		return error_set(e, "--max-size %llu is below 64 KiB: nothing to measure",
				 (unsigned long long)r->max_size);
	r->error_pct = o->error_pct;
	r->timer_res_ns = timer_resolution();
	c.m.error_pct = o->error_pct;
	c.m.max_reps = o->max_reps ? o->max_reps : 200;
	/* document 002: at least (1 + eps) Delta / eps, and at least 20 us */
	c.m.min_ns = fmax(r->timer_res_ns * (1 + o->error_pct / 100) / (o->error_pct / 100), 20e3);
	c.seed = 0x9e3779b97f4a7c15ull;
	c.buflen = (size_t)r->max_size;
	/* the L2's ways experiment needs ways_kmax() x its size */
	if (sys.sysfs[1].have) {
		uint64_t need = ways_kmax(sys.sysfs[1].ways) * sys.sysfs[1].size_bytes;

		if (need > c.buflen && need <= (256u << 20))
			c.buflen = (size_t)need;
	}
	if (c.buflen < (8u << 20))	/* the L1d's pair experiment */
		c.buflen = 8u << 20;
	c.buf = region(c.buflen, 1, &map, &maplen);
	if (!c.buf)
		return error_set(e, "cannot map %zu bytes for the working sets: %s", c.buflen,
				 strerror(errno));
	r->huge_pages = c.huge = is_huge(c.buf, c.buflen);
	nodes = c.buflen / SLOT;
	if (nodes < 4096)
		nodes = 4096;
	c.at = malloc(nodes * sizeof(void **));
	if (!c.at) {
		munmap(map, maplen);
		return error_set(e, "out of memory for %zu chain nodes", nodes);
	}

	/* 1. sizes: 4 working sets per octave from 4 KiB to max_size */
	for (uint64_t oct = 4096; oct <= r->max_size && n < MAX_POINTS; oct *= 2)
		for (int q = 4; q < 8 && n < MAX_POINTS; q++) {
			uint64_t s = oct * q / 4;

			if (s > r->max_size)
				break;
			x[n] = (double)s;
			y[n] = INFINITY;
			er[n++] = INFINITY;
		}
	for (int round = 0, gained = 0; round == 0 || more_rounds(round - 1, &gained); round++)
		for (size_t k = 0; k < n; k++) {
			double v, e;

			v = sweep_point(&c, (size_t)x[k], &e);
			best(&y[k], &er[k], v, e, &gained);
		}
	for (size_t k = 0; k < n; k++)
		keep(&c, "size", "", x[k], y[k], er[k]);
	nst = probe_find_steps(x, y, n, 0.3, st, PROBE_SYS_LEVELS);
	for (size_t l = 0; l < nst && l < PROBE_SYS_LEVELS && l < 3; l++) {
		struct probe_row *row = &r->rows[r->nrows++];
		size_t i = st[l].last;
		size_t from = l ? st[l - 1].last + 1 : 0;

		memset(row, 0, sizeof(*row));
		snprintf(row->kind, sizeof(row->kind), "%s", level_kind[l]);
		row->size_bytes = (uint64_t)x[i];
		row->latency_ns = st[l].before;
		/* the error of the plateau's median point */
		row->error_pct = er[from + (i - from) / 2];
		row->sysfs = sys.sysfs[l];
		row->cpuid = sys.cpuid[l];
	}
	/* levels sysfs lists that the sweep did not reach */
	for (int l = (int)r->nrows; l < 3; l++)
		if (sys.sysfs[l].have) {
			struct probe_row *row = &r->rows[r->nrows++];

			memset(row, 0, sizeof(*row));
			snprintf(row->kind, sizeof(row->kind), "%s", level_kind[l]);
			row->latency_ns = NAN;
			row->error_pct = NAN;
			row->sysfs = sys.sysfs[l];
			row->cpuid = sys.cpuid[l];
			notef(row, "no step up to --max-size %llu: give a --max-size above 2 x the "
			      "size", (unsigned long long)r->max_size);
		}

	/* 2. line sizes: pairs d bytes apart in 4 x as many blocks as the
	 * level has lines, so the far access of a pair misses it */
	for (size_t l = 0; l < r->nrows; l++) {
		struct probe_row *row = &r->rows[l];
		static const double dd[] = { 8, 16, 32, 64, 128, 256, 512 };
		double yy[7], ee[7];
		size_t nb = (size_t)(row->size_bytes / 64 * 4);

		if (!row->size_bytes)
			continue;
		if (nb * PAIR_BLOCK > c.buflen || nb > nodes) {
			notef(row, "line not measured: needs --max-size %lluM",
			      (unsigned long long)((nb * PAIR_BLOCK >> 20) + 1));
			continue;
		}
		for (int i = 0; i < 7; i++)
			yy[i] = ee[i] = INFINITY;
		for (int round = 0, gained = 0; round == 0 || more_rounds(round - 1, &gained); round++)
			for (int i = 0; i < 7; i++) {
				double v, e;

				v = pair_point(&c, nb, (size_t)dd[i], &e);
				best(&yy[i], &ee[i], v, e, &gained);
			}
		for (int i = 0; i < 7; i++)
			keep(&c, "line", row->kind, dd[i], yy[i], ee[i]);
		row->line_bytes = (unsigned)probe_infer_line(dd, yy, 7);
		if (!row->line_bytes)
			notef(row, "line: no step between 8 and 512 bytes apart");
	}

	/* 3. ways: k lines spaced by the level's size all fall in one set;
	 * the level keeps them while k <= ways.  Beyond 4 KiB per way the
	 * set index uses physical address bits: only on huge pages. */
	for (size_t l = 0; l < r->nrows && l < 2; l++) {
		struct probe_row *row = &r->rows[l];
		double kk[64], yy[64], ee[64], next;
		size_t kmax = ways_kmax(row->sysfs.ways);

		if (!row->size_bytes || isnan(row->latency_ns))
			continue;
		next = l + 1 < r->nrows && !isnan(r->rows[l + 1].latency_ns) ?
			r->rows[l + 1].latency_ns : nst > l ? st[l].after : NAN;
		if (kmax * row->size_bytes > c.buflen) {
			notef(row, "ways not measured: needs %llu bytes (a larger --max-size)",
			      (unsigned long long)(kmax * row->size_bytes));
			continue;
		}
		if (l > 0 && !r->huge_pages) {
			notef(row, "ways not measured: no transparent huge pages (the set index "
			      "needs contiguous physical memory)");
			continue;
		}
		if (isnan(next)) {
			notef(row, "ways not measured: the next level's latency is unknown");
			continue;
		}
		for (size_t k = 1; k <= kmax; k++) {
			kk[k - 1] = (double)k;
			yy[k - 1] = ee[k - 1] = INFINITY;
		}
		for (int round = 0, gained = 0; round == 0 || more_rounds(round - 1, &gained); round++)
			for (size_t k = 1; k <= kmax; k++) {
				double v, e;

				v = conflict_point(&c, (size_t)row->size_bytes, k, &e);
				best(&yy[k - 1], &ee[k - 1], v, e, &gained);
			}
		for (size_t k = 1; k <= kmax; k++)
			keep(&c, "ways", row->kind, kk[k - 1], yy[k - 1], ee[k - 1]);
		row->ways = (unsigned)probe_infer_ways(kk, yy, kmax, row->latency_ns, next);
		if (!row->ways)
			notef(row, "ways: no step up to %zu lines in one set", kmax);
	}
	if (r->nrows > 2)
		notef(&r->rows[2], "ways not measured for L3 (sliced, hashed set index)");
	if (sys.hypervisor)
		for (size_t l = 1; l < r->nrows; l++)
			notef(&r->rows[l], "running under a hypervisor: the host's pages need not "
			      "be contiguous, so sizes and ways indexed above 4 KiB may read off");
	if (!r->huge_pages)
		for (size_t l = 1; l < r->nrows; l++)
			notef(&r->rows[l], "no transparent huge pages: sizes above 4 KiB per way "
			      "may read low (physical page colouring)");

	/* 4. the data TLB */
	probe_dtlb(&c, r, &sys);
	probe_stlb(&c, &r->rows[r->nrows - 1], &sys);

	for (size_t l = 0; l < r->nrows; l++) {
		probe_crosscheck(&r->rows[l]);
		if (!strcmp(r->rows[l].kind, "dTLB") && !r->rows[l].cpuid.have)
			notef(&r->rows[l], "sysfs has no TLB information%s%s",
			      sys.cpuid_note[0] ? "; " : "", sys.cpuid_note);
		else if (!r->rows[l].sysfs.have && sys.sysfs_note[0])
			notef(&r->rows[l], "%s", sys.sysfs_note);
		else if (!r->rows[l].cpuid.have && sys.cpuid_note[0] &&
			 strcmp(r->rows[l].kind, "dTLB"))
			notef(&r->rows[l], "%s", sys.cpuid_note);
	}
	r->measurements = c.m.measurements;
	r->unbounded = c.m.unbounded;
	free(c.at);
	munmap(map, maplen);
	return 0;
}

static void checkf(char *buf, size_t len, const char *what, const char *src,
		   unsigned long long said, unsigned long long got)
{
	size_t n = strlen(buf);

	if (!said || !got || said == got)
		return;
	snprintf(buf + n, len - n, "%s%s: %s %llu, measured %llu", n ? "; " : "", what, src,
		 said, got);
}

void probe_crosscheck(struct probe_row *row)
{
	const struct probe_sys_cache *src[2] = { &row->sysfs, &row->cpuid };
	static const char *const name[2] = { "sysfs", "CPUID" };

	row->check[0] = 0;
	for (int i = 0; i < 2; i++) {
		if (!src[i]->have)
			continue;
		checkf(row->check, sizeof(row->check), "size", name[i], src[i]->size_bytes,
		       row->size_bytes);
		if (strcmp(row->kind, "dTLB"))
			checkf(row->check, sizeof(row->check), "line", name[i], src[i]->line_bytes,
			       row->line_bytes);
		checkf(row->check, sizeof(row->check), "ways", name[i], src[i]->ways, row->ways);
	}
	checkf(row->check, sizeof(row->check), "L2 TLB pages", "CPUID", row->cpuid_l2_pages,
	       row->l2_pages);
}

struct table *probe_table(const struct probe_result *r)
{
	struct table *t = table_new();
	int ck = table_add_col(t, "kind", COL_STR);
	int cs = table_add_col(t, "size_bytes", COL_INT);
	int cl = table_add_col(t, "line_bytes", COL_INT);
	int cw = table_add_col(t, "ways", COL_INT);
	int clat = table_add_col(t, "latency_ns", COL_FLOAT);
	int cerr = table_add_col(t, "error_pct", COL_FLOAT);
	int cp = table_add_col(t, "pages", COL_INT);
	int cp2 = table_add_col(t, "l2_tlb_pages", COL_INT);
	int ss = table_add_col(t, "sysfs_size_bytes", COL_INT);
	int sl = table_add_col(t, "sysfs_line_bytes", COL_INT);
	int sw = table_add_col(t, "sysfs_ways", COL_INT);
	int is = table_add_col(t, "cpuid_size_bytes", COL_INT);
	int il = table_add_col(t, "cpuid_line_bytes", COL_INT);
	int iw = table_add_col(t, "cpuid_ways", COL_INT);
	int ip2 = table_add_col(t, "cpuid_l2_tlb_pages", COL_INT);
	int cc = table_add_col(t, "check", COL_STR);
	int cn = table_add_col(t, "note", COL_STR);
	char buf[64];

	for (size_t i = 0; i < r->nrows; i++) {
		const struct probe_row *row = &r->rows[i];
		size_t k = table_add_row(t);

		table_set_str(t, k, ck, row->kind);
		if (row->size_bytes)
			table_set_int(t, k, cs, (int64_t)row->size_bytes);
		if (row->line_bytes)
			table_set_int(t, k, cl, row->line_bytes);
		if (row->ways)
			table_set_int(t, k, cw, row->ways);
		if (!isnan(row->latency_ns))
			table_set_float(t, k, clat, row->latency_ns);
		if (!isnan(row->error_pct) && isfinite(row->error_pct))
			table_set_float(t, k, cerr, row->error_pct);
		if (row->pages)
			table_set_int(t, k, cp, (int64_t)row->pages);
		if (row->l2_pages)
			table_set_int(t, k, cp2, (int64_t)row->l2_pages);
		if (row->cpuid_l2_pages)
			table_set_int(t, k, ip2, (int64_t)row->cpuid_l2_pages);
		if (row->sysfs.have) {
			if (row->sysfs.size_bytes)
				table_set_int(t, k, ss, (int64_t)row->sysfs.size_bytes);
			if (row->sysfs.line_bytes)
				table_set_int(t, k, sl, row->sysfs.line_bytes);
			if (row->sysfs.ways)
				table_set_int(t, k, sw, row->sysfs.ways);
		}
		if (row->cpuid.have) {
			if (row->cpuid.size_bytes)
				table_set_int(t, k, is, (int64_t)row->cpuid.size_bytes);
			if (row->cpuid.line_bytes)
				table_set_int(t, k, il, row->cpuid.line_bytes);
			if (row->cpuid.ways)
				table_set_int(t, k, iw, row->cpuid.ways);
		}
		/* "agrees" only where something was measured and said */
		table_set_str(t, k, cc, row->check[0] ? row->check :
			      (row->size_bytes || row->line_bytes || row->ways) &&
			      (row->sysfs.have || row->cpuid.have) ? "agrees" : "");
		table_set_str(t, k, cn, row->note);
	}
	snprintf(buf, sizeof(buf), "%d", r->cpu);
	table_add_meta(t, "cpu", buf, 1);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)r->max_size);
	table_add_meta(t, "max_size", buf, 1);
	snprintf(buf, sizeof(buf), "%g", r->error_pct);
	table_add_meta(t, "error_bound_pct", buf, 1);
	snprintf(buf, sizeof(buf), "%.1f", r->timer_res_ns);
	table_add_meta(t, "timer_resolution_ns", buf, 1);
	table_add_meta(t, "timer", "clock_gettime(CLOCK_MONOTONIC)", 0);
	table_add_meta(t, "huge_pages", r->huge_pages ? "yes" : "no", 0);
	snprintf(buf, sizeof(buf), "%u", r->measurements);
	table_add_meta(t, "measurements", buf, 1);
	snprintf(buf, sizeof(buf), "%u", r->unbounded);
	table_add_meta(t, "measurements_above_bound", buf, 1);
	return t;
}
