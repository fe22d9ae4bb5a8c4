/*
 * test_probe.c - the inference of 'strobe probe' on synthetic latency
 * curves with noise: the steps of a three-level working-set curve (LRU
 * miss fractions past each capacity, multiplicative noise, one outlier),
 * the line size of a pair curve, the ways of a conflict curve, curves with
 * no step, the error bound's arithmetic, the saved file's parser, the
 * cross-check against sysfs and CPUID, sysfs read from a fake tree, and
 * the onsets 'plot --expect' draws.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "probe.h"
#include "probe_file.h"
#include "probe_infer.h"
#include "probe_sys.h"
#include "probe_expect.h"
#include "output.h"

static uint64_t seed = 88172645463325252ull;

/* noise: uniform in [-amp, +amp], relative */
static double noise(double amp)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return 1 + amp * (2.0 * (double)(seed >> 11) / (double)(1ull << 53) - 1);
}

/* A random chase over s bytes through levels of sizes cap[] and latencies
 * lat[] (lat[nl] = memory): with LRU, a fraction cap/s of the accesses
 * past a level's capacity still hits it. */
static double model(double s, const double *cap, const double *lat, int nl)
{
	double t = 0, left = 1;

	for (int l = 0; l < nl; l++) {
		double hit = s <= cap[l] ? 1 : cap[l] / s;

		t += left * hit * lat[l];
		left *= 1 - hit;
	}
	return t + left * lat[nl];
}

static size_t grid(double *x, double from, double to)
{
	size_t n = 0;

	for (double o = from; o <= to; o *= 2)
		for (int q = 4; q < 8 && o * q / 4 <= to; q++)
			x[n++] = o * q / 4;
	return n;
}

static void test_steps_three_levels(void **state)
{
	double cap[] = { 32768, 524288, 33554432 }, lat[] = { 1.2, 3.7, 14, 90 };
	double x[200], y[200];
	struct probe_step st[4];
	size_t n = grid(x, 4096, 256.0 * 1024 * 1024), k;

	for (int trial = 0; trial < 20; trial++) {
		for (size_t i = 0; i < n; i++)
			y[i] = model(x[i], cap, lat, 3) * noise(0.04);
		if (trial % 2)	/* one disturbed point on the L1 plateau */
			y[3] *= 1.8;
		k = probe_find_steps(x, y, n, 0.3, st, 4);
		assert_int_equal(k, 3);
		assert_true(x[st[0].last] == 32768);
		assert_true(x[st[1].last] == 524288);
		assert_true(x[st[2].last] == 33554432);
		assert_true(fabs(st[0].before - 1.2) < 0.1);
		assert_true(fabs(st[1].before - 3.7) < 0.6);
		assert_true(st[0].before < st[1].before && st[1].before < st[2].before);
		assert_true(st[2].after > st[2].before);
	}
}

/* the grid has 4 sizes per octave (1, 1.25, 1.5, 1.75 x 2^k), so Intel's
 * 48 KiB L1d and 1.25 MiB L2 are found exactly */
static void test_steps_odd_sizes(void **state)
{
	double cap[] = { 49152, 1310720 }, lat[] = { 1.0, 4.0, 40 };
	double x[200], y[200];
	struct probe_step st[4];
	size_t n = grid(x, 4096, 32.0 * 1024 * 1024);

	for (size_t i = 0; i < n; i++)
		y[i] = model(x[i], cap, lat, 2) * noise(0.02);
	assert_int_equal(probe_find_steps(x, y, n, 0.3, st, 4), 2);
	assert_true(x[st[0].last] == 49152);
	assert_true(x[st[1].last] == 1310720);
}

static void test_steps_flat(void **state)
{
	double x[100], y[100];
	struct probe_step st[2];
	size_t n = grid(x, 4096, 1 << 20);

	for (size_t i = 0; i < n; i++)
		y[i] = 2.0 * noise(0.1);
	assert_int_equal(probe_find_steps(x, y, n, 0.3, st, 2), 0);
	/* two outliers in a row are not a step either */
	y[10] = y[11] = 5;
	assert_int_equal(probe_find_steps(x, y, n, 0.3, st, 2), 0);
	assert_int_equal(probe_find_steps(x, y, 1, 0.3, st, 2), 0);
}

