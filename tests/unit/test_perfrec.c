/*
 * test_perfrec.c - decoding perf ring records (lib/capture/perfrec.c) from bytes
 * built here field by field: samples with a group read (values matched by
 * id in any order), registers and a user stack copy; MMAP2 with and
 * without a build-id; COMM, FORK, EXIT, LOST, LOST_SAMPLES, THROTTLE,
 * UNTHROTTLE with their sample_id_all trailer; a sample's cgroup id
 * (PERF_SAMPLE_CGROUP, after the user stack) and PERF_RECORD_CGROUP;
 * callchains (PERF_SAMPLE_CALLCHAIN, after the read, before the
 * registers), their entry count checked against the record; records
 * wrapping the
 * ring's end; and sizes that do not add up, which must be refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>
#include "perfrec.h"

/* strobe's leader: id; ip; pid, tid; time; cpu, res; period; read */
#define LEADER_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
		     PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ)
#define LEADER_READ (PERF_FORMAT_GROUP | PERF_FORMAT_ID)

#define PID 4242
#define TID 4243
#define CPU 3
#define TIME 0x123456789abcULL
#define SID 0x51d

/* A record under construction. */
struct rb {
	unsigned char b[1024];
	size_t n;
};

static void put(struct rb *r, const void *p, size_t n)
{
	assert_true(r->n + n <= sizeof(r->b));
	memcpy(r->b + r->n, p, n);
	r->n += n;
}

static void u64(struct rb *r, uint64_t v) { put(r, &v, 8); }
static void u32x2(struct rb *r, uint32_t a, uint32_t b) { put(r, &a, 4); put(r, &b, 4); }

static void hdr(struct rb *r, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { .type = type, .misc = misc, .size = 0 };

	r->n = 0;
	put(r, &h, sizeof(h));
}

/* a string, NUL-padded to 8 bytes */
static void str(struct rb *r, const char *s)
{
	size_t n = strlen(s) + 1, pad = (8 - n % 8) % 8;
	char z[8] = { 0 };

	put(r, s, n);
	put(r, z, pad);
}

/* the sample_id_all trailer of LEADER_TYPE: pid, tid; time; cpu, res; id */
static void trailer(struct rb *r, uint64_t time)
{
	u32x2(r, PID, TID);
	u64(r, time);
	u32x2(r, CPU, 0);
	u64(r, SID);
}

/* set the header's size to the bytes written */
static void done(struct rb *r)
{
	uint16_t sz = r->n;

	memcpy(r->b + 6, &sz, 2);
}

static struct perfrec_format leader(void)
{
	struct perfrec_format f;

	assert_int_equal(perfrec_format_init(&f, LEADER_TYPE, LEADER_READ, 0), 0);
	return f;
}

static void test_format(void **state)
{
	struct perfrec_format f = leader();

	assert_int_equal(f.trailer_size, 32);
	assert_int_equal(f.trailer_tid, 0);
	assert_int_equal(f.trailer_time, 8);
	assert_int_equal(f.trailer_cpu, 16);
	assert_int_equal(f.read_entry, 16);
	/* a field it cannot step over */
	assert_int_equal(perfrec_format_init(&f, LEADER_TYPE | PERF_SAMPLE_RAW,
					     LEADER_READ, 0), -1);
	assert_int_equal(perfrec_format_init(&f, LEADER_TYPE, LEADER_READ | (1u << 10), 0), -1);
}

