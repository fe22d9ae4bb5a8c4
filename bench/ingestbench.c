/*
 * ingestbench - the daemon's ingest path, without the kernel.
 *
 * Usage: ingestbench [-n SAMPLES] [-k KEEP_DB_PATH] [-o OFFSETS] [-t THREADS] [-g CHAINS]
 *
 * Does what strobed does for a session, minus perf_event_open: creates a
 * fresh database (db_open DB_WRITE, in a temporary directory unless -k),
 * stores a session row with two counting events on two CPUs, starts
 * ingest_new(), feeds one process (ingest_comm, then ingest_mmap of this
 * program's own executable text mapping, so the binary is hashed and
 * copied into the cache as in real life), then SAMPLES sample records
 * (STROBE_REC_SAMPLE; CPUs alternate, time increases by 25 us, i.e. 20 kHz
 * per CPU, ips spread uniformly over OFFSETS (default 4096) evenly spaced
 * offsets of the mapping, counters increase) through
 * ingest_record(), and ingest_finish().  With -t THREADS (default 1) the
 * process has THREADS threads, the leader and THREADS - 1 others announced
 * by fork records, and each sample is taken in one of them drawn at random
 * (so the thread changes at almost every sample, the worst case for the
 * per-process thread set).  With -g CHAINS each sample carries a user
 * callchain (as --call-graph fp): its IP, then 15 return addresses, the
 * callers of one of CHAINS caller chains drawn at random (so a session
 * has up to OFFSETS x CHAINS distinct stacks, schema 14) and the session
 * row says call_graph "fp", as 'strobe record --call-graph fp' would.
 *
 * Then it opens the database again read-only, as 'strobe report' does,
 * and times report_build(--by symbol) on the session.  That report reads
 * the histogram sample_agg, so its time should not depend on SAMPLES.
 *
 * Output (one "key: value" per line):
 *   samples, setup seconds (session row, ingest_new, comm, mmap with the
 *   binary hashed and cached), ingest seconds (the ingest_record loop plus
 *   ingest_finish), samples/s, ingest CPU seconds, database bytes,
 *   report rows and report seconds.
 * Nothing is asserted: this is a measurement, not a test.
 */
#include "config.h"
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include "bincache.h"
#include "db.h"
#include "ingest.h"
#include "output.h"
#include "record.h"
#include "report.h"

#define NR_CPUS		2
#define BENCH_DEPTH	16	/* -g: frames of a sample's callchain */

static double now_s(void)
{
	return clock_monotonic_ns() / 1e9;
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static void die(const char *what, const struct error *e)
{
	fprintf(stderr, "ingestbench: %s: %s\n", what, e ? e->msg : strerror(errno));
	exit(1);
}

/* The executable text mapping of this program, from /proc/self/maps. */
static int self_text(char *path, size_t pathlen, uint64_t *start, uint64_t *len,
		     uint64_t *pgoff)
{
	char exe[PATH_MAX], line[PATH_MAX + 256];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	FILE *f;
	int found = 0;

	if (n <= 0)
		return -1;
	exe[n] = 0;
	f = fopen("/proc/self/maps", "r");
	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off;
		char perms[8], file[PATH_MAX];

		file[0] = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095[^\n]", &s, &e, perms, &off,
			   file) < 4)
			continue;
		if (perms[2] != 'x' || strcmp(file, exe))
			continue;
		*start = s;
		*len = e - s;
		*pgoff = off;
		snprintf(path, pathlen, "%s", file);
		found = 1;
	}
	fclose(f);
	return found ? 0 : -1;
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	remove(p);
	return 0;
}

static long long file_size(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 ? (long long)st.st_size : 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: ingestbench [-n SAMPLES] [-k KEEP_DB_PATH] [-o OFFSETS] [-t THREADS] [-g CHAINS]\n");
}

