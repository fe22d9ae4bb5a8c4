/*
 * unwindbench - the cost of dwarf unwinding (lib/ingest/unwind.c) per
 * sample, on a real program's samples.
 *
 * Usage: unwindbench [-w|-W] [-F HZ] [-b STACK_BYTES] [-r ROUNDS] PROGRAM [ARGS...]
 *
 * Runs PROGRAM under a cpu-clock perf event (HZ samples/s, default 1000)
 * that takes its user registers (callgraph_regs_mask()) and STACK_BYTES of
 * its user stack (default 8192, as perf's --call-graph dwarf), keeps every
 * sample, and reads its executable mappings from /proc/PID/maps while it
 * runs.  Once it exited, unwinds all the samples ROUNDS times (default 3)
 * with one unwinder, the binaries opened by their paths, and prints (one
 * "key: value" per line) the samples, the time of the first round (the
 * sessions built) and the best of the others per sample, the mean number of
 * frames, and how many samples ended with each unwind result.
 * -w: unwind in the worker strobed uses (uworker.h: a process without
 * rights) instead of in this process, in batches as ingest sends them
 * (uworker_add until the batch is full, uworker_run, then each answer);
 * -W: the same, one round trip a sample (uworker_unwind).  With either,
 * the round trips of a round are printed.  At most 1024 frames a sample
 * (ingest's INGEST_STACK_FRAMES, which bounds a batch's answer too).
 * Nothing is asserted: a measurement, not a test.  Needs the right to
 * profile PROGRAM (root, or perf_event_paranoid <= 1).
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include "events.h"
#include "perfrec.h"
#include "unwind.h"
#include "uworker.h"
#include "util.h"

#define RING_PAGES	1024
#define MAX_SAMPLES	20000
#define MAX_FRAMES	1024	/* INGEST_STACK_FRAMES */

struct sample {
	uint64_t abi, mask;
	uint32_t nr_regs;
	unsigned char *regs, *stack;
	uint64_t stack_size;
};

static char *paths[1024];
static size_t nr_paths;

static int open_binary(void *ctx, int64_t id)
{
	if (id < 1 || (size_t)id > nr_paths)
		return -1;
	return open(paths[id - 1], O_RDONLY | O_CLOEXEC);
}

static int64_t path_id(const char *path)
{
	size_t i;

	for (i = 0; i < nr_paths; i++)
		if (!strcmp(paths[i], path))
			return (int64_t)i + 1;
	if (nr_paths == sizeof(paths) / sizeof(paths[0]))
		return 0;
	paths[nr_paths++] = xstrdup(path);
	return (int64_t)nr_paths;
}

/* p's maps from /proc/PID/maps: its executable file mappings.  0 if it
 * had any. */
static int read_maps(pid_t pid, struct proc *p)
{
	char name[64], line[4096];
	FILE *f;
	size_t n = 0;

	snprintf(name, sizeof(name), "/proc/%d/maps", (int)pid);
	f = fopen(name, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off;
		char perms[8], path[4096];

		path[0] = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095[^\n]", &s, &e, perms, &off,
			   path) < 4 || perms[2] != 'x' || path[0] != '/')
			continue;
		if (!n)
			p->nr_maps = 0;
		ARRAY_GROW(p->maps, p->cap_maps, p->nr_maps + 1);
		p->maps[p->nr_maps].start = s;
		p->maps[p->nr_maps].end = e;
		p->maps[p->nr_maps].pgoff = off;
		p->maps[p->nr_maps].binary_id = path_id(path);
		p->nr_maps++;
		n++;
	}
	fclose(f);
	return n ? 0 : -1;
}

/* Samples from i on, as many as one batch holds, unwound in the worker
 * (counted when count): the index of the first one left. */