/* a leader sample whose group read has these {value, id} pairs */
static void leader_sample(struct rb *r, const uint64_t (*vals)[2], uint64_t nr)
{
	hdr(r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	u64(r, SID);
	u64(r, 0x401234);
	u32x2(r, PID, TID);
	u64(r, TIME);
	u32x2(r, CPU, 0);
	u64(r, 100003);
	u64(r, nr);
	for (uint64_t i = 0; i < nr; i++) {
		u64(r, vals[i][0]);
		u64(r, vals[i][1]);
	}
	done(r);
}

static void test_sample_group(void **state)
{
	struct perfrec_format f = leader();
	/* the leader, then the counting events in an order of their own */
	const uint64_t vals[4][2] = { { 7, SID }, { 333, 30 }, { 111, 10 }, { 222, 20 } };
	const uint64_t ids[4] = { 10, 20, 30, 99 };
	uint64_t out[4] = { 0, 0, 0, 0xdead };
	struct perfrec p;
	struct rb r;

	leader_sample(&r, vals, 4);
	assert_int_equal(r.n, 8 + 56 + 4 * 16);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_OK);
	assert_int_equal(p.type, PERF_RECORD_SAMPLE);
	assert_int_equal(p.misc, PERF_RECORD_MISC_USER);
	assert_int_equal(p.size, r.n);
	assert_true(p.sample.id == SID);
	assert_true(p.sample.ip == 0x401234);
	assert_int_equal(p.sample.pid, PID);
	assert_int_equal(p.sample.tid, TID);
	assert_true(p.sample.time == TIME);
	assert_true(p.has_time && p.time == TIME);
	assert_int_equal(p.sample.cpu, CPU);
	assert_int_equal(p.cpu, CPU);
	assert_true(p.sample.period == 100003);
	assert_true(p.sample.nr_values == 4);
	/* matched by id, whatever the order; an id not read is left alone */
	assert_int_equal(perfrec_read_values(&f, &p.sample, ids, 4, out), 3);
	assert_true(out[0] == 111 && out[1] == 222 && out[2] == 333);
	assert_true(out[3] == 0xdead);
	{
		const uint64_t rev[3] = { 30, 20, 10 };
		uint64_t o[3] = { 0 };

		assert_int_equal(perfrec_read_values(&f, &p.sample, rev, 3, o), 3);
		assert_true(o[0] == 333 && o[1] == 222 && o[2] == 111);
	}
	/* a sample id is its first u64 */
	{
		uint64_t id = 0;

		assert_int_equal(perfrec_sample_identifier(r.b, r.n, &id), 0);
		assert_true(id == SID);
		assert_int_equal(perfrec_sample_identifier(r.b, 12, &id), -1);
	}
}

static void test_sample_read_single(void **state)
{
	struct perfrec_format f;
	const uint64_t ids[1] = { 77 };
	uint64_t out[1] = { 0 };
	struct perfrec p;
	struct rb r;

	assert_int_equal(perfrec_format_init(&f, PERF_SAMPLE_TIME | PERF_SAMPLE_READ,
					     PERF_FORMAT_TOTAL_TIME_ENABLED |
					     PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID, 0), 0);
	hdr(&r, PERF_RECORD_SAMPLE, 0);
	u64(&r, TIME);
	u64(&r, 5555);		/* value */
	u64(&r, 1000);		/* enabled */
	u64(&r, 900);		/* running */
	u64(&r, 77);		/* id */
	done(&r);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_OK);
	assert_true(p.sample.time_enabled == 1000 && p.sample.time_running == 900);
	assert_int_equal(perfrec_read_values(&f, &p.sample, ids, 1, out), 1);
	assert_true(out[0] == 5555);
	/* one byte short of its id */
	r.n -= 8;
	done(&r);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_BAD);
}

static void test_sample_truncated(void **state)
{
	struct perfrec_format f = leader();
	const uint64_t vals[3][2] = { { 1, SID }, { 2, 10 }, { 3, 20 } };
	struct perfrec p;
	struct rb r;
	uint64_t huge = 1ULL << 60;

	leader_sample(&r, vals, 3);
	/* the header claims fewer bytes than the values need */
	for (size_t cut = 8; cut < r.n; cut += 8) {
		uint16_t sz = cut;

		memcpy(r.b + 6, &sz, 2);
		assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_BAD);
	}
	done(&r);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_OK);
	/* an nr that would overflow nr * 16 */
	memcpy(r.b + 8 + 48, &huge, 8);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_BAD);
	huge = 4;	/* one more value than there is */
	memcpy(r.b + 8 + 48, &huge, 8);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_BAD);
}