int main(int argc, char **argv)
{
	uint64_t nsamples = 1000000, noffsets = 4096, nthreads = 1, start, len, pgoff;
	const char *keep = NULL;
	char tmpdir[64] = "", dbpath[PATH_MAX], exe[PATH_MAX];
	struct db_session s;
	struct sink_mmap m;
	struct ingest_stats ist;
	struct bincache cache;
	struct ingest *in;
	struct record r;
	struct error e;
	struct db *db;
	double t0, t1, t2, c1, c2, tr0, tr1;
	uint64_t rng = 0x9e3779b97f4a7c15ULL, tns, step, last[NR_CPUS][2] = { { 0 } };
	uint32_t pid = getpid();
	uint64_t nchains = 0, ips[1 + BENCH_DEPTH];
	int c;
	char *cdir;

	while ((c = getopt(argc, argv, "n:k:o:t:g:h")) != -1) {
		switch (c) {
		case 'n': {
			char *end;

			errno = 0;
			nsamples = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || !nsamples) {
				fprintf(stderr, "ingestbench: bad sample count '%s'\n", optarg);
				return 2;
			}
			break;
		}
		case 'k':
			keep = optarg;
			break;
		case 'o': {
			char *end;

			errno = 0;
			noffsets = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || !noffsets) {
				fprintf(stderr, "ingestbench: bad offset count '%s'\n", optarg);
				return 2;
			}
			break;
		}
		case 't': {
			char *end;

			errno = 0;
			nthreads = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || !nthreads || nthreads > 1000000) {
				fprintf(stderr, "ingestbench: bad thread count '%s' (1 to 1000000)\n",
					optarg);
				return 2;
			}
			break;
		}
		case 'g': {
			char *end;

			errno = 0;
			nchains = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || !nchains) {
				fprintf(stderr, "ingestbench: bad chain count '%s'\n", optarg);
				return 2;
			}
			break;
		}
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	if (self_text(exe, sizeof(exe), &start, &len, &pgoff) < 0) {
		fprintf(stderr, "ingestbench: cannot find my own text mapping in /proc/self/maps\n");
		return 1;
	}
	if (keep) {
		if (access(keep, F_OK) == 0) {
			fprintf(stderr, "ingestbench: %s exists: give a new path to -k\n", keep);
			return 1;
		}
		snprintf(dbpath, sizeof(dbpath), "%s", keep);
	} else {
		snprintf(tmpdir, sizeof(tmpdir), "/tmp/ingestbench.XXXXXX");
		if (!mkdtemp(tmpdir))
			die("mkdtemp", NULL);
		snprintf(dbpath, sizeof(dbpath), "%s/strobe.db", tmpdir);
	}

	t0 = now_s();
	db = db_open(dbpath, DB_WRITE, &e);
	if (!db)
		die("db_open", &e);
	cdir = db_cache_dir(db);
	if (bincache_open(&cache, cdir, &e) < 0)
		die("bincache_open", &e);
	free(cdir);

	memset(&s, 0, sizeof(s));
	snprintf(s.name, sizeof(s.name), "ingestbench");
	snprintf(s.state, sizeof(s.state), "running");
	snprintf(s.backend, sizeof(s.backend), "perf");
	s.owner_uid = getuid();
	snprintf(s.hostname, sizeof(s.hostname), "ingestbench");
	s.nr_cpus = NR_CPUS;
	snprintf(s.sample_event, sizeof(s.sample_event), "cpu-clock");
	s.sample_freq = 20000;
	s.start_ns = 1000000000ULL;
	snprintf(s.tsc_source, sizeof(s.tsc_source), "none");
	s.nr_events = 2;
	snprintf(s.events[0].name, sizeof(s.events[0].name), "instructions");
	s.events[0].type = PERF_TYPE_HARDWARE;
	s.events[0].config = PERF_COUNT_HW_INSTRUCTIONS;
	snprintf(s.events[1].name, sizeof(s.events[1].name), "cycles");
	s.events[1].type = PERF_TYPE_HARDWARE;
	s.events[1].config = PERF_COUNT_HW_CPU_CYCLES;
	if (nchains)	/* -g: as record --call-graph fp, so readers see stacks */
		snprintf(s.call_graph, sizeof(s.call_graph), "fp");
	if (db_session_insert(db, &s, &e) < 0)
		die("db_session_insert", &e);
	in = ingest_new(db, &cache, &s, &e);
	if (!in)
		die("ingest_new", &e);

	tns = s.start_ns + 1000;
	if (ingest_comm(in, pid, pid, "ingestbench", 1, tns, &e) < 0)
		die("ingest_comm", &e);
	memset(&m, 0, sizeof(m));
	m.pid = pid;
	m.start = start;
	m.len = len;
	m.pgoff = pgoff;
	m.prot = PROT_READ | PROT_EXEC;
	m.filename = exe;
	m.time_ns = tns;
	{
		struct stat st;

		if (stat(exe, &st) == 0) {
			m.maj = major(st.st_dev);
			m.min = minor(st.st_dev);
			m.ino = st.st_ino;
		}
	}
	if (ingest_mmap(in, &m, &e) < 0)
		die("ingest_mmap", &e);
	/* the other threads: tids pid + 1 ... pid + THREADS - 1 */
	for (uint64_t i = 1; i < nthreads; i++)
		if (ingest_fork(in, pid, pid, pid + (uint32_t)i, tns, &e) < 0)
			die("ingest_fork", &e);

	if (noffsets > len)
		noffsets = len;
	step = len / noffsets;
	memset(&r, 0, sizeof(r));
	r.type = STROBE_REC_SAMPLE;
	r.sample.pid = pid;
	r.sample.tid = pid;
	r.sample.flags = STROBE_SAMPLE_USER;
	r.sample.nr_counters = 2;

	t1 = now_s();
	c1 = cpu_s();
	for (uint64_t i = 0; i < nsamples; i++) {
		uint32_t cpu = i & (NR_CPUS - 1);

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		tns += 25000;		/* 20 kHz per CPU, two CPUs interleaved */
		r.cpu = cpu;
		r.time_ns = tns;
		r.sample.tsc = tns * 3;
		r.sample.ip = start + (rng % noffsets) * step;
		r.sample.tid = pid + (uint32_t)((rng >> 20) % nthreads);
		last[cpu][0] += 40000 + (rng >> 48);	/* instructions */
		last[cpu][1] += 50000 + (rng >> 52);	/* cycles */
		r.sample.counters[0] = last[cpu][0];
		r.sample.counters[1] = last[cpu][1];
		if (nchains) {
			uint64_t k = (rng >> 24) % nchains;

			ips[0] = (uint64_t)PERF_CONTEXT_USER;
			ips[1] = r.sample.ip;
			for (uint64_t d = 2; d <= BENCH_DEPTH; d++)
				ips[d] = start + ((k * 7919 + d * 104729) % noffsets) * step + 1;
			r.sample.flags = STROBE_SAMPLE_USER | STROBE_SAMPLE_CALLCHAIN;
			r.sample.nr_ips = 1 + BENCH_DEPTH;
			r.sample.ips = (const unsigned char *)ips;
		}
		if (ingest_record(in, &r, &e) < 0)
			die("ingest_record", &e);
	}
	for (int cpu = 0; cpu < NR_CPUS; cpu++) {
		uint64_t fin[2] = { last[cpu][0] + 1000, last[cpu][1] + 1000 };

		ingest_cpu_final(in, cpu, fin, 2);
	}
	if (ingest_finish(in, tns + 1000, &e) < 0)
		die("ingest_finish", &e);
	t2 = now_s();
	c2 = cpu_s();
	ingest_get_stats(in, &ist);
	ingest_free(in);
	db_close(db);
	bincache_close(&cache);

	printf("samples: %" PRIu64 "\n", ist.samples);
	printf("offsets: %" PRIu64 " in a %" PRIu64 "-byte mapping\n", noffsets, len);
	printf("threads: %" PRIu64 "\n", nthreads);
	printf("stacks: %" PRIu64 " of %" PRIu64 " caller chains, %" PRIu64 " past the limit\n",
	       ist.stacks, nchains, ist.stacks_over);
	printf("setup_s: %.3f\n", t1 - t0);
	printf("ingest_s: %.3f\n", t2 - t1);
	printf("ingest_cpu_s: %.3f\n", c2 - c1);
	printf("samples_per_s: %.0f\n", ist.samples / (t2 - t1));
	{
		char wal[PATH_MAX + 8];

		snprintf(wal, sizeof(wal), "%s-wal", dbpath);
		printf("db_bytes: %lld\n", file_size(dbpath) + file_size(wal));
	}

	/* the report, as 'strobe report --by symbol' builds it */
	{
		struct report_opts o;
		struct report_summary sum;
		struct table *t;

		tr0 = now_s();
		db = db_open(dbpath, DB_READ, &e);
		if (!db)
			die("db_open (read)", &e);
		memset(&o, 0, sizeof(o));
		o.session = s.id;
		o.by = REPORT_BY_SYMBOL;
		o.pid = -1;
		o.mode = REPORT_ALL;
		t = report_build(db, &o, &sum, &e);
		if (!t)
			die("report_build", &e);
		tr1 = now_s();
		printf("report_rows: %zu\n", table_rows(t));
		printf("report_samples: %" PRIu64 "\n", sum.samples);
		printf("report_s: %.3f\n", tr1 - tr0);
		{
			FILE *devnull = fopen("/dev/null", "w");
			double tw0 = now_s();

			if (devnull) {
				table_write(t, OUTPUT_TEXT, devnull);
				fclose(devnull);
			}
			printf("report_write_s: %.3f\n", now_s() - tw0);
		}
		table_free(t);
		db_close(db);
	}

	if (keep)
		printf("db: %s\n", dbpath);
	else
		nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}
