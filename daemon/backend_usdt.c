/*
 * backend_usdt.c - USDT markers of a capture backend (cfg->sites,
 * backend_core.h): per CPU and probe site one uprobe perf event (the
 * "uprobe" PMU: config1 = a path, config2 = file offset, config's high
 * half = the semaphore's offset), on the same clock, writing into that
 * CPU's leader ring (PERF_EVENT_IOC_SET_OUTPUT).  Its samples carry the
 * user registers (and a copy of the top of the user stack) the probe's
 * arguments need; they are told from the leader's samples by their
 * PERF_SAMPLE_IDENTIFIER, decoded and their arguments read once, on the way
 * into the queue (probe_queue), and they reach the sink as markers in the
 * same time merge.  Their sample_id_all trailer has the leader's layout
 * (pid/tid, time, cpu, id), so a LOST record written for either is read
 * the same way.
 *
 * The uprobe PMU looks its path up again for each event (kern_path in
 * create_local_trace_uprobe, following symlinks, each CPU in turn).  So the
 * path given is never the site's file name but /proc/self/fd/N of the file
 * the notes were read from (cfg->site_fds, opened with the requester's
 * rights): that magic link leads to the open file itself, whatever has
 * become of its name.  It is checked to lead there before the events are
 * opened and again after; once placed, each uprobe holds its file, so the
 * fds may be closed after backend_open.
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "backend_core.h"

/* a uprobe's samples: the leader's trailer, then the registers and stack */
#define PROBE_SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
			   PERF_SAMPLE_CPU)
#define PROBE_STACK_BYTES 512
#define UPROBE_PMU "/sys/bus/event_source/devices/uprobe"

/*
 * Does f->path (what the uprobe PMU will look up) lead to the file open as
 * f->fd, the one the site's notes were read from, and is that file still
 * f->dev:f->ino (set when set)?
 */
static int site_file_check(struct site_file *f, const struct usdt_site *s, int set,
			   struct error *e)
{
	struct stat fst, pst;

	if (fstat(f->fd, &fst) < 0 || !S_ISREG(fst.st_mode))
		return error_set(e, "marker %s:%s:%s: its open file is gone or not a regular "
				 "file: try again", s->path, s->provider, s->name);
	if (stat(f->path, &pst) < 0 || pst.st_dev != fst.st_dev || pst.st_ino != fst.st_ino)
		return error_set(e, "marker %s:%s:%s: %s does not lead to the file its notes "
				 "were read from (is /proc mounted?)", s->path, s->provider,
				 s->name, f->path);
	if (set) {
		f->dev = fst.st_dev;
		f->ino = fst.st_ino;
	} else if (fst.st_dev != f->dev || fst.st_ino != f->ino) {
		return error_set(e, "marker %s:%s:%s: its file changed while its uprobes were "
				 "placed: try again", s->path, s->provider, s->name);
	}
	return 0;
}

/* The uprobe PMU, and what each site's uprobes must sample. */
int probes_setup(struct backend *b, struct error *e)
{
	char *type = file_read_all(UPROBE_PMU "/type", NULL);
	int n = b->cfg.nr_sites;
	uint64_t v;

	if (!type || parse_u64(strtok(type, "\n"), &v) < 0 || v > UINT32_MAX) {
		free(type);
		return error_set(e, "USDT markers need uprobe perf events, which this kernel "
				 "lacks (%s: CONFIG_UPROBE_EVENTS): start without --marker",
				 UPROBE_PMU);
	}
	free(type);
	b->uprobe_type = v;
	b->sites = xcalloc(n, sizeof(*b->sites));
	memcpy(b->sites, b->cfg.sites, n * sizeof(*b->sites));
	b->cfg.sites = b->sites;
	b->site_regs = xcalloc(n, sizeof(*b->site_regs));
	b->site_stack = xcalloc(n, sizeof(*b->site_stack));
	b->site_fmt = xcalloc(n, sizeof(*b->site_fmt));
	b->site_files = xcalloc(n, sizeof(*b->site_files));
	if (!b->cfg.site_fds)
		return error_set(e, "internal error: marker sites without their open files");
	for (int i = 0; i < n; i++) {
		const struct usdt_site *s = &b->sites[i];
		struct site_file *f = &b->site_files[i];

		f->fd = b->cfg.site_fds[i];
		snprintf(f->path, sizeof(f->path), "/proc/self/fd/%d", f->fd);
		if (site_file_check(f, s, 1, e) < 0)
			return -1;
		b->site_regs[i] = usdt_regs_mask(s, &b->site_stack[i]);
		if (perfrec_format_init(&b->site_fmt[i], PROBE_SAMPLE_TYPE |
					(b->site_regs[i] ? PERF_SAMPLE_REGS_USER : 0) |
					(b->site_stack[i] ? PERF_SAMPLE_STACK_USER : 0),
					0, b->site_regs[i]) < 0)
			return error_set(e, "internal error: uprobe sample layout not decodable");
#if !defined(__x86_64__) && !defined(__aarch64__)
		if (b->site_regs[i])
			return error_set(e, "marker %s:%s:%s: probe arguments are read on x86_64 "
					 "and aarch64 only", s->path, s->provider, s->name);
#endif
		if (s->semaphore && access(UPROBE_PMU "/format/ref_ctr_offset", F_OK) < 0)
			return error_set(e, "marker %s:%s:%s: the probe has a semaphore, which needs "
					 "uprobe reference counters (Linux 4.20 or later)", s->path,
					 s->provider, s->name);
	}
	return 0;
}