/* the dTLB curve: one line per page, a sharp step past 64 entries */
static void test_steps_dtlb(void **state)
{
	double x[64], y[64];
	struct probe_step st[2];
	size_t n = 0;

	for (size_t p = 8; p <= 256; p += (p >= 64 ? p / 8 : p >= 32 ? 4 : p >= 16 ? 2 : 1))
		x[n++] = (double)p;
	for (size_t i = 0; i < n; i++)
		y[i] = (x[i] <= 64 ? 1.3 : 3.5) * noise(0.03);
	assert_int_equal(probe_find_steps(x, y, n, 0.3, st, 2), 1);
	assert_true(x[st[0].last] == 64);
	assert_true(fabs(st[0].after - st[0].before - 2.2) < 0.3);
}

static void test_line(void **state)
{
	double d[] = { 8, 16, 32, 64, 128, 256, 512 }, y[7];

	for (unsigned line = 16; line <= 256; line *= 2)
		for (int trial = 0; trial < 10; trial++) {
			for (int i = 0; i < 7; i++)	/* miss + hit, or two misses */
				y[i] = (d[i] < line ? (4 + 1.2) / 2 : 4) * noise(0.03);
			assert_int_equal(probe_infer_line(d, y, 7), line);
		}
	/* an adjacent-line prefetcher: a smaller second rise does not win */
	for (int i = 0; i < 7; i++)
		y[i] = d[i] < 64 ? 2.6 : d[i] < 128 ? 4 : 4.6;
	assert_int_equal(probe_infer_line(d, y, 7), 64);
	/* no step */
	for (int i = 0; i < 7; i++)
		y[i] = 3 * noise(0.03);
	assert_int_equal(probe_infer_line(d, y, 7), 0);
	y[2] = 0;
	assert_int_equal(probe_infer_line(d, y, 7), 0);
}

static void test_ways(void **state)
{
	double k[24], y[24];

	for (unsigned ways = 2; ways <= 16; ways *= 2)
		for (int trial = 0; trial < 10; trial++) {
			for (int i = 0; i < 24; i++) {
				k[i] = i + 1;
				y[i] = (k[i] <= ways ? 1.2 : 4.0) * noise(0.05);
			}
			assert_int_equal(probe_infer_ways(k, y, 24, 1.2, 4.0), ways);
		}
	/* an L2 curve: L1 hits first, then L2 hits, then L3 */
	for (int i = 0; i < 24; i++)
		y[i] = k[i] <= 8 ? 1.2 : k[i] <= 16 ? 3.7 : 14;
	assert_int_equal(probe_infer_ways(k, y, 24, 3.7, 14), 16);
	/* one outlier is not the step */
	for (int i = 0; i < 24; i++)
		y[i] = k[i] <= 12 ? 1.2 : 4;
	y[4] = 9;
	assert_int_equal(probe_infer_ways(k, y, 24, 1.2, 4), 12);
	/* never leaves the level: unknown */
	for (int i = 0; i < 24; i++)
		y[i] = 1.2;
	assert_int_equal(probe_infer_ways(k, y, 24, 1.2, 4), 0);
	assert_int_equal(probe_infer_ways(k, y, 24, 4, 1.2), 0);
}

static void test_error_bound(void **state)
{
	/* t(0.975, 4) = 2.776: 5 samples, mean 10, sd 1 -> 2.776/sqrt(5)*10% */
	assert_true(fabs(probe_rel_error_pct(10, 1, 5) - 100 * 2.776 / sqrt(5) / 10) < 1e-9);
	assert_true(fabs(probe_rel_error_pct(10, 1, 100) - 100 * 1.96 / 10 / 10) < 1e-9);
	assert_true(isinf(probe_rel_error_pct(10, 1, 1)));
	assert_true(probe_rel_error_pct(10, 0, 5) == 0);
	{
		double v[] = { 5, 1, 4, 2, 3 };

		assert_true(probe_median(v, 5) == 3);
		assert_true(probe_median(v, 4) == 3);	/* 1 2 4 5 -> 3 */
		assert_true(v[0] == 5);			/* unchanged */
	}
}