static size_t batch_run(struct uworker *uw, const struct proc *p, const struct sample *samples,
			size_t nr_samples, size_t i, int count, uint64_t *counts, uint64_t *frames)
{
	static uint64_t ips[MAX_FRAMES];
	size_t first = i, n;

	for (; i < nr_samples; i++) {
		const struct sample *c = &samples[i];

		int k = uworker_add(uw, p, (uint32_t)c->abi, c->mask, c->regs, c->nr_regs,
				    c->stack, c->stack_size, MAX_FRAMES);

		if (k == UWORKER_INVALID && i == first) {
			counts[UNWIND_ERROR] += count;	/* too large: never sent */
			return i + 1;
		}
		if (k < 0)
			break;
	}
	n = uworker_run(uw);
	for (size_t k = 0; count && k < n; k++) {
		size_t nr;
		int64_t stop;

		counts[uworker_result(uw, k, ips, &nr, &stop)]++;
		*frames += nr;
	}
	return first + n;
}

int main(int argc, char **argv)
{
	struct perf_event_attr a;
	struct perfrec_format f;
	struct perf_event_mmap_page *meta;
	struct sample *samples = xcalloc(MAX_SAMPLES, sizeof(*samples));
	size_t nr_samples = 0, dropped = 0, i, round, rounds = 3;
	unsigned long hz = 1000, stack_bytes = 8192;
	unsigned char *data, tmp[PERFREC_MAX_SIZE];
	uint64_t size, counts[UNWIND_FAILED + 1] = { 0 }, frames = 0, best = 0, first = 0;
	uint64_t ips[MAX_FRAMES];
	struct unwind_ops ops = { NULL, open_binary, NULL };
	struct unwinder *u = NULL;
	struct uworker *uw = NULL;
	struct proc p;
	struct error e;
	int fd, go[2], status, opt, exited = 0, worker = 0;
	pid_t child;

	while ((opt = getopt(argc, argv, "+wWF:b:r:")) != -1) {
		if (opt == 'F')
			hz = strtoul(optarg, NULL, 10);
		else if (opt == 'b')
			stack_bytes = strtoul(optarg, NULL, 10);
		else if (opt == 'r')
			rounds = strtoul(optarg, NULL, 10);
		else if (opt == 'w')
			worker = 2;	/* batched */
		else if (opt == 'W')
			worker = 1;
		else
			goto usage;
	}
	if (optind >= argc || !hz || !rounds || stack_bytes > 65000 || stack_bytes % 8) {
usage:
		fprintf(stderr, "usage: unwindbench [-w|-W] [-F HZ] [-b STACK_BYTES] [-r ROUNDS] PROGRAM [ARGS...]\n");
		return 2;
	}
	if (!callgraph_regs_mask()) {
		fprintf(stderr, "unwindbench: no dwarf unwinding on this architecture\n");
		return 1;
	}
	if (pipe(go)) {
		perror("unwindbench: pipe");
		return 1;
	}
	child = fork();
	if (child < 0) {
		perror("unwindbench: fork");
		return 1;
	}
	if (!child) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "unwindbench: %s: %s\n", argv[optind], strerror(errno));
		_exit(127);
	}
	close(go[0]);
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.freq = 1;
	a.sample_freq = hz;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	a.sample_regs_user = callgraph_regs_mask();
	a.sample_stack_user = (uint32_t)stack_bytes;
	a.disabled = 1;
	a.enable_on_exec = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.sample_id_all = 1;
	fd = event_open(&a, child, -1, -1);
	if (fd < 0) {
		perror("unwindbench: perf_event_open");
		kill(child, SIGKILL);
		return 1;
	}
	size = (uint64_t)RING_PAGES * (uint64_t)sysconf(_SC_PAGESIZE);
	meta = mmap(NULL, size + (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE,
		    MAP_SHARED, fd, 0);
	if (meta == MAP_FAILED) {
		perror("unwindbench: mmap");
		kill(child, SIGKILL);
		return 1;
	}
	data = (unsigned char *)meta + sysconf(_SC_PAGESIZE);
	if (perfrec_format_init(&f, a.sample_type, 0, a.sample_regs_user)) {
		fprintf(stderr, "unwindbench: sample format not supported\n");
		return 1;
	}
	memset(&p, 0, sizeof(p));
	p.pid = (uint32_t)child;
	p.start_ns = 1;
	if (write(go[1], "g", 1) != 1)
		return 1;
	close(go[1]);
	while (1) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		uint64_t head, tail;

		if (!exited) {
			poll(&pfd, 1, 20);
			read_maps(child, &p);	/* the last complete one is kept */
		}
		head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
		tail = meta->data_tail;
		while (1) {
			struct perf_event_header h;
			const unsigned char *rec;
			struct perfrec r;

			if (perfrec_ring_next(data, size, tail, head, tmp, &h, &rec) != PERFREC_OK)
				break;
			if (perfrec_decode(&f, rec, h.size, &r) == PERFREC_OK &&
			    r.type == PERF_RECORD_SAMPLE) {
				struct perfrec_sample *s = &r.sample;
				struct sample *c = &samples[nr_samples];

				if (nr_samples == MAX_SAMPLES) {
					dropped++;
				} else {
					c->abi = s->regs_abi;
					c->mask = a.sample_regs_user;
					c->nr_regs = s->regs_abi ? (uint32_t)__builtin_popcountll(c->mask) : 0;
					c->regs = xmalloc(c->nr_regs * 8 + 1);
					memcpy(c->regs, s->regs, c->nr_regs * 8);
					c->stack_size = s->stack ? s->stack_dyn_size : 0;
					c->stack = xmalloc(c->stack_size + 1);
					memcpy(c->stack, s->stack, c->stack_size);
					nr_samples++;
				}
			}
			tail += h.size;
		}
		__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
		if (exited)
			break;
		if (waitpid(child, &status, WNOHANG) == child)
			exited = 1;
	}
	if (!p.nr_maps) {
		fprintf(stderr, "unwindbench: no maps read of %s\n", argv[optind]);
		return 1;
	}
	if (worker)
		uw = uworker_new(&ops, &e);
	else
		u = unwinder_new(&ops, &e);
	if (!u && !uw) {
		fprintf(stderr, "unwindbench: %s\n", e.msg);
		return 1;
	}
	for (round = 0; round < rounds; round++) {
		uint64_t t0 = clock_monotonic_ns(), t;

		for (i = 0; worker == 2 && i < nr_samples;)
			i = batch_run(uw, &p, samples, nr_samples, i, !round, counts, &frames);
		for (i = 0; worker < 2 && i < nr_samples; i++) {
			struct sample *c = &samples[i];
			size_t nr;
			int64_t stop;
			enum unwind_result r = uw ?
				uworker_unwind(uw, &p, (uint32_t)c->abi, c->mask, c->regs,
					       c->nr_regs, c->stack, c->stack_size, ips,
					       MAX_FRAMES, &nr, &stop) :
				unwind_user(u, &p, (uint32_t)c->abi, c->mask, c->regs,
					    c->nr_regs, c->stack, c->stack_size, ips,
					    MAX_FRAMES, &nr, &stop);

			if (!round) {
				counts[r]++;
				frames += nr;
			}
		}
		t = clock_monotonic_ns() - t0;
		if (!round)
			first = t;
		else if (!best || t < best)
			best = t;
	}
	if (uw) {
		struct uworker_counts uc;

		uworker_counts(uw, &uc);
		printf("round_trips_per_round: %.0f\n", (double)uc.calls / rounds);
	}
	printf("samples: %zu\n", nr_samples);
	printf("samples_dropped: %zu\n", dropped);
	printf("maps: %zu\n", p.nr_maps);
	if (nr_samples) {
		printf("frames_per_sample: %.1f\n", (double)frames / nr_samples);
		printf("first_round_ns_per_sample: %.0f\n", (double)first / nr_samples);
		if (best)
			printf("ns_per_sample: %.0f\n", (double)best / nr_samples);
	}
	for (i = 0; i <= UNWIND_FAILED; i++)
		if (counts[i])
			printf("result %s: %llu\n", unwind_result_name((enum unwind_result)i),
			       (unsigned long long)counts[i]);
	unwinder_free(u);
	uworker_free(uw);
	for (i = 0; i < nr_samples; i++) {
		free(samples[i].regs);
		free(samples[i].stack);
	}
	free(samples);
	free(p.maps);
	while (nr_paths)
		free(paths[--nr_paths]);
	return WIFEXITED(status) ? 0 : 1;
}