/* Per site, a uprobe on r's CPU writing into r's ring. */
int probes_open(struct backend *b, struct cpu_ring *r, struct error *e)
{
	if (!b->cfg.nr_sites)
		return 0;
	r->pfds = xcalloc(b->cfg.nr_sites, sizeof(*r->pfds));
	r->pids = xcalloc(b->cfg.nr_sites, sizeof(*r->pids));
	for (int i = 0; i < b->cfg.nr_sites; i++)
		r->pfds[i] = -1;
	for (int i = 0; i < b->cfg.nr_sites; i++) {
		const struct usdt_site *site = &b->sites[i];
		struct perf_event_attr a;

		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = b->uprobe_type;
		a.config = site->semaphore ? site->semaphore_offset << 32 : 0;
		a.config1 = (uint64_t)(uintptr_t)b->site_files[i].path;
		a.config2 = site->offset;
		a.sample_period = 1;
		a.sample_type = PROBE_SAMPLE_TYPE;
		if (b->site_regs[i]) {
			a.sample_type |= PERF_SAMPLE_REGS_USER;
			a.sample_regs_user = b->site_regs[i];
		}
		if (b->site_stack[i]) {
			a.sample_type |= PERF_SAMPLE_STACK_USER;
			a.sample_stack_user = PROBE_STACK_BYTES;
		}
		a.sample_id_all = 1;
		a.use_clockid = 1;	/* SET_OUTPUT needs the leader's clock */
		a.clockid = CLOCK_MONOTONIC;
		a.disabled = 1;
		r->pfds[i] = event_open(&a, -1, r->cpu, -1);
		if (r->pfds[i] < 0)
			return error_set(e, "cannot place the uprobe of marker %s:%s:%s (offset 0x%"
					 PRIx64 ") on CPU %d: %s", site->path, site->provider,
					 site->name, site->offset, r->cpu,
					 errno == EACCES || errno == EPERM ? perf_open_hint(errno) :
					 strerror(errno));
		if (ioctl(r->pfds[i], PERF_EVENT_IOC_SET_OUTPUT, r->fd) < 0)
			return error_set(e, "cannot send the uprobe of marker %s:%s:%s into the "
					 "ring of CPU %d: %s", site->path, site->provider,
					 site->name, r->cpu, strerror(errno));
		if (ioctl(r->pfds[i], PERF_EVENT_IOC_ID, &r->pids[i]) < 0)
			return error_set(e, "PERF_EVENT_IOC_ID: %s", strerror(errno));
	}
	return 0;
}

int probes_check(struct backend *b, struct error *e)
{
	for (int i = 0; i < b->cfg.nr_sites; i++)
		if (site_file_check(&b->site_files[i], &b->sites[i], 0, e) < 0)
			return -1;
	b->cfg.site_fds = NULL;		/* the caller's, closed after backend_open */
	return 0;
}