static void test_crosscheck(void **state)
{
	struct probe_row row;

	memset(&row, 0, sizeof(row));
	strcpy(row.kind, "L1d");
	row.size_bytes = 32768;
	row.line_bytes = 64;
	row.ways = 8;
	row.sysfs = (struct probe_sys_cache){ 1, 32768, 64, 8 };
	row.cpuid = (struct probe_sys_cache){ 1, 32768, 64, 8 };
	probe_crosscheck(&row);
	assert_string_equal(row.check, "");
	row.size_bytes = 24576;
	row.cpuid.line_bytes = 128;
	probe_crosscheck(&row);
	assert_string_equal(row.check, "size: sysfs 32768, measured 24576; size: CPUID 32768, "
			    "measured 24576; line: CPUID 128, measured 64");
	/* unknown on either side: nothing to compare */
	row.ways = 0;
	row.size_bytes = 32768;
	row.cpuid.line_bytes = 64;
	row.sysfs.ways = 16;
	probe_crosscheck(&row);
	assert_string_equal(row.check, "");
}

static void test_file_roundtrip(void **state)
{
	struct probe_result r, back;
	struct error e = { "" };
	char path[] = "/tmp/test_probe.XXXXXX";
	char *text;
	size_t len;
	FILE *f;
	struct table *t;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	memset(&r, 0, sizeof(r));
	r.nrows = 2;
	strcpy(r.rows[0].kind, "L1d");
	r.rows[0].size_bytes = 32768;
	r.rows[0].line_bytes = 64;
	r.rows[0].ways = 8;
	r.rows[0].latency_ns = 1.25;
	r.rows[0].error_pct = 0.5;
	strcpy(r.rows[0].note, "a \"quoted\" note, with a comma");
	strcpy(r.rows[1].kind, "dTLB");
	r.rows[1].size_bytes = 64 * 4096;
	r.rows[1].line_bytes = 4096;
	r.rows[1].pages = 64;
	r.rows[1].l2_pages = 1280;
	r.rows[1].latency_ns = 2.5;
	r.rows[1].error_pct = NAN;
	f = fdopen(fd, "w");
	t = probe_table(&r);
	assert_int_equal(table_write(t, OUTPUT_JSON, f), 0);
	table_free(t);
	fclose(f);
	assert_int_equal(probe_file_load(path, &back, &e), 1);
	assert_int_equal(back.nrows, 2);
	assert_string_equal(back.rows[0].kind, "L1d");
	assert_true(back.rows[0].size_bytes == 32768 && back.rows[0].line_bytes == 64 &&
		    back.rows[0].ways == 8);
	assert_true(fabs(back.rows[0].latency_ns - 1.25) < 1e-9);
	assert_string_equal(back.rows[0].note, r.rows[0].note);
	assert_string_equal(back.rows[1].kind, "dTLB");
	assert_true(back.rows[1].pages == 64 && back.rows[1].size_bytes == 64 * 4096);
	assert_true(back.rows[1].l2_pages == 1280);
	assert_true(isnan(back.rows[1].error_pct));
	text = file_read_all(path, &len);
	assert_non_null(text);
	free(text);
	unlink(path);
	assert_int_equal(probe_file_load(path, &back, &e), 0);	/* no file */
	assert_int_equal(probe_file_parse("{\"rows\":[{\"kind\":\"L1d\",\"size_bytes\":x}]}",
					  &back, &e), -1);
	assert_non_null(strstr(e.msg, "size_bytes"));
	assert_int_equal(probe_file_parse("{\"meta\":{}}", &back, &e), -1);
	assert_int_equal(probe_file_parse("{\"rows\":[{\"size_bytes\":1}]}", &back, &e), -1);
}