/* a uprobe's sample: id; pid, tid; time; cpu; abi, regs; size, stack, dyn_size */
static void test_sample_regs_stack(void **state)
{
	uint64_t type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			PERF_SAMPLE_CPU | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	uint64_t mask = (1ULL << 1) | (1ULL << 4) | (1ULL << 9);
	unsigned char stack[16] = "0123456789abcde";
	struct perfrec_format f;
	struct perfrec p;
	struct rb r;

	assert_int_equal(perfrec_format_init(&f, type, 0, mask), 0);
	hdr(&r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	u64(&r, SID);
	u32x2(&r, PID, TID);
	u64(&r, TIME);
	u32x2(&r, CPU, 0);
	u64(&r, PERF_SAMPLE_REGS_ABI_64);
	u64(&r, 11);
	u64(&r, 44);
	u64(&r, 99);
	u64(&r, sizeof(stack));
	put(&r, stack, sizeof(stack));
	u64(&r, 12);		/* dyn_size */
	done(&r);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_OK);
	assert_true(p.sample.regs_abi == PERF_SAMPLE_REGS_ABI_64);
	assert_non_null(p.sample.regs);
	assert_memory_equal(p.sample.regs, r.b + 8 + 32 + 8, 24);
	assert_true(p.sample.stack_size == 16 && p.sample.stack_dyn_size == 12);
	assert_memory_equal(p.sample.stack, stack, 16);
	/* dyn_size beyond the copy */
	memset(r.b + r.n - 8, 0, 8);
	r.b[r.n - 8] = 17;
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_BAD);
	/* the stack size reaching past the record */
	r.b[r.n - 8] = 12;
	r.b[8 + 32 + 32] = 24;
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_BAD);

	/* no user registers (abi NONE): neither registers nor a stack follow */
	hdr(&r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
	u64(&r, SID);
	u32x2(&r, PID, TID);
	u64(&r, TIME);
	u32x2(&r, CPU, 0);
	u64(&r, PERF_SAMPLE_REGS_ABI_NONE);
	u64(&r, 0);
	done(&r);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_OK);
	assert_null(p.sample.regs);
	assert_null(p.sample.stack);
	assert_true(p.sample.stack_size == 0);
}

static void mmap2_fixed(struct rb *r, int build_id)
{
	u32x2(r, PID, TID);
	u64(r, 0x7f0000001000ULL);
	u64(r, 0x3000);
	u64(r, 0x1000);
	if (build_id) {
		unsigned char b[24] = { 20, 0, 0, 0 };

		for (int i = 0; i < 20; i++)
			b[4 + i] = 0xa0 + i;
		put(r, b, 24);
	} else {
		u32x2(r, 8, 1);
		u64(r, 123456);
		u64(r, 7);
	}
	u32x2(r, 5, 2);		/* PROT_READ|PROT_EXEC, MAP_PRIVATE */
}

static void test_mmap2(void **state)
{
	struct perfrec_format f = leader();
	struct perfrec p;
	struct rb r;

	hdr(&r, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
	mmap2_fixed(&r, 1);
	str(&r, "/usr/lib/libhot.so");
	trailer(&r, TIME + 1);
	done(&r);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_OK);
	assert_int_equal(p.type, PERF_RECORD_MMAP2);
	assert_true(p.has_time && p.time == TIME + 1);
	assert_int_equal(p.pid, PID);
	assert_int_equal(p.tid, TID);
	assert_int_equal(p.cpu, CPU);
	assert_int_equal(p.mmap2.pid, PID);
	assert_int_equal(p.mmap2.tid, TID);
	assert_true(p.mmap2.start == 0x7f0000001000ULL);
	assert_true(p.mmap2.len == 0x3000 && p.mmap2.pgoff == 0x1000);
	assert_true(p.mmap2.has_build_id);
	assert_int_equal(p.mmap2.build_id_len, 20);
	assert_int_equal(p.mmap2.build_id[0], 0xa0);
	assert_int_equal(p.mmap2.build_id[19], 0xb3);
	assert_int_equal(p.mmap2.prot, 5);
	assert_int_equal(p.mmap2.flags, 2);
	assert_string_equal(p.mmap2.filename, "/usr/lib/libhot.so");

	/* a file name without its NUL before the trailer */
	memset(r.b + 8 + 64, 'x', 24);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_BAD);

	hdr(&r, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	mmap2_fixed(&r, 0);
	str(&r, "/bin/x");
	trailer(&r, TIME + 2);
	done(&r);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_OK);
	assert_false(p.mmap2.has_build_id);
	assert_null(p.mmap2.build_id);
	assert_int_equal(p.mmap2.maj, 8);
	assert_int_equal(p.mmap2.min, 1);
	assert_true(p.mmap2.ino == 123456 && p.mmap2.ino_generation == 7);
	assert_int_equal(p.mmap2.prot, 5);
	assert_string_equal(p.mmap2.filename, "/bin/x");
	assert_true(p.time == TIME + 2);

	/* too short for the fixed part and the trailer */
	hdr(&r, PERF_RECORD_MMAP2, 0);
	u32x2(&r, PID, TID);
	u64(&r, 1);
	trailer(&r, TIME);
	done(&r);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_BAD);
}

