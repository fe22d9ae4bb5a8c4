/*
 * probe.c - the experiments of 'strobe probe' (probe.h): the working-set
 * sweep (the caches' sizes and latencies), pairs of accesses some bytes
 * apart (their line sizes), lines that fall in one set (their ways) and
 * one line per page (the data TLBs), each a curve of timed pointer chases
 * (probe_chase.c); probe_infer.c reads the caches off the curves,
 * probe_sys.c says what the machine claims, probe_table.c compares the two
 * and makes the table.
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
#include <unistd.h>
#include "probe.h"
#include "probe_chase.h"
#include "probe_infer.h"
#include "util.h"

#define SLOT 64			/* spacing of the size sweep's chain nodes */
#define MAX_POINTS 160

struct ctx {
	struct probe_meter m;
	struct probe_result *r;
	char *buf;		/* the size sweep's region, max_size bytes */
	size_t buflen;
	void *map;		/* buf's mapping */
	size_t maplen;
	int huge;		/* buf is on huge pages */
	void ***at;		/* node pointers, scratch */
	size_t nodes;		/* of at */
	uint64_t seed;
	/* what the point functions measure besides x */
	size_t nb;		/* pair_point: blocks */
	size_t stride;		/* conflict_point: bytes between the lines */
	char *pages;		/* page_point: the region of the pages (pages_map) */
	void *pages_map;
	size_t pages_maplen;
	long pg;		/* page_point, control_point: the page size */
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

/* keep() the n points of a curve */
static void keep_curve(struct ctx *c, const char *exp, const char *kind, const double *x,
		       const double *y, const double *er, size_t n)
{
	for (size_t k = 0; k < n; k++)
		keep(c, exp, kind, x[k], y[k], er[k]);
}

/* Random chase over the first x bytes of buf, one node per SLOT. */
static double sweep_point(void *ctx, double x, double *err)
{
	struct ctx *c = ctx;
	size_t n = (size_t)x / SLOT;

	for (size_t i = 0; i < n; i++)
		c->at[i] = (void **)(c->buf + i * SLOT);
	return probe_measure(&c->m, probe_link_cycle(c->at, n, &c->seed), n, err);
}

/*
 * Pairs d (x) bytes apart, the far one first, in blocks of PAIR_BLOCK
 * bytes (17 lines: consecutive blocks start in different sets) visited in
 * a random order; c->nb blocks, several times the level's lines, so the
 * far access misses the level: the near one then hits the line the far
 * one brought in if d is below the line size, and misses too from the
 * line size on.  ns per access.
 */
#define PAIR_BLOCK (17 * 64)

static double pair_point(void *ctx, double x, double *err)
{
	struct ctx *c = ctx;
	size_t nb = c->nb, d = (size_t)x;
	void **first;

	for (size_t i = 0; i < nb; i++)
		c->at[i] = (void **)(c->buf + i * PAIR_BLOCK + d);
	first = probe_link_cycle(c->at, nb, &c->seed);
	/* each block's far node -> its near node -> the next block's far node */
	for (size_t i = 0; i < nb; i++) {
		char *blk = (char *)c->at[i] - d;
		void *next = *c->at[i];

		*c->at[i] = blk;
		*(void **)blk = next;
	}
	return probe_measure(&c->m, first, 2 * nb, err);
}

/* k (x) nodes spaced by c->stride, chased cyclically in a random order */
static double conflict_point(void *ctx, double x, double *err)
{
	struct ctx *c = ctx;
	size_t k = (size_t)x;

	for (size_t i = 0; i < k; i++)
		c->at[i] = (void **)(c->buf + i * c->stride);
	return probe_measure(&c->m, probe_link_cycle(c->at, k, &c->seed), k * 16, err);
}

/* The latency of a random cycle through one line in each of p pages from
 * base, the line moving by 64 bytes from page to page (so no cache set
 * gets them all). */
static double measure_pages(struct ctx *c, char *base, size_t p, long pg, double *e)
{
	for (size_t i = 0; i < p; i++)
		c->at[i] = (void **)(base + i * pg + (i * 64) % pg);
	return probe_measure(&c->m, probe_link_cycle(c->at, p, &c->seed), p, e);
}

/* measure_pages over x pages of c->pages */
static double page_point(void *ctx, double x, double *err)
{
	struct ctx *c = ctx;

	return measure_pages(c, c->pages, (size_t)x, c->pg, err);
}

/* the same lines in the size sweep's region (on huge pages) */
static double control_point(void *ctx, double x, double *err)
{
	struct ctx *c = ctx;

	return measure_pages(c, c->buf, (size_t)x, c->pg, err);
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

/*
 * The region of maxp pages (page size c->pg) that page_point chases over,
 * without huge pages, at c->pages (munmap c->pages_map when done), and
 * the page counts it measures, per counts per octave from first to maxp,
 * into x (*n of them).  -1 when the region cannot be mapped.
 */
static int pages_region(struct ctx *c, size_t first, size_t maxp, size_t per, double *x, size_t *n)
{
	c->pages = probe_region(maxp * c->pg, 0, &c->pages_map, &c->pages_maplen);
	if (!c->pages)
		return -1;
	*n = 0;
	for (size_t p = first; p <= maxp && *n < MAX_POINTS;
	     p += (1ul << (63 - __builtin_clzl(p))) / per)
		x[(*n)++] = (double)p;
	return 0;
}

/* The dTLB: one line per 4 KiB page over n pages (8 sizes per octave up to
 * 256 pages, which stay within a 32 KiB L1d: each page's line in another
 * set); the reach is the page count where the latency steps up. */
static void probe_dtlb(struct ctx *c, struct probe_result *r, const struct probe_sys *sys)
{
	struct probe_row *row = &r->rows[r->nrows++];
	long pg = c->pg = sysconf(_SC_PAGESIZE);
	size_t maxp = 256, n;
	double x[MAX_POINTS], y[MAX_POINTS], er[MAX_POINTS];
	struct probe_step st[2];

	memset(row, 0, sizeof(*row));
	strcpy(row->kind, "dTLB");
	row->latency_ns = NAN;
	row->error_pct = NAN;
	row->line_bytes = (unsigned)pg;
	/* 8 page counts per octave: 8, 9, .. 15, 16, 18, .. 30, 32, 36 .. */
	if (pages_region(c, 8, maxp, 8, x, &n) < 0) {
		notef(row, "not measured: no memory for %zu pages", maxp);
		return;
	}
	probe_curve(page_point, c, x, n, y, er);
	keep_curve(c, "dtlb", "dTLB", x, y, er, n);
	munmap(c->pages_map, c->pages_maplen);
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
	static const probe_point_fn fn[2] = { page_point, control_point };
	long pg = c->pg = sysconf(_SC_PAGESIZE);
	size_t maxp = STLB_MAX, n;
	double x[MAX_POINTS], y[MAX_POINTS], er[MAX_POINTS], ctl[MAX_POINTS], cer[MAX_POINTS];
	double d[MAX_POINTS], *ys[2] = { y, ctl }, *ers[2] = { er, cer };
	struct probe_step st[2];

	if (maxp * (size_t)pg > c->buflen)
		maxp = c->buflen / (size_t)pg;
	if (maxp < 1024 || !c->huge) {
		notef(row, "L2 TLB not measured: %s", !c->huge ? "no transparent huge pages for "
		      "the control" : "needs a --max-size of 4M or more");
		return;
	}
	if (pages_region(c, 256, maxp, 4, x, &n) < 0) {
		notef(row, "L2 TLB not measured: no memory for %zu pages", maxp);
		return;
	}
	/* the two curves point after point, so that a disturbance hits both */
	probe_curves(fn, 2, c, x, n, ys, ers);
	munmap(c->pages_map, c->pages_maplen);
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

/* Pin to the CPU, read what the machine says, and map the working sets
 * (c->map: munmap it) with their chain nodes (c->at: free it). */
static int probe_setup(const struct probe_opts *o, struct probe_result *r, struct probe_sys *sys,
		       struct ctx *c, struct error *e)
{
	int cpu = o->cpu;

	memset(r, 0, sizeof(*r));
	memset(c, 0, sizeof(*c));
	c->r = r;
	if (cpu < 0)
		cpu = sched_getcpu();
	if (cpu < 0)
		cpu = 0;
	if (pin(cpu, e) < 0)
		return -1;
	r->cpu = cpu;
	probe_sys_read(sys, o->sysfs_root ? o->sysfs_root : "/sys/devices/system/cpu", cpu);
	r->max_size = o->max_size ? o->max_size : default_max(sys);
	if (r->max_size < 64 * 1024)
		return error_set(e, "--max-size %llu is below 64 KiB: nothing to measure",
				 (unsigned long long)r->max_size);
	r->error_pct = o->error_pct;
	r->timer_res_ns = probe_timer_resolution();
	c->m.error_pct = o->error_pct;
	c->m.max_reps = o->max_reps ? o->max_reps : 200;
	/* document 002: at least (1 + eps) Delta / eps, and at least 20 us */
	c->m.min_ns = fmax(r->timer_res_ns * (1 + o->error_pct / 100) / (o->error_pct / 100), 20e3);
	c->seed = 0x9e3779b97f4a7c15ull;
	c->buflen = (size_t)r->max_size;
	/* the L2's ways experiment needs ways_kmax() x its size */
	if (sys->sysfs[1].have) {
		uint64_t need = ways_kmax(sys->sysfs[1].ways) * sys->sysfs[1].size_bytes;

		if (need > c->buflen && need <= (256u << 20))
			c->buflen = (size_t)need;
	}
	if (c->buflen < (8u << 20))	/* the L1d's pair experiment */
		c->buflen = 8u << 20;
	c->buf = probe_region(c->buflen, 1, &c->map, &c->maplen);
	if (!c->buf)
		return error_set(e, "cannot map %zu bytes for the working sets: %s", c->buflen,
				 strerror(errno));
	r->huge_pages = c->huge = probe_is_huge(c->buf, c->buflen);
	c->nodes = c->buflen / SLOT;
	if (c->nodes < 4096)
		c->nodes = 4096;
	c->at = malloc(c->nodes * sizeof(void **));
	if (!c->at) {
		munmap(c->map, c->maplen);
		return error_set(e, "out of memory for %zu chain nodes", c->nodes);
	}
	return 0;
}

/* A row of level l (0: L1d) as sysfs and CPUID describe it, not measured. */
static struct probe_row *level_row(struct probe_result *r, const struct probe_sys *sys, int l)
{
	struct probe_row *row = &r->rows[r->nrows++];

	memset(row, 0, sizeof(*row));
	snprintf(row->kind, sizeof(row->kind), "%s", level_kind[l]);
	row->sysfs = sys->sysfs[l];
	row->cpuid = sys->cpuid[l];
	return row;
}

/* 1. sizes: 4 working sets per octave from 4 KiB to max_size; a row per
 * level the curve steps at (its steps into st: how many), and one per
 * level sysfs lists that the sweep did not reach. */
static size_t probe_sizes(struct ctx *c, struct probe_result *r, const struct probe_sys *sys,
			  struct probe_step *st)
{
	double x[MAX_POINTS], y[MAX_POINTS], er[MAX_POINTS];
	size_t n = 0, nst;

	for (uint64_t oct = 4096; oct <= r->max_size && n < MAX_POINTS; oct *= 2)
		for (int q = 4; q < 8 && n < MAX_POINTS; q++) {
			uint64_t s = oct * q / 4;

			if (s > r->max_size)
				break;
			x[n++] = (double)s;
		}
	probe_curve(sweep_point, c, x, n, y, er);
	keep_curve(c, "size", "", x, y, er, n);
	nst = probe_find_steps(x, y, n, 0.3, st, PROBE_SYS_LEVELS);
	for (size_t l = 0; l < nst && l < PROBE_SYS_LEVELS && l < 3; l++) {
		struct probe_row *row = level_row(r, sys, (int)l);
		size_t i = st[l].last;
		size_t from = l ? st[l - 1].last + 1 : 0;

		row->size_bytes = (uint64_t)x[i];
		row->latency_ns = st[l].before;
		/* the error of the plateau's median point */
		row->error_pct = er[from + (i - from) / 2];
	}
	for (int l = (int)r->nrows; l < 3; l++)
		if (sys->sysfs[l].have) {
			struct probe_row *row = level_row(r, sys, l);

			row->latency_ns = NAN;
			row->error_pct = NAN;
			notef(row, "no step up to --max-size %llu: give a --max-size above 2 x the "
			      "size", (unsigned long long)r->max_size);
		}
	return nst;
}

/* 2. line sizes: pairs d bytes apart in 4 x as many blocks as the level
 * has lines, so the far access of a pair misses it */
static void probe_lines(struct ctx *c, struct probe_result *r)
{
	static const double dd[] = { 8, 16, 32, 64, 128, 256, 512 };

	for (size_t l = 0; l < r->nrows; l++) {
		struct probe_row *row = &r->rows[l];
		double yy[7], ee[7];
		size_t nb = (size_t)(row->size_bytes / 64 * 4);

		if (!row->size_bytes)
			continue;
		if (nb * PAIR_BLOCK > c->buflen || nb > c->nodes) {
			notef(row, "line not measured: needs --max-size %lluM",
			      (unsigned long long)((nb * PAIR_BLOCK >> 20) + 1));
			continue;
		}
		c->nb = nb;
		probe_curve(pair_point, c, dd, 7, yy, ee);
		keep_curve(c, "line", row->kind, dd, yy, ee, 7);
		row->line_bytes = (unsigned)probe_infer_line(dd, yy, 7);
		if (!row->line_bytes)
			notef(row, "line: no step between 8 and 512 bytes apart");
	}
}

/* 3. ways: k lines spaced by the level's size all fall in one set; the
 * level keeps them while k <= ways.  Beyond 4 KiB per way the set index
 * uses physical address bits: only on huge pages.  The steps of the size
 * sweep (nst of st) give the next level's latency when it has no row. */
static void probe_ways(struct ctx *c, struct probe_result *r, const struct probe_step *st,
		       size_t nst)
{
	for (size_t l = 0; l < r->nrows && l < 2; l++) {
		struct probe_row *row = &r->rows[l];
		double kk[64], yy[64], ee[64], next;
		size_t kmax = ways_kmax(row->sysfs.ways);

		if (!row->size_bytes || isnan(row->latency_ns))
			continue;
		next = l + 1 < r->nrows && !isnan(r->rows[l + 1].latency_ns) ?
			r->rows[l + 1].latency_ns : nst > l ? st[l].after : NAN;
		if (kmax * row->size_bytes > c->buflen) {
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
		for (size_t k = 1; k <= kmax; k++)
			kk[k - 1] = (double)k;
		c->stride = (size_t)row->size_bytes;
		probe_curve(conflict_point, c, kk, kmax, yy, ee);
		keep_curve(c, "ways", row->kind, kk, yy, ee, kmax);
		row->ways = (unsigned)probe_infer_ways(kk, yy, kmax, row->latency_ns, next);
		if (!row->ways)
			notef(row, "ways: no step up to %zu lines in one set", kmax);
	}
	if (r->nrows > 2)
		notef(&r->rows[2], "ways not measured for L3 (sliced, hashed set index)");
}

/* What may make the caches' rows read off (after the ways experiment). */
static void note_machine(struct probe_result *r, const struct probe_sys *sys)
{
	if (sys->hypervisor)
		for (size_t l = 1; l < r->nrows; l++)
			notef(&r->rows[l], "running under a hypervisor: the host's pages need not "
			      "be contiguous, so sizes and ways indexed above 4 KiB may read off");
	if (!r->huge_pages)
		for (size_t l = 1; l < r->nrows; l++)
			notef(&r->rows[l], "no transparent huge pages: sizes above 4 KiB per way "
			      "may read low (physical page colouring)");
}

/* Every row checked against sysfs and CPUID, and what they did not say. */
static void note_sources(struct probe_result *r, const struct probe_sys *sys)
{
	for (size_t l = 0; l < r->nrows; l++) {
		probe_crosscheck(&r->rows[l]);
		if (!strcmp(r->rows[l].kind, "dTLB") && !r->rows[l].cpuid.have)
			notef(&r->rows[l], "sysfs has no TLB information%s%s",
			      sys->cpuid_note[0] ? "; " : "", sys->cpuid_note);
		else if (!r->rows[l].sysfs.have && sys->sysfs_note[0])
			notef(&r->rows[l], "%s", sys->sysfs_note);
		else if (!r->rows[l].cpuid.have && sys->cpuid_note[0] &&
			 strcmp(r->rows[l].kind, "dTLB"))
			notef(&r->rows[l], "%s", sys->cpuid_note);
	}
}

int probe_run(const struct probe_opts *o, struct probe_result *r, struct error *e)
{
	struct probe_sys sys;
	struct probe_step st[PROBE_SYS_LEVELS];
	struct ctx c;
	size_t nst;

	if (probe_setup(o, r, &sys, &c, e) < 0)
		return -1;
	nst = probe_sizes(&c, r, &sys, st);
	probe_lines(&c, r);
	probe_ways(&c, r, st, nst);
	note_machine(r, &sys);
	/* 4. the data TLB */
	probe_dtlb(&c, r, &sys);
	probe_stlb(&c, &r->rows[r->nrows - 1], &sys);
	note_sources(r, &sys);
	r->measurements = c.m.measurements;
	r->unbounded = c.m.unbounded;
	free(c.at);
	munmap(c.map, c.maplen);
	return 0;
}
