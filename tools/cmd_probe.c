/*
 * cmd_probe.c - "strobe probe": measure the data caches and the data TLB
 * by timing (lib/probe/), print them as text, CSV or JSON, and keep the
 * result for 'strobe plot --expect'.
 */
#include "config.h"
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd.h"
#include "output.h"
#include "probe.h"
#include "probe_file.h"
#include "retention.h"

static const char usage_text[] =
	"usage: strobe probe [--format text|csv|json] [--max-size SIZE] [--error PCT]\n"
	"                    [--cpu N] [-o FILE] [--curves FILE.csv]\n"
	"\n"
	"Measure this machine's data caches and data TLB by timing pointer chases\n"
	"over randomised cyclic chains (the prefetchers cannot guess the next line),\n"
	"pinned to one CPU.  Working sets grow from 4 KiB to --max-size, 4 sizes\n"
	"per octave: where the time per access steps up, a level is full (its size;\n"
	"the plateau before is its latency).  Pairs of accesses d bytes apart give\n"
	"the line size, lines spaced by a level's size (all in one set) its ways,\n"
	"one line in each of more and more 4 KiB pages the dTLB's reach (and, against\n"
	"the same lines on huge pages, the L2 TLB's: column l2_tlb_pages).\n"
	"Every measurement is repeated until the 95% confidence half-width of its\n"
	"mean is below --error percent of the mean (each timed stretch also lasts\n"
	"at least (1 + e) / e clock ticks), or 200 samples were taken: error_pct\n"
	"is what it reached.  Each row is checked against sysfs\n"
	"(/sys/devices/system/cpu/cpuN/cache) and CPUID; 'check' lists where they\n"
	"disagree with the measurement, 'note' what was not measured and why.\n"
	"\n"
	"  --format F     text (default), csv or json; the CSV header starts with\n"
	"                 kind,size_bytes,line_bytes,ways,latency_ns,error_pct\n"
	"                 (kinds L1d, L2, L3, dTLB; a dTLB's line_bytes is the page\n"
	"                 size, its latency_ns the extra time of an access beyond\n"
	"                 its reach, its pages the reach in pages)\n"
	"  --max-size S   the largest working set, in bytes or with K, M, G, from\n"
	"                 64K to 1G (default: 2 x the largest cache sysfs lists, at\n"
	"                 most 1G, else 64M).  Memory used: the largest of S, 8M\n"
	"                 and 24 to 64 x the L2's size (its ways test; up to 256M)\n"
	"  --error PCT    the error bound in percent, above 0 and at most 50\n"
	"                 (default 2)\n"
	"  --cpu N        run on CPU N (default: the CPU it starts on)\n"
	"  -o, --output FILE\n"
	"                 write the table to FILE instead of stdout\n"
	"  --curves FILE  also write every measurement as CSV: experiment (size,\n"
	"                 line, ways, dtlb), kind, x (bytes, bytes apart, lines,\n"
	"                 pages), ns per access, error_pct ('-': stdout)\n"
	"\n"
	"The result is also saved as $XDG_CACHE_HOME/strobe/probe.json (else\n"
	"~/.cache/strobe/probe.json) for 'strobe plot --expect'.  Run it on an idle\n"
	"machine: load raises the error, and a VM may report odd caches (shown as\n"
	"they are).\n";

enum { OPT_FORMAT = 256, OPT_MAX_SIZE, OPT_ERROR, OPT_CPU, OPT_CURVES };

