/*
 * progress.c - a progress meter on a terminal (see progress.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include "progress.h"
#include "util.h"

#define DELAY_MS_DEFAULT	1000
#define DRAW_NS			100000000ULL	/* at most 10 lines a second */
#define CHECK_LO_NS		5000000ULL	/* the clock is read every 5..20 ms */
#define CHECK_HI_NS		20000000ULL
#define EVERY_MAX		(1u << 16)

void progress_init(struct progress *p, const char *label, int fd, uint64_t total,
		   const char *unit)
{
	const char *v = getenv("STROBE_PROGRESS");
	const char *d = getenv("STROBE_PROGRESS_DELAY_MS");
	uint64_t delay_ms = DELAY_MS_DEFAULT;

	memset(p, 0, sizeof(*p));
	p->fd = fd;
	p->label = label;
	p->unit = unit;
	p->total = total;
	p->every = 1;
	p->on = isatty(fd) && !(v && !strcmp(v, "0"));
	if (d && *d >= '0' && *d <= '9') {
		char *end;
		unsigned long long ms = strtoull(d, &end, 10);

		if (!*end && ms < 86400000ULL)
			delay_ms = ms;
	}
	p->delay_ns = delay_ms * 1000000ULL;
	p->start_ns = p->phase_ns = p->last_check_ns = clock_monotonic_ns();
}

void progress_phase(struct progress *p, uint64_t total, const char *unit)
{
	if (!p)
		return;
	p->total = total;
	p->unit = unit;
	p->done = 0;
	if (p->on)
		p->phase_ns = clock_monotonic_ns();
}

void progress_total(struct progress *p, uint64_t total)
{
	if (p)
		p->total = total;
}

/* v as 1.2 k, 34.5 M, 678 G. */
static void human(char *buf, size_t size, uint64_t v)
{
	static const char suffix[] = "kMGTPE";
	double x = (double)v;
	int i = -1;

	if (v < 1000) {
		snprintf(buf, size, "%llu", (unsigned long long)v);
		return;
	}
	while (x >= 999.95 && i < 5) {
		x /= 1000;
		i++;
	}
	snprintf(buf, size, x < 99.95 ? "%.1f %c" : "%.0f %c", x, suffix[i]);
}

static void clock_text(char *buf, size_t size, uint64_t s)
{
	if (s >= 3600)
		snprintf(buf, size, "%llu:%02llu:%02llu", (unsigned long long)(s / 3600),
			 (unsigned long long)(s / 60 % 60), (unsigned long long)(s % 60));
	else
		snprintf(buf, size, "%llu:%02llu", (unsigned long long)(s / 60),
			 (unsigned long long)(s % 60));
}

size_t progress_format(char *buf, size_t size, const char *label, uint64_t done,
		       uint64_t total, const char *unit, uint64_t elapsed_ns, int width)
{
	char part[3][96], d[32], t[32], left[32];
	size_t n = 0, max = size ? size - 1 : 0;
	int nparts = 1, pct;

	if (!size)
		return 0;
	if (width > 1 && (size_t)width - 1 < max)
		max = (size_t)width - 1;
	if (total && done > total)
		done = total;
	human(d, sizeof(d), done);
	if (total) {
		human(t, sizeof(t), total);
		pct = (int)(done * 100.0 / (double)total);
		snprintf(part[0], sizeof(part[0]), "%d%% %s of %s %s", pct, d, t, unit);
	} else {
		snprintf(part[0], sizeof(part[0]), "%s %s", d, unit);
	}
	snprintf(part[1], sizeof(part[1]), "%.1f s", elapsed_ns / 1e9);
	nparts = 2;
	if (total && done && done < total) {
		double rest = (double)elapsed_ns / 1e9 * (double)(total - done) / (double)done;

		clock_text(left, sizeof(left), (uint64_t)(rest + 0.5));
		snprintf(part[2], sizeof(part[2]), "%s left", left);
		nparts = 3;
	}
	/* leave parts out from the end until the line fits, then clip */
	for (; nparts >= 1; nparts--) {
		n = (size_t)snprintf(buf, size, "%s: %s", label, part[0]);
		for (int i = 1; i < nparts && n < size; i++)
			n += (size_t)snprintf(buf + n, size - n, ", %s", part[i]);
		if (n >= size)
			n = size - 1;
		if (n <= max)
			return n;
	}
	buf[max] = 0;
	return max;
}

static void put(int fd, const char *s, size_t len)
{
	while (len) {
		ssize_t w = write(fd, s, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		len -= (size_t)w;
	}
}

static void draw(struct progress *p, uint64_t now)
{
	struct winsize ws;
	char line[512];
	int width = 80;
	size_t n;

	if (ioctl(p->fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		width = ws.ws_col;
	line[0] = '\r';
	n = progress_format(line + 1, sizeof(line) - 5, p->label, p->done, p->total, p->unit,
			    now - p->phase_ns, width);
	memcpy(line + 1 + n, "\033[K", 3);	/* clear what a longer line left */
	put(p->fd, line, n + 4);
	p->drawn = 1;
	p->last_draw_ns = now;
}

void progress_tick(struct progress *p)
{
	uint64_t now = clock_monotonic_ns(), dt = now - p->last_check_ns;

	/* read the clock about every 5..20 ms whatever the rate of calls */
	if (dt < CHECK_LO_NS && p->every < EVERY_MAX)
		p->every *= 2;
	else if (dt > CHECK_HI_NS && p->every > 1)
		p->every /= 2;
	p->ticks = 0;
	p->last_check_ns = now;
	if (now - p->start_ns < p->delay_ns)
		return;
	if (p->drawn && now - p->last_draw_ns < DRAW_NS)
		return;
	draw(p, now);
}

void progress_done(struct progress *p)
{
	if (!p)
		return;
	if (p->drawn)
		put(p->fd, "\r\033[K", 4);
	p->drawn = 0;
	p->on = 0;
}
