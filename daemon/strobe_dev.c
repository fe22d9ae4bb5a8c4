/*
 * strobe_dev.c - the client side of /dev/strobe (see strobe_dev.h).
 *
 * Each CPU's ring is mapped twice: its control page read-write (we store
 * ->tail there) and its record pages read-only (the driver refuses a
 * writable mapping of records).  The consumer side of the protocol in
 * kernel/uapi/strobe.h:
 *
 *   h = load-acquire(ctrl->head)      pairs with the handler's smp_wmb()
 *   read records in [tail, h)
 *   store-release(ctrl->tail, h)      the handler may reuse the space
 *
 * Offsets and sizes are in pages of sysconf(_SC_PAGESIZE), the kernel's
 * PAGE_SIZE: the control area is one page (16 or 64 KiB on some arm64
 * kernels), which the driver confirms in ctrl->page_size.
 *
 * CPU hotplug records (STROBE_REC_CPU_OFFLINE/ONLINE) are handled here: they
 * are logged and counted, not handed to the caller (the database has no
 * place for them yet).
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "log.h"
#include "strobe_dev.h"

struct dev_ring {
	int cpu;
	struct strobe_ring_ctrl *ctrl;
	const unsigned char *data;
	uint32_t size;
	uint64_t offline, online;	/* hotplug records read */
};

struct strobe_dev {
	int fd;
	int nr;
	struct dev_ring *rings;
	size_t page_size;
	size_t data_size;
};

static const char *dev_hint(int err)
{
	switch (err) {
	case ENOENT:
	case ENXIO:
	case ENODEV:
		return "no such device: load the driver (insmod kernel/strobe.ko) "
		       "or run strobed --backend perf";
	case EACCES:
	case EPERM:
		return "permission denied: strobed must run as root";
	case EBUSY:
		return "the driver is in use by another session (one at a time)";
	}
	return strerror(err);
}

static const char *config_hint(int err)
{
	switch (err) {
	case ENOENT:
		return "no such event on this CPU's PMU";
	case EOPNOTSUPP:
		return "this PMU cannot sample this event";
	case E2BIG:
		return "too many events or an attr this driver does not know";
	case EINVAL:
		return "invalid configuration (frequency above 100 kHz, or an "
		       "attribute the driver refuses)";
	case ENOMEM:
		return "out of memory: lower --buffer-pages";
	}
	return strerror(err);
}