static void test_comm(void **state)
{
	struct perfrec_format f = leader();
	struct perfrec p;
	struct rb r;

	for (int exec = 0; exec <= 1; exec++) {
		hdr(&r, PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0);
		u32x2(&r, PID, TID);
		str(&r, "shortlived");
		trailer(&r, TIME + exec);
		done(&r);
		assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_OK);
		assert_int_equal(p.type, PERF_RECORD_COMM);
		assert_int_equal(p.comm.pid, PID);
		assert_int_equal(p.comm.tid, TID);
		assert_int_equal(p.comm.exec, exec);
		assert_string_equal(p.comm.comm, "shortlived");
		assert_true(p.time == TIME + exec);
	}
	/* no NUL: the name runs into the trailer */
	memset(r.b + 16, 'a', 16);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_BAD);
	/* no room for a name at all */
	hdr(&r, PERF_RECORD_COMM, 0);
	u32x2(&r, PID, TID);
	trailer(&r, TIME);
	done(&r);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_BAD);
}

static void test_fork_exit(void **state)
{
	struct perfrec_format f = leader();
	uint32_t types[2] = { PERF_RECORD_FORK, PERF_RECORD_EXIT };
	struct perfrec p;
	struct rb r;

	for (int i = 0; i < 2; i++) {
		hdr(&r, types[i], 0);
		u32x2(&r, 500, 400);	/* pid, ppid */
		u32x2(&r, 501, 401);	/* tid, ptid */
		u64(&r, TIME + 10);
		trailer(&r, TIME + 10);
		done(&r);
		assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_OK);
		assert_int_equal(p.type, types[i]);
		assert_int_equal(p.task.pid, 500);
		assert_int_equal(p.task.ppid, 400);
		assert_int_equal(p.task.tid, 501);
		assert_int_equal(p.task.ptid, 401);
		assert_true(p.task.time == TIME + 10 && p.time == TIME + 10);
		/* without its time field */
		hdr(&r, types[i], 0);
		u32x2(&r, 500, 400);
		u32x2(&r, 501, 401);
		trailer(&r, TIME);
		done(&r);
		assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_BAD);
	}
}

static void test_lost_throttle(void **state)
{
	struct perfrec_format f = leader();
	struct perfrec p;
	struct rb r;

	hdr(&r, PERF_RECORD_LOST, 0);
	u64(&r, SID);
	u64(&r, 1234);
	trailer(&r, TIME + 20);
	done(&r);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_OK);
	assert_true(p.lost.id == SID && p.lost.lost == 1234);
	assert_true(p.time == TIME + 20);
	assert_int_equal(p.cpu, CPU);

	hdr(&r, PERF_RECORD_LOST_SAMPLES, 0);
	u64(&r, 56);
	trailer(&r, TIME + 21);
	done(&r);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_OK);
	assert_int_equal(p.type, PERF_RECORD_LOST_SAMPLES);
	assert_true(p.lost.lost == 56 && p.time == TIME + 21);

	for (uint32_t t = PERF_RECORD_THROTTLE; t <= PERF_RECORD_UNTHROTTLE; t++) {
		hdr(&r, t, 0);
		u64(&r, TIME + 30);
		u64(&r, SID);
		u64(&r, 9);
		trailer(&r, TIME + 31);
		done(&r);
		assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_OK);
		assert_int_equal(p.type, t);
		assert_true(p.throttle.time == TIME + 30);
		assert_true(p.throttle.id == SID && p.throttle.stream_id == 9);
		assert_true(p.time == TIME + 31);	/* the trailer's */
	}
	/* LOST without its count */
	hdr(&r, PERF_RECORD_LOST, 0);
	u64(&r, SID);
	trailer(&r, TIME);
	done(&r);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_BAD);
}