static void put(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* sysfs as probe_sys_read finds it: a fake tree with an instruction cache
 * (left out), K and M sizes, and a gap; then a CPU without cache entries */
static void test_sysfs(void **state)
{
	char root[] = "/tmp/test_probe_sys.XXXXXX", dir[512], cmd[600];
	static const char *const idx[][6] = {
		/* index, level, type, size, line, ways */
		{ "0", "1\n", "Data\n", "48K\n", "64\n", "12\n" },
		{ "1", "1\n", "Instruction\n", "32K\n", "64\n", "8\n" },
		{ "2", "2\n", "Unified\n", "1280K\n", "64\n", "10\n" },
		{ "3", "3\n", "Unified\n", "30M\n", "64\n", "12\n" },
	};
	struct probe_sys s;

	assert_non_null(mkdtemp(root));
	for (size_t i = 0; i < 4; i++) {
		snprintf(dir, sizeof(dir), "%s/cpu3/cache/index%s", root, idx[i][0]);
		snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", dir);
		assert_int_equal(system(cmd), 0);
		put(dir, "level", idx[i][1]);
		put(dir, "type", idx[i][2]);
		put(dir, "size", idx[i][3]);
		put(dir, "coherency_line_size", idx[i][4]);
		put(dir, "ways_of_associativity", idx[i][5]);
	}
	probe_sys_read(&s, root, 3);
	assert_string_equal(s.sysfs_note, "");
	assert_true(s.sysfs[0].have && s.sysfs[0].size_bytes == 48 * 1024 &&
		    s.sysfs[0].line_bytes == 64 && s.sysfs[0].ways == 12);
	assert_true(s.sysfs[1].have && s.sysfs[1].size_bytes == 1280 * 1024 &&
		    s.sysfs[1].ways == 10);
	assert_true(s.sysfs[2].have && s.sysfs[2].size_bytes == 30u << 20);
	assert_false(s.sysfs[3].have);
	probe_sys_read(&s, root, 0);
	assert_false(s.sysfs[0].have);
	assert_non_null(strstr(s.sysfs_note, "sysfs has no cache information"));
	snprintf(cmd, sizeof(cmd), "rm -r '%s'", root);
	assert_int_equal(system(cmd), 0);
}

/* the onsets plot --expect draws: the last marker within each reach */
static void test_expect(void **state)
{
	struct probe_result r;
	struct probe_marker m[40];
	struct probe_expect_line out[8];
	char args[40][32], sum[300];
	size_t n = 0;

	memset(&r, 0, sizeof(r));
	r.nrows = 3;
	strcpy(r.rows[0].kind, "L1d");
	r.rows[0].size_bytes = 32768;
	r.rows[0].latency_ns = 1.234;
	strcpy(r.rows[1].kind, "L3");	/* nothing measured: left out */
	r.rows[1].latency_ns = NAN;
	strcpy(r.rows[2].kind, "dTLB");
	r.rows[2].pages = 64;
	r.rows[2].l2_pages = 70;
	probe_expect_summary(&r, sum, sizeof(sum));
	assert_string_equal(sum, "probe: L1d 32 KiB 1.23 ns, dTLB reach 64 pages, L2 TLB 70 pages");
	/* tlbwalk 60 .. 75, a mark in between, and bytes markers 16K .. 64K */
	for (int i = 60; i <= 75; i++) {
		snprintf(args[n], sizeof(args[n]), "%d,500,12345", i);
		m[n] = (struct probe_marker){ 1000 * i, "tlbwalk:size", args[n] };
		n++;
		if (i == 62)
			m[n++] = (struct probe_marker){ 1000 * i + 1, "warm", "" };
	}
	for (int kb = 16; kb <= 64; kb += 8) {
		snprintf(args[n], sizeof(args[n]), "%d", kb * 1024);
		m[n] = (struct probe_marker){ 100000 + kb, "app:bytes", args[n] };
		n++;
	}
	assert_int_equal(probe_expect_onsets(&r, m, n, out, 8), 3);
	/* in the rows' order */
	assert_true(out[0].time_ns == 100000 + 32);
	assert_string_equal(out[0].label, "L1d size 32 KiB");
	assert_true(out[1].time_ns == 64000);
	assert_string_equal(out[1].label, "dTLB reach 64 pages");
	assert_true(out[2].time_ns == 70000);
	assert_string_equal(out[2].label, "L2 TLB reach 70 pages");
	/* walks that never pass a reach, or start past it: no line */
	r.rows[2].pages = 100;
	r.rows[2].l2_pages = 10;
	r.rows[0].size_bytes = 0;
	assert_int_equal(probe_expect_onsets(&r, m, n, out, 8), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steps_three_levels),
		cmocka_unit_test(test_steps_odd_sizes),
		cmocka_unit_test(test_steps_flat),
		cmocka_unit_test(test_steps_dtlb),
		cmocka_unit_test(test_line),
		cmocka_unit_test(test_ways),
		cmocka_unit_test(test_error_bound),
		cmocka_unit_test(test_crosscheck),
		cmocka_unit_test(test_file_roundtrip),
		cmocka_unit_test(test_sysfs),
		cmocka_unit_test(test_expect),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