struct strobe_dev *strobe_dev_open(const char *path, const struct perf_event_attr *sampler,
				   const char *sampler_name,
				   const struct perf_event_attr *counters,
				   const char *const *counter_names, int nr,
				   const int *cpus, int nr_cpus, unsigned pages,
				   uint32_t config_flags, struct error *e)
{
	struct strobe_dev *d = xcalloc(1, sizeof(*d));
	struct strobe_config cfg;
	long pg = sysconf(_SC_PAGESIZE);

	d->page_size = pg;
	d->fd = open(path, O_RDWR | O_CLOEXEC);
	if (d->fd < 0) {
		error_set(e, "cannot open %s: %s", path, dev_hint(errno));
		goto fail;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.size = sizeof(cfg);
	cfg.nr_counters = nr;
	cfg.sample_attr = (uintptr_t)sampler;
	cfg.counter_attrs = (uintptr_t)counters;
	cfg.attr_size = sizeof(struct perf_event_attr);
	cfg.buffer_pages = pages;
	cfg.flags = config_flags;
	for (int i = 0; i < nr_cpus; i++) {
		if (cpus[i] < 0 || cpus[i] >= (int)sizeof(cfg.cpu_mask) * 8) {
			error_set(e, "CPU %d is beyond the driver's CPU mask", cpus[i]);
			goto fail;
		}
		cfg.cpu_mask[cpus[i] / 64] |= 1ULL << (cpus[i] % 64);
	}
	if (ioctl(d->fd, STROBE_IOC_CONFIG, &cfg) < 0) {
		/* strobe.ko walks stacks on these two only (kernel/README.md) */
		bool chain_arch = false;
#if defined(__x86_64__) || defined(__aarch64__)
		chain_arch = true;
#endif
		if ((config_flags & STROBE_CONFIG_CALLCHAIN) && errno == EOPNOTSUPP &&
		    cfg.refused == 0 && !chain_arch) {
			error_set(e, "%s cannot record call stacks on this architecture "
				  "(the driver walks stacks on x86-64 and arm64 only): use "
				  "--backend perf for -g", path);
			goto fail;
		}
		if (errno == EOPNOTSUPP && cfg.refused >= 1 && cfg.refused <= (uint32_t)nr) {
			error_set(e, "%s cannot count '%s': the driver reads counters from its "
				  "overflow handler (an NMI), and this event's PMU cannot be read "
				  "there (uncore, package and other PMUs, task-clock): use "
				  "--backend perf for it", path, counter_names[cfg.refused - 1]);
			goto fail;
		}
		/* The events passed event_probe() through perf_event_open(),
		 * so this is a driver limit: name the events involved. */
		error_set(e, "%s refuses sampling event '%s'%s%s%s: %s", path, sampler_name,
			  nr ? " with counting events '" : "", nr ? counter_names[0] : "",
			  nr > 1 ? "', ...'" : nr ? "'" : "", config_hint(errno));
		goto fail;
	}
	d->data_size = (size_t)pages * pg;
	d->rings = xcalloc(nr_cpus, sizeof(*d->rings));
	for (int i = 0; i < nr_cpus; i++) {
		struct dev_ring *r = &d->rings[i];
		off_t base = (off_t)cpus[i] * (d->page_size + d->data_size);
		void *m;

		r->cpu = cpus[i];
		d->nr++;
		m = mmap(NULL, d->page_size, PROT_READ | PROT_WRITE, MAP_SHARED, d->fd, base);
		if (m == MAP_FAILED) {
			error_set(e, "cannot map the control page of CPU %d from %s: %s",
				  r->cpu, path, strerror(errno));
			goto fail;
		}
		r->ctrl = m;
		if (r->ctrl->page_size != d->page_size) {
			error_set(e, "%s: the driver's pages are %u bytes, strobed's %zu: driver "
				  "and strobed disagree on the ABI", path, r->ctrl->page_size,
				  d->page_size);
			goto fail;
		}
		if (r->ctrl->abi_version != STROBE_ABI_VERSION) {
			error_set(e, "%s speaks ABI %u, strobed ABI %u: build and load the "
				  "strobe.ko of this strobed (make -C kernel)", path,
				  r->ctrl->abi_version, STROBE_ABI_VERSION);
			goto fail;
		}
		m = mmap(NULL, d->data_size, PROT_READ, MAP_SHARED, d->fd, base + d->page_size);
		if (m == MAP_FAILED) {
			error_set(e, "cannot map the %zu KiB ring of CPU %d from %s: %s",
				  d->data_size / 1024, r->cpu, path, strerror(errno));
			goto fail;
		}
		r->data = m;
		r->size = r->ctrl->data_size;
		if (r->size != d->data_size) {
			error_set(e, "%s: CPU %d ring is %u bytes, expected %zu: driver and "
				  "strobed disagree on the ABI", path, r->cpu, r->size, d->data_size);
			goto fail;
		}
	}
	return d;
fail:
	strobe_dev_close(d);
	return NULL;
}

int strobe_dev_fd(const struct strobe_dev *d)
{
	return d->fd;
}

int strobe_dev_start(struct strobe_dev *d, struct error *e)
{
	int err;

	if (ioctl(d->fd, STROBE_IOC_START, 0) == 0)
		return 0;
	err = errno;
	error_set(e, "cannot start the driver's session: %s",
		  err == ENOSPC ? "the PMU has too few counters for these events: use fewer -e" :
		  strerror(err));
	errno = err;
	return -1;
}

int strobe_dev_stop(struct strobe_dev *d)
{
	return ioctl(d->fd, STROBE_IOC_STOP, 0);
}

/*
 * Hand the records in [p, p + len) of ring r to fn; the span never cuts a
 * record (the driver pads to the ring's end instead of wrapping one).
 * Returns the bytes consumed: all of them, or up to and including the
 * record fn failed on (-1 in *ret); or SKIP_ALL after a malformed record
 * (*ret -1, e says so): the ring is then skipped to its head.
 */
#define SKIP_ALL SIZE_MAX

static size_t parse(struct dev_ring *r, const unsigned char *p, size_t len, uint32_t at,
		    strobe_dev_fn fn, void *ctx, int *ret, struct error *e)
{
	size_t off = 0;

	while (off < len) {
		struct record rec;
		size_t used;

		switch (record_decode(p + off, len - off, &rec, &used)) {
		case RECORD_OK:
			if (rec.cpu != (uint32_t)r->cpu) {
				*ret = error_set(e, "driver ring of CPU %d holds a record of CPU %u: "
						 "records skipped", r->cpu, rec.cpu);
				return SKIP_ALL;
			}
			off += used;
			if (rec.type == STROBE_REC_CPU_OFFLINE) {
				r->offline++;
				daemon_log("CPU %d went offline (CLOCK_MONOTONIC %" PRIu64 " ns): "
					"no samples of it until it is back", r->cpu, rec.time_ns);
			} else if (rec.type == STROBE_REC_CPU_ONLINE) {
				r->online++;
				daemon_log("CPU %d is back online (CLOCK_MONOTONIC %" PRIu64 " ns): "
					"sampled again", r->cpu, rec.time_ns);
			} else if (fn(ctx, &rec, e) < 0) {
				*ret = -1;
				return off;
			}
			break;
		case RECORD_PAD:
			off += used;
			break;
		default:
			*ret = error_set(e, "malformed record in the driver ring of CPU %d at "
					 "offset %zu: records skipped", r->cpu,
					 (size_t)((at + off) & (r->size - 1)));
			return SKIP_ALL;
		}
	}
	return off;
}

int strobe_dev_read(struct strobe_dev *d, int i, strobe_dev_fn fn, void *ctx,
		    struct error *e)
{
	struct dev_ring *r = &d->rings[i];
	uint64_t head = __atomic_load_n(&r->ctrl->head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->ctrl->tail;
	int ret = 0;

	if (head - tail > r->size) {
		__atomic_store_n(&r->ctrl->tail, head, __ATOMIC_RELEASE);
		return error_set(e, "driver ring of CPU %d is inconsistent (head %" PRIu64
				 ", tail %" PRIu64 "): records skipped", r->cpu, head, tail);
	}
	while (tail < head && ret == 0) {
		uint32_t off = tail & (r->size - 1);
		size_t avail = MIN(head - tail, (uint64_t)(r->size - off));

		size_t used = parse(r, r->data + off, avail, off, fn, ctx, &ret, e);

		tail = used == SKIP_ALL ? head : tail + used;
	}
	/* the handler may reuse the space once it sees the new tail */
	__atomic_store_n(&r->ctrl->tail, tail, __ATOMIC_RELEASE);
	return ret;
}

int strobe_dev_copy(struct strobe_dev *d, int i, uint64_t max, strobe_dev_put_fn put,
		    void *ctx)
{
	struct dev_ring *r = &d->rings[i];
	uint64_t head = __atomic_load_n(&r->ctrl->head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->ctrl->tail, n = 0, samples = 0, end;
	uint32_t off;
	size_t first;

	if (head == tail)
		return 0;
	if (head - tail > r->size)
		tail = head - r->size;	/* not the driver's protocol: parse says so */
	off = tail & (r->size - 1);
	/* whole records, at most max bytes: headers are 8-aligned, never cut */
	for (end = tail; end < head;) {
		struct strobe_rec_header h;

		memcpy(&h, r->data + (end & (r->size - 1)), sizeof(h));
		/* a record past head (or, after the clamp above, past the ring)
		 * is malformed too: nothing is copied beyond what was written */
		if (h.size < sizeof(h) || h.size % 8 || h.size > head - end) {
			end = head;	/* malformed: all of it, for parse to say so */
			break;
		}
		if (end + h.size - tail > max)
			break;
		if (h.type != STROBE_REC_PAD)
			n++;
		samples += h.type == STROBE_REC_SAMPLE;
		end += h.size;
	}
	if (end == tail)
		return -1;
	first = MIN(end - tail, (uint64_t)(r->size - off));
	if (put(ctx, r->data + off, first, r->data, end - tail - first, n, samples) != 0)
		return -1;
	__atomic_store_n(&r->ctrl->tail, end, __ATOMIC_RELEASE);
	return end == head ? 1 : 2;
}

int strobe_dev_parse(struct strobe_dev *d, int i, const void *buf, size_t len,
		     strobe_dev_fn fn, void *ctx, struct error *e)
{
	int ret = 0;

	parse(&d->rings[i], buf, len, 0, fn, ctx, &ret, e);
	return ret;
}

int strobe_dev_stats(struct strobe_dev *d, struct strobe_cpu_stats *out, struct error *e)
{
	struct strobe_stats st;
	struct strobe_cpu_stats *all;
	int max = 0;

	for (int i = 0; i < d->nr; i++)
		max = MAX(max, d->rings[i].cpu + 1);
	all = xcalloc(max, sizeof(*all));
	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	st.nr_cpus = max;
	st.cpus = (uintptr_t)all;
	if (ioctl(d->fd, STROBE_IOC_STATS, &st) < 0) {
		free(all);
		return error_set(e, "cannot read the driver's statistics: %s", strerror(errno));
	}
	for (int i = 0; i < d->nr; i++) {
		const struct dev_ring *r = &d->rings[i];

		out[i] = all[r->cpu];
		if (out[i].offline || out[i].online)
			daemon_log("CPU %d went offline %" PRIu64 " times and came back %" PRIu64
				" times during the session (%" PRIu64 " and %" PRIu64
				" read from its ring so far)", r->cpu, (uint64_t)out[i].offline,
				(uint64_t)out[i].online, r->offline, r->online);
	}
	free(all);
	return 0;
}

void strobe_dev_close(struct strobe_dev *d)
{
	if (!d)
		return;
	for (int i = 0; i < d->nr; i++) {
		if (d->rings[i].ctrl)
			munmap(d->rings[i].ctrl, d->page_size);
		if (d->rings[i].data)
			munmap((void *)d->rings[i].data, d->data_size);
	}
	free(d->rings);
	if (d->fd >= 0)
		close(d->fd);
	free(d);
}