/* PERF_SAMPLE_CGROUP: the last field here, after the registers and stack */
static void test_sample_cgroup(void **state)
{
	struct perfrec_format f;
	const uint64_t vals[2][2] = { { 7, SID }, { 8, 10 } };
	struct perfrec p;
	struct rb r;

	assert_int_equal(perfrec_format_init(&f, LEADER_TYPE | PERF_SAMPLE_CGROUP, LEADER_READ,
					     0), 0);
	/* the trailer does not change: no cgroup in sample_id_all */
	assert_int_equal(f.trailer_size, 32);
	leader_sample(&r, vals, 2);
	u64(&r, 0xc6c6c6c6c6ULL);
	done(&r);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_OK);
	assert_true(p.sample.cgroup == 0xc6c6c6c6c6ULL);
	assert_true(p.sample.nr_values == 2 && p.sample.period == 100003);
	/* without its cgroup: too short */
	r.n -= 8;
	done(&r);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_BAD);
	/* not asked: 0, and the same bytes decode as before */
	f = leader();
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_OK);
	assert_true(p.sample.cgroup == 0);

	/* after registers and a stack copy */
	assert_int_equal(perfrec_format_init(&f, PERF_SAMPLE_TID | PERF_SAMPLE_REGS_USER |
					     PERF_SAMPLE_STACK_USER | PERF_SAMPLE_CGROUP, 0,
					     0x3), 0);
	hdr(&r, PERF_RECORD_SAMPLE, 0);
	u32x2(&r, PID, TID);
	u64(&r, PERF_SAMPLE_REGS_ABI_64);
	u64(&r, 11);
	u64(&r, 22);
	u64(&r, 16);		/* stack size */
	u64(&r, 0x1111);
	u64(&r, 0x2222);
	u64(&r, 8);		/* dyn_size */
	u64(&r, 4242);		/* cgroup */
	done(&r);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_OK);
	assert_true(p.sample.stack_size == 16 && p.sample.stack_dyn_size == 8);
	assert_true(p.sample.cgroup == 4242);
}

/*
 * PERF_SAMPLE_CALLCHAIN: nr, then nr u64 (context markers included), after
 * the group read and before the registers, the stack copy and the cgroup
 * (--call-graph fp: leader | CALLCHAIN; dwarf: also REGS_USER, STACK_USER)
 */