int probes_enable(struct backend *b, struct error *e)
{
	for (int i = 0; i < b->nr; i++)
		for (int j = 0; j < b->cfg.nr_sites; j++)
			if (ioctl(b->rings[i].pfds[j], PERF_EVENT_IOC_ENABLE, 0) < 0)
				return error_set(e, "cannot enable the uprobe of marker %s:%s:%s "
						 "on CPU %d: %s", b->sites[j].path,
						 b->sites[j].provider, b->sites[j].name,
						 b->rings[i].cpu, strerror(errno));
	return 0;
}

void probes_disable(struct backend *b)
{
	for (int i = 0; i < b->nr; i++)
		for (int j = 0; b->rings[i].pfds && j < b->cfg.nr_sites; j++)
			if (b->rings[i].pfds[j] >= 0)
				ioctl(b->rings[i].pfds[j], PERF_EVENT_IOC_DISABLE, 0);
}

void probes_close(struct backend *b, struct cpu_ring *r)
{
	for (int i = 0; r->pfds && i < b->cfg.nr_sites; i++)
		if (r->pfds[i] >= 0)
			close(r->pfds[i]);
	free(r->pfds);
	free(r->pids);
	r->pfds = NULL;
	r->pids = NULL;
}

void probes_free(struct backend *b)
{
	free(b->sites);
	free(b->site_regs);
	free(b->site_stack);
	free(b->site_fmt);
	free(b->site_files);
}

int probe_site(const struct backend *b, const struct cpu_ring *r, uint64_t id)
{
	for (int i = 0; i < b->cfg.nr_sites; i++)
		if (r->pids[i] == id)
			return i;
	return -1;
}

/*
 * A uprobe's PERF_RECORD_SAMPLE (laid out as b->site_fmt[site]) -> a
 * probe_hit with the arguments read from its registers and stack copy.
 */
void probe_queue(struct backend *b, struct cpu_ring *r, int site, const unsigned char *p,
		 size_t len)
{
	const struct usdt_site *s = &b->sites[site];
	uint64_t regs[USDT_NR_REGS] = { 0 }, mask = b->site_regs[site];
	const unsigned char *stack = NULL;
	size_t stack_len = 0;
	struct probe_hit *hit;
	struct perfrec pr;
	int have_regs;

	if (perfrec_decode(&b->site_fmt[site], p, len, &pr) != PERFREC_OK)
		return;
	hit = merge_queue_push(&r->q, pr.sample.time, Q_MARK, sizeof(*hit));
	memset(hit, 0, sizeof(*hit));
	hit->site = site;
	hit->pid = pr.sample.pid;
	hit->tid = pr.sample.tid;
	hit->cpu = pr.sample.cpu;
	have_regs = pr.sample.regs != NULL;
	if (have_regs) {
		const unsigned char *q = pr.sample.regs;

		/* in ascending bit order, as many as the mask has bits */
		for (int i = 0; i < USDT_NR_REGS; i++)
			if (mask & (1ULL << i)) {
				regs[i] = perfrec_get64(q);
				q += 8;
			}
	}
	if (b->site_stack[site] && have_regs && pr.sample.stack) {
		stack = pr.sample.stack;
		stack_len = pr.sample.stack_dyn_size;	/* what was copied */
	}
	for (int i = 0; i < s->nargs; i++) {
		const struct usdt_arg *a = &s->args[i];

		if ((a->kind == USDT_ARG_CONST || have_regs) &&
		    usdt_arg_value(a, regs, stack, stack_len, &hit->vals[i]) == 0)
			hit->known |= 1u << i;
	}
}

/* A probe hit to the sink, as a marker "usdt" named PROVIDER:NAME. */
int probe_deliver(struct backend *b, const struct merge_ent *q, struct error *e)
{
	const struct probe_hit *hit = merge_payload(q);
	const struct usdt_site *s = &b->sites[hit->site];
	char name[2 * USDT_MAX_NAME + 1], args[USDT_MAX_ARGS * 24];
	struct sink_marker m = {
		.time_ns = q->time, .cpu = hit->cpu, .pid = hit->pid, .tid = hit->tid,
		.kind = "usdt", .name = name, .args = s->nargs ? args : NULL,
	};

	snprintf(name, sizeof(name), "%s:%s", s->provider, s->name);
	usdt_format_args(s, hit->vals, hit->known, args, sizeof(args));
	return b->sink.marker(b->sink.ctx, &m, e);
}