static const struct option long_opts[] = {
	{ "format",	required_argument, NULL, OPT_FORMAT },
	{ "max-size",	required_argument, NULL, OPT_MAX_SIZE },
	{ "error",	required_argument, NULL, OPT_ERROR },
	{ "cpu",	required_argument, NULL, OPT_CPU },
	{ "output",	required_argument, NULL, 'o' },
	{ "curves",	required_argument, NULL, OPT_CURVES },
	{ "help",	no_argument,	   NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int write_curves(const struct probe_result *r, const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;

	if (!f) {
		fprintf(stderr, "strobe probe: writing %s: %s\n", path, strerror(errno));
		return -1;
	}
	fputs("experiment,kind,x,ns,error_pct\n", f);
	for (size_t i = 0; i < r->npoints; i++) {
		const struct probe_point *p = &r->points[i];

		fprintf(f, "%s,%s,%.0f,%.4f,", p->exp, p->kind, p->x, p->ns);
		if (isfinite(p->error_pct))
			fprintf(f, "%.3f", p->error_pct);
		fputc('\n', f);
	}
	if ((f == stdout ? fflush(f) : fclose(f)) == EOF) {
		fprintf(stderr, "strobe probe: writing %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

int cmd_probe(int argc, char **argv)
{
	struct probe_opts o = { 0, 2.0, -1, 0, NULL };
	enum output_format fmt = OUTPUT_TEXT;
	struct probe_result *r;
	struct error err = { "" };
	const char *out = NULL, *curves = NULL;
	char optbuf[256], path[4200];
	struct table *t;
	FILE *f = stdout;
	int c, ret = 0;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":ho:", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_FORMAT:
			if (output_parse_format(optarg, &fmt) < 0)
				return cmd_usage_error("probe", "bad --format '%s': use text, csv or "
						       "json", optarg);
			break;
		case OPT_MAX_SIZE:
			if (retention_parse_size(optarg, &o.max_size, &err) < 0)
				return cmd_usage_error("probe", "%s", err.msg);
			if (o.max_size < 64 * 1024 || o.max_size > (1ull << 30))
				return cmd_usage_error("probe", "bad --max-size '%s': give a size from "
						       "64K to 1G, e.g. --max-size 64M", optarg);
			break;
		case OPT_ERROR: {
			char *end;

			errno = 0;
			o.error_pct = strtod(optarg, &end);
			if (errno || end == optarg || *end || !isfinite(o.error_pct) ||
			    o.error_pct <= 0 || o.error_pct > 50)
				return cmd_usage_error("probe", "bad --error '%s': give a percentage "
						       "above 0 and at most 50, e.g. --error 2",
						       optarg);
			break;
		}
		case OPT_CPU: {
			uint64_t v;
			long ncpu = sysconf(_SC_NPROCESSORS_CONF);

			if (parse_u64(optarg, &v) < 0 || (ncpu > 0 && v >= (uint64_t)ncpu))
				return cmd_usage_error("probe", "bad --cpu '%s': give a CPU number "
						       "from 0 to %ld", optarg, ncpu - 1);
			o.cpu = (int)v;
			break;
		}
		case 'o':
			if (!*optarg)
				return cmd_usage_error("probe", "bad -o '': give a file name");
			out = optarg;
			break;
		case OPT_CURVES:
			if (!*optarg)
				return cmd_usage_error("probe", "bad --curves '': give a CSV file name "
						       "or -");
			curves = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case ':':
			return cmd_usage_error("probe", "option %s needs a value: see "
					       "'strobe probe --help'",
					       cmd_bad_option(argc, argv, optbuf, sizeof(optbuf)));
		default:
			return cmd_usage_error("probe", "unknown option '%s': see "
					       "'strobe probe --help'",
					       cmd_bad_option(argc, argv, optbuf, sizeof(optbuf)));
		}
	}
	if (optind < argc)
		return cmd_usage_error("probe", "unexpected argument '%s': see 'strobe probe "
				       "--help'", argv[optind]);

	r = xcalloc(1, sizeof(*r));
	if (probe_run(&o, r, &err) < 0) {
		fprintf(stderr, "strobe probe: %s\n", err.msg);
		free(r);
		return 1;
	}
	if (out && !(f = fopen(out, "w"))) {
		fprintf(stderr, "strobe probe: writing %s: %s\n", out, strerror(errno));
		free(r);
		return 1;
	}
	t = probe_table(r);
	if (table_write(t, fmt, f) < 0 || fflush(f) == EOF) {
		fprintf(stderr, "strobe probe: writing %s: %s\n", out ? out : "stdout",
			strerror(errno));
		ret = 1;
	}
	table_free(t);
	if (out && fclose(f) == EOF && !ret) {
		fprintf(stderr, "strobe probe: writing %s: %s\n", out, strerror(errno));
		ret = 1;
	}
	if (curves && !ret && write_curves(r, curves) < 0)
		ret = 1;
	if (r->unbounded)
		fprintf(stderr, "strobe probe: note: %u of %u measurements stayed above the "
			"%g%% error bound after the most samples: error_pct says by how much\n",
			r->unbounded, r->measurements, r->error_pct);
	if (probe_file_save(r, &err) < 0) {
		fprintf(stderr, "strobe probe: not saved for 'plot --expect': %s\n", err.msg);
	} else if (probe_file_path(path, sizeof(path), &err) == 0) {
		fprintf(stderr, "strobe probe: saved to %s\n", path);
	}
	free(r->points);
	free(r);
	return ret;
}