static void test_sample_callchain(void **state)
{
	const uint64_t vals[2][2] = { { 7, SID }, { 8, 10 } };
	const uint64_t chain[5] = { PERF_CONTEXT_KERNEL, 0xffffffff81000010ULL,
				    PERF_CONTEXT_USER, 0x401234, 0x401567 };
	struct perfrec_format f;
	struct perfrec p;
	struct rb r;
	size_t nr_at;

	assert_int_equal(perfrec_format_init(&f, LEADER_TYPE | PERF_SAMPLE_CALLCHAIN |
					     PERF_SAMPLE_CGROUP, LEADER_READ, 0), 0);
	assert_int_equal(f.trailer_size, 32);	/* no callchain in sample_id_all */
	leader_sample(&r, vals, 2);
	nr_at = r.n;
	u64(&r, 5);
	for (int i = 0; i < 5; i++)
		u64(&r, chain[i]);
	u64(&r, 0xc6c6ULL);
	done(&r);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_OK);
	assert_true(p.sample.nr_ips == 5);
	assert_non_null(p.sample.ips);
	assert_memory_equal(p.sample.ips, chain, sizeof(chain));
	assert_true(perfrec_get64(p.sample.ips + 8) == 0xffffffff81000010ULL);
	assert_true(p.sample.cgroup == 0xc6c6ULL);
	assert_true(p.sample.nr_values == 2 && p.sample.period == 100003);
	/* one entry more than the record holds: the cgroup would be read as
	 * an entry, and nothing is left for the cgroup */
	memset(r.b + nr_at, 0, 8);
	r.b[nr_at] = 6;
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_BAD);
	r.b[nr_at] = 7;
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_BAD);
	/* a count whose size in bytes overflows 64 bits */
	{
		uint64_t huge = (1ULL << 61) + 1;

		memcpy(r.b + nr_at, &huge, 8);
		assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_BAD);
		huge = UINT64_MAX;
		memcpy(r.b + nr_at, &huge, 8);
		assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_BAD);
	}
	/* an empty chain */
	leader_sample(&r, vals, 2);
	u64(&r, 0);
	u64(&r, 0xc6c6ULL);
	done(&r);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_OK);
	assert_true(p.sample.nr_ips == 0 && p.sample.cgroup == 0xc6c6ULL);
	/* the count itself cut off */
	leader_sample(&r, vals, 2);
	done(&r);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_BAD);

	/* dwarf's layout: callchain, then registers, stack, cgroup */
	assert_int_equal(perfrec_format_init(&f, LEADER_TYPE | PERF_SAMPLE_CALLCHAIN |
					     PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER |
					     PERF_SAMPLE_CGROUP, LEADER_READ, 0x3), 0);
	leader_sample(&r, vals, 2);
	u64(&r, 2);
	u64(&r, PERF_CONTEXT_KERNEL);
	u64(&r, 0xffffffff81000020ULL);
	u64(&r, PERF_SAMPLE_REGS_ABI_64);
	u64(&r, 0x7ffc0000);	/* two registers */
	u64(&r, 0x401111);
	u64(&r, 16);		/* stack size */
	u64(&r, 0x1111);
	u64(&r, 0x2222);
	u64(&r, 16);		/* dyn_size */
	u64(&r, 99);		/* cgroup */
	done(&r);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_OK);
	assert_true(p.sample.nr_ips == 2);
	assert_true(perfrec_get64(p.sample.ips + 8) == 0xffffffff81000020ULL);
	assert_true(p.sample.regs_abi == PERF_SAMPLE_REGS_ABI_64);
	assert_true(perfrec_get64(p.sample.regs) == 0x7ffc0000 &&
		    perfrec_get64(p.sample.regs + 8) == 0x401111);
	assert_true(p.sample.stack_size == 16 && p.sample.stack_dyn_size == 16);
	assert_true(perfrec_get64(p.sample.stack + 8) == 0x2222);
	assert_true(p.sample.cgroup == 99);
}

/* PERF_RECORD_CGROUP: id, path, the trailer */
static void test_cgroup_record(void **state)
{
	struct perfrec_format f = leader();
	struct perfrec p;
	struct rb r;

	hdr(&r, PERF_RECORD_CGROUP, 0);
	u64(&r, 77);
	str(&r, "/strobe-test/a b");
	trailer(&r, TIME + 40);
	done(&r);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_OK);
	assert_int_equal(p.type, PERF_RECORD_CGROUP);
	assert_true(p.cgroup.id == 77);
	assert_string_equal(p.cgroup.path, "/strobe-test/a b");
	assert_true(p.time == TIME + 40);
	assert_int_equal(p.pid, PID);
	/* a path without its NUL inside the record */
	hdr(&r, PERF_RECORD_CGROUP, 0);
	u64(&r, 77);
	put(&r, "/abcdefg", 8);
	trailer(&r, TIME);
	done(&r);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_BAD);
	/* no room for the id */
	hdr(&r, PERF_RECORD_CGROUP, 0);
	trailer(&r, TIME);
	done(&r);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_BAD);
}

static void test_bad_sizes(void **state)
{
	struct perfrec_format f = leader();
	struct perfrec p;
	struct rb r;
	uint16_t sz;

	hdr(&r, PERF_RECORD_LOST, 0);
	u64(&r, SID);
	u64(&r, 1);
	trailer(&r, TIME);
	done(&r);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_OK);
	/* below the header */
	for (sz = 0; sz < 8; sz++) {
		memcpy(r.b + 6, &sz, 2);
		assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_BAD);
	}
	/* past the bytes available */
	sz = r.n + 8;
	memcpy(r.b + 6, &sz, 2);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_BAD);
	sz = 0xffff;
	memcpy(r.b + 6, &sz, 2);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_BAD);
	/* a sample whose size is below its header: nothing of it is read */
	{
		const uint64_t vals[1][2] = { { 1, SID } };
		struct rb smp;

		leader_sample(&smp, vals, 1);
		for (sz = 0; sz < 8; sz++) {
			memcpy(smp.b + 6, &sz, 2);
			assert_int_equal(perfrec_decode(&f, smp.b, smp.n, &p), PERFREC_BAD);
		}
	}
	/* fewer bytes than a header */
	assert_int_equal(perfrec_decode(&f, r.b, 7, &p), PERFREC_BAD);
	/* too small for the trailer */
	sz = 8 + 16;
	memcpy(r.b + 6, &sz, 2);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_BAD);
	/* a type it does not read */
	hdr(&r, PERF_RECORD_MMAP, 0);
	u64(&r, 0);
	trailer(&r, TIME);
	done(&r);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_SKIP);
	assert_int_equal(p.type, PERF_RECORD_MMAP);
}

