/*
 * probe_table.c - the results of 'strobe probe' (probe.h) as they are
 * shown: each row's measurements compared with what sysfs and CPUID say
 * (probe_crosscheck), and the table of the rows with its meta data
 * (probe_table).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "output.h"
#include "probe.h"


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