/* write n bytes into a ring of size bytes at position pos, wrapping */
static void ring_put(unsigned char *ring, uint64_t size, uint64_t pos, const void *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ring[(pos + i) & (size - 1)] = ((const unsigned char *)src)[i];
}

static void test_ring_wrap(void **state)
{
	static unsigned char tmp[PERFREC_MAX_SIZE];
	struct perfrec_format f = leader();
	unsigned char ring[256];
	const uint64_t vals[2][2] = { { 1, SID }, { 42, 10 } };
	const uint64_t ids[1] = { 10 };
	uint64_t out[1] = { 0 };
	struct perf_event_header h;
	const unsigned char *rec = NULL;
	struct perfrec p;
	struct rb a, b;
	int wrapped = 0;

	/* a 96-byte sample then a 48-byte LOST, written from position 1000 */
	leader_sample(&a, vals, 2);
	assert_int_equal(a.n, 96);
	hdr(&b, PERF_RECORD_LOST, 0);
	u64(&b, SID);
	u64(&b, 3);
	trailer(&b, TIME);
	done(&b);
	for (uint64_t start = 1000; start < 1000 + 256; start += 4) {
		uint64_t tail = start, head = start + a.n + b.n;

		memset(ring, 0xee, sizeof(ring));
		ring_put(ring, sizeof(ring), start, a.b, a.n);
		ring_put(ring, sizeof(ring), start + a.n, b.b, b.n);

		assert_int_equal(perfrec_ring_next(ring, sizeof(ring), tail, head, tmp, &h, &rec),
				 PERFREC_OK);
		assert_int_equal(h.type, PERF_RECORD_SAMPLE);
		assert_int_equal(h.size, a.n);
		assert_memory_equal(rec, a.b, a.n);	/* whole, even split */
		wrapped += rec == tmp;
		assert_int_equal(perfrec_decode(&f, rec, h.size, &p), PERFREC_OK);
		assert_int_equal(perfrec_read_values(&f, &p.sample, ids, 1, out), 1);
		assert_true(out[0] == 42);
		tail += h.size;

		assert_int_equal(perfrec_ring_next(ring, sizeof(ring), tail, head, tmp, &h, &rec),
				 PERFREC_OK);
		assert_int_equal(h.type, PERF_RECORD_LOST);
		assert_memory_equal(rec, b.b, b.n);
		assert_int_equal(perfrec_decode(&f, rec, h.size, &p), PERFREC_OK);
		assert_true(p.lost.lost == 3);
		tail += h.size;
		assert_int_equal(perfrec_ring_next(ring, sizeof(ring), tail, head, tmp, &h, &rec),
				 PERFREC_EMPTY);
		/* the writer is half way through the second record */
		assert_int_equal(perfrec_ring_next(ring, sizeof(ring), start + a.n, head - 8,
						   tmp, &h, &rec), PERFREC_BAD);
	}
	assert_true(wrapped >= 96 / 4 - 1);	/* the starts that split the sample */
}

static void test_ring_bad_header(void **state)
{
	static unsigned char tmp[PERFREC_MAX_SIZE];
	unsigned char ring[64];
	struct perf_event_header h, w = { .type = PERF_RECORD_LOST, .misc = 0, .size = 0 };
	const unsigned char *rec = NULL;

	memset(ring, 0, sizeof(ring));
	/* size 0 and below the header: the reader would never move on */
	for (uint16_t s = 0; s < 8; s++) {
		w.size = s;
		ring_put(ring, sizeof(ring), 60, &w, sizeof(w));	/* header split too */
		assert_int_equal(perfrec_ring_next(ring, sizeof(ring), 60, 60 + 32, tmp, &h,
						   &rec), PERFREC_BAD);
	}
	/* larger than what was written */
	w.size = 40;
	ring_put(ring, sizeof(ring), 60, &w, sizeof(w));
	assert_int_equal(perfrec_ring_next(ring, sizeof(ring), 60, 60 + 32, tmp, &h, &rec),
			 PERFREC_BAD);
	assert_int_equal(perfrec_ring_next(ring, sizeof(ring), 60, 60 + 40, tmp, &h, &rec),
			 PERFREC_OK);
	/* larger than the ring, with a head claiming as much */
	w.size = 0xfff8;
	ring_put(ring, sizeof(ring), 60, &w, sizeof(w));
	assert_int_equal(perfrec_ring_next(ring, sizeof(ring), 60, 60 + 0xfff8, tmp, &h, &rec),
			 PERFREC_BAD);
	/* not even a header's worth before head; head behind tail */
	assert_int_equal(perfrec_ring_next(ring, sizeof(ring), 60, 64, tmp, &h, &rec),
			 PERFREC_BAD);
	assert_int_equal(perfrec_ring_next(ring, sizeof(ring), 60, 50, tmp, &h, &rec),
			 PERFREC_BAD);
}

/* A decoded record moved with its bytes (as the backend's queues hold a
 * side-band record) is pointed at the copy: its names and build-id read
 * the same with the original bytes gone. */
static void test_rebase(void **state)
{
	struct perfrec_format f = leader();
	unsigned char copy[sizeof(((struct rb *)0)->b)];
	struct perfrec p;
	struct rb r;

	hdr(&r, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
	mmap2_fixed(&r, 1);
	str(&r, "/usr/lib/libmoved.so");
	trailer(&r, TIME);
	done(&r);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_OK);
	memcpy(copy, r.b, r.n);
	perfrec_rebase(&p, (uintptr_t)r.b, copy);
	memset(r.b, 'z', sizeof(r.b));
	assert_true((const unsigned char *)p.mmap2.filename > copy &&
		    (const unsigned char *)p.mmap2.filename < copy + sizeof(copy));
	assert_string_equal(p.mmap2.filename, "/usr/lib/libmoved.so");
	assert_int_equal(p.mmap2.build_id[0], 0xa0);
	assert_int_equal(p.mmap2.build_id[19], 0xb3);

	/* without a build-id: it stays NULL */
	hdr(&r, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	mmap2_fixed(&r, 0);
	str(&r, "/bin/moved");
	trailer(&r, TIME);
	done(&r);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_OK);
	memcpy(copy, r.b, r.n);
	perfrec_rebase(&p, (uintptr_t)r.b, copy);
	memset(r.b, 'z', sizeof(r.b));
	assert_null(p.mmap2.build_id);
	assert_string_equal(p.mmap2.filename, "/bin/moved");

	hdr(&r, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	u32x2(&r, PID, TID);
	str(&r, "movedcomm");
	trailer(&r, TIME);
	done(&r);
	assert_int_equal(perfrec_decode(&f, r.b, r.n, &p), PERFREC_OK);
	memcpy(copy, r.b, r.n);
	perfrec_rebase(&p, (uintptr_t)r.b, copy);
	memset(r.b, 'z', sizeof(r.b));
	assert_string_equal(p.comm.comm, "movedcomm");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_sample_group),
		cmocka_unit_test(test_sample_read_single),
		cmocka_unit_test(test_sample_truncated),
		cmocka_unit_test(test_sample_regs_stack),
		cmocka_unit_test(test_mmap2),
		cmocka_unit_test(test_comm),
		cmocka_unit_test(test_fork_exit),
		cmocka_unit_test(test_lost_throttle),
		cmocka_unit_test(test_sample_cgroup),
		cmocka_unit_test(test_sample_callchain),
		cmocka_unit_test(test_cgroup_record),
		cmocka_unit_test(test_bad_sizes),
		cmocka_unit_test(test_ring_wrap),
		cmocka_unit_test(test_ring_bad_header),
		cmocka_unit_test(test_rebase),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
