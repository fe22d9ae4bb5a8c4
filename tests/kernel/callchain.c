/*
 * callchain.c - the driver's callchains (STROBE_CONFIG_CALLCHAIN), checked
 * on a workload whose call tree is known (run as root, static binary, built
 * with frame pointers by lib.sh's guest_programs).
 *
 *   callchain [--sample cpu-clock|cycles|instructions] [--period N | --freq HZ]
 *             [other reader options, ignored]
 *   callchain --workload SECONDS
 *
 * --workload: only run the tree for SECONDS, without the device (strobed
 * records it, 45-strobed-callchain.sh), after printing "pid PID" and, per
 * function, "range NAME LO HI": the file offsets of its code in this
 * binary, which is what strobe's stacks store.
 *
 * The workload runs two trees on the main thread, each function in its own
 * ELF section so that an address says which function it is in:
 *   tree:  cc_root -> cc_outer_a -> cc_leaf   (60% of the work)
 *          cc_root -> cc_outer_b -> cc_leaf   (40%)
 *   kread: cc_kread_outer -> cc_kread_inner -> read(2) of /dev/zero, a
 *          raw system call (no libc wrapper without a frame pointer)
 *
 * Checks (one PASS/FAIL/SKIP line each, then RESULT):
 *  - CONFIG refuses an unknown strobe_config.flags bit with EINVAL;
 *  - every sample has STROBE_SAMPLE_CALLCHAIN, a size that covers its
 *    counters and nr_ips entries, and perf's layout: a kernel-mode sample
 *    starts PERF_CONTEXT_KERNEL, its PC, kernel addresses; a user-mode one
 *    PERF_CONTEXT_USER, its PC; the user part holds user addresses only;
 *    kernel threads (pid 0) have no user part;
 *  - user-mode samples in cc_leaf have cc_outer_a or cc_outer_b as caller
 *    and cc_root above it, in most samples, both callers seen, the 60/40
 *    split roughly kept;
 *  - kernel-mode samples under the read system call have vfs_read in their
 *    kernel part (found in /proc/kallsyms) and cc_kread_outer in their user
 *    part (the user registers saved at the system call).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include "../../kernel/uapi/strobe.h"
#include "ktest.h"

#define DEV "/dev/strobe"
#define MAXCPU 256
#define PAGES 64
/* enough samples to judge shares; the phases end there or at the timeout */
#define WANT_LEAF 400
#define WANT_KREAD 150
#define PHASE_TIMEOUT_NS (60ULL * 1000000000ULL)

/* ---- the workload ------------------------------------------------------ */

#define FN(sec) __attribute__((section(sec), noinline, used))
#define RANGE(sec) \
	extern const char __start_##sec[], __stop_##sec[]
RANGE(cc_leaf);
RANGE(cc_outer_a);
RANGE(cc_outer_b);
RANGE(cc_root);
RANGE(cc_kread_inner);
RANGE(cc_kread_outer);
#define IN(sec, a) ((a) >= (uintptr_t)__start_##sec && (a) < (uintptr_t)__stop_##sec)
/*
 * A leaf function keeps its frame record: x86-64 GCC 12 drops it even with
 * -mno-omit-leaf-frame-pointer, unless the function takes its frame's
 * address.  Without it the leaf's caller would be missing from every chain
 * (the return address is on the stack, but no frame pointer leads to it).
 */
#define KEEP_FRAME() __asm__ volatile("" : : "r"(__builtin_frame_address(0)))

/* the phases' end: enough samples seen by the drain thread, or the timeout */
static int phase_done(void);

static FN("cc_leaf") unsigned long leaf(unsigned long n, unsigned long x)
{
	KEEP_FRAME();
	while (n--) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

/* "+ 1" after the call: no tail call, the caller's frame stays. */
static FN("cc_outer_a") unsigned long outer_a(unsigned long n, unsigned long x)
{
	return leaf(n, x) + 1;
}

static FN("cc_outer_b") unsigned long outer_b(unsigned long n, unsigned long x)
{
	return leaf(n, x) + 1;
}

static FN("cc_root") unsigned long root(void)
{
	unsigned long x = 1;

	while (!phase_done()) {
		x = outer_a(60000, x);
		x = outer_b(40000, x);
	}
	return x;
}

static FN("cc_kread_inner") long kread_inner(int fd, void *buf, unsigned long len)
{
	long ret;

	KEEP_FRAME();
#if defined(__x86_64__)
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_read), "D"((long)fd), "S"(buf), "d"(len)
			 : "rcx", "r11", "memory");
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = SYS_read;
	register long x0 __asm__("x0") = fd;
	register long x1 __asm__("x1") = (long)buf;
	register long x2 __asm__("x2") = (long)len;

	__asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
	ret = x0;
#else
	ret = read(fd, buf, len);
#endif
	return ret;
}

static FN("cc_kread_outer") long kread_outer(int fd, char *buf, unsigned long len)
{
	long sum = 0;

	while (!phase_done()) {
		sum += kread_inner(fd, buf, len);
		__asm__ volatile("" : "+r"(sum));
	}
	return sum;
}

/* ---- kernel symbols ---------------------------------------------------- */

struct ksym {
	unsigned long long addr;
	char *name;
};
static struct ksym *ksyms;
static size_t nr_ksyms;

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Text symbols of /proc/kallsyms, sorted; 0 if addresses are hidden. */
static size_t ksyms_load(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], name[256], type;
	unsigned long long addr;
	size_t cap = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 || !addr)
			continue;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (nr_ksyms == cap) {
			cap = cap ? 2 * cap : 65536;
			ksyms = realloc(ksyms, cap * sizeof(*ksyms));
			if (!ksyms)
				exit(2);
		}
		ksyms[nr_ksyms].addr = addr;
		ksyms[nr_ksyms].name = strdup(name);
		nr_ksyms++;
	}
	fclose(f);
	qsort(ksyms, nr_ksyms, sizeof(*ksyms), ksym_cmp);
	return nr_ksyms;
}

static const char *ksym_name(unsigned long long a)
{
	size_t lo = 0, hi = nr_ksyms;

	while (lo < hi) {	/* first symbol above a */
		size_t mid = (lo + hi) / 2;

		if (ksyms[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? ksyms[lo - 1].name : "?";
}

/* ---- rings and the checks of each sample -------------------------------- */

struct ring {
	int cpu;
	volatile struct strobe_ring_ctrl *ctrl;
	const uint8_t *data;
	uint32_t size;
};
static struct ring rings[MAXCPU];
static int nr_rings;
static unsigned nr_counters = 1;
static pthread_mutex_t drain_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t my_pid, my_tid;

/* tallies, under drain_lock */
static unsigned long long samples, no_flag, bad_size, bad_layout, kthread_user;
static unsigned long long kernel_samples, user_samples, max_ips, sum_ips;
static unsigned long long leaf_n, leaf_a, leaf_b, leaf_root;
static unsigned long long kread_n, kread_vfs, kread_outer_n;
static unsigned long long vfs_lo, vfs_hi;	/* vfs_read's text, 0 if unknown */
static char example_leaf[2048], example_kread[2048];
static char first_bad[256];

static int is_marker(uint64_t v)
{
	return v >= (uint64_t)PERF_CONTEXT_MAX;
}

static int is_kernel_addr(uint64_t v)
{
	return v >> 63;		/* x86-64 and arm64: the top half */
}

static void describe(char *out, size_t len, const uint64_t *ips, unsigned n)
{
	size_t o = 0;
	unsigned i;

	for (i = 0; i < n && o + 80 < len; i++) {
		uint64_t a = ips[i];
		const char *name = a == (uint64_t)PERF_CONTEXT_KERNEL ? "[kernel]" :
				   a == (uint64_t)PERF_CONTEXT_USER ? "[user]" :
				   is_kernel_addr(a) ? (nr_ksyms ? ksym_name(a) : "k?") :
				   IN(cc_leaf, a) ? "leaf" : IN(cc_outer_a, a) ? "outer_a" :
				   IN(cc_outer_b, a) ? "outer_b" : IN(cc_root, a) ? "root" :
				   IN(cc_kread_inner, a) ? "kread_inner" :
				   IN(cc_kread_outer, a) ? "kread_outer" : "u?";
		o += snprintf(out + o, len - o, "%s%s", i ? " " : "", name);
	}
}

static void bad(const char *why, const struct strobe_sample *s)
{
	bad_layout++;
	if (!first_bad[0])
		snprintf(first_bad, sizeof(first_bad), "%s (pid %u flags %#x nr_ips %u)",
			 why, s->pid, s->flags, s->nr_ips);
}

static void check_sample(const struct strobe_sample *s)
{
	const uint64_t *ips = (const uint64_t *)s->counters + s->nr_counters;
	unsigned mode = s->flags & STROBE_SAMPLE_MODE_MASK, n = s->nr_ips, i = 0, u = 0;
	int has_user = 0;

	samples++;
	if (!(s->flags & STROBE_SAMPLE_CALLCHAIN)) {
		no_flag++;
		return;
	}
	if (s->hdr.size != STROBE_SAMPLE_SIZE(s->nr_counters + n) || n > STROBE_MAX_IPS ||
	    s->nr_counters != nr_counters) {
		bad_size++;
		return;
	}
	if (n > max_ips)
		max_ips = n;
	sum_ips += n;
	if (mode == STROBE_SAMPLE_KERNEL) {
		kernel_samples++;
		if (n < 2 || ips[0] != (uint64_t)PERF_CONTEXT_KERNEL || ips[1] != s->ip)
			return bad("kernel sample without PERF_CONTEXT_KERNEL, PC", s);
		for (i = 2; i < n && !is_marker(ips[i]); i++)
			if (!is_kernel_addr(ips[i]))
				return bad("user address in the kernel part", s);
	} else if (mode == STROBE_SAMPLE_USER) {
		user_samples++;
		if (n < 2 || ips[0] != (uint64_t)PERF_CONTEXT_USER || ips[1] != s->ip)
			return bad("user sample without PERF_CONTEXT_USER, PC", s);
	} else {
		return bad("mode", s);
	}
	if (i < n) {
		if (ips[i] != (uint64_t)PERF_CONTEXT_USER || i + 1 >= n)
			return bad("no PERF_CONTEXT_USER and PC after the kernel part", s);
		u = ++i;
		for (; i < n; i++)
			if (is_marker(ips[i]) || is_kernel_addr(ips[i]))
				return bad("marker or kernel address in the user part", s);
		has_user = 1;
	}
	if (s->pid == 0 && has_user)
		kthread_user++;
	if (s->pid != my_pid || s->tid != my_tid || !has_user)
		return;

	/* the workload */
	if (mode == STROBE_SAMPLE_USER && IN(cc_leaf, s->ip)) {
		leaf_n++;
		if (n > u + 1 && IN(cc_outer_a, ips[u + 1]))
			leaf_a++;
		if (n > u + 1 && IN(cc_outer_b, ips[u + 1]))
			leaf_b++;
		if (n > u + 2 && (IN(cc_outer_a, ips[u + 1]) || IN(cc_outer_b, ips[u + 1])) &&
		    IN(cc_root, ips[u + 2]))
			leaf_root++;
		if (!example_leaf[0] || leaf_n == 100)
			describe(example_leaf, sizeof(example_leaf), ips, n);
	} else if (mode == STROBE_SAMPLE_KERNEL && IN(cc_kread_inner, ips[u])) {
		kread_n++;
		for (i = 2; i < u - 1; i++)
			if (ips[i] >= vfs_lo && ips[i] < vfs_hi) {
				kread_vfs++;
				break;
			}
		for (i = u + 1; i < n; i++)
			if (IN(cc_kread_outer, ips[i])) {
				kread_outer_n++;
				break;
			}
		if (!example_kread[0] || kread_n == 50)
			describe(example_kread, sizeof(example_kread), ips, n);
	}
}

static unsigned long long bad_rec;

static void drain_one(struct ring *r)
{
	unsigned long long head = __atomic_load_n(&r->ctrl->head, __ATOMIC_ACQUIRE);
	unsigned long long tail = r->ctrl->tail;

	while (tail < head) {
		uint32_t off = tail & (r->size - 1);
		const struct strobe_rec_header *h = (const void *)(r->data + off);

		if (h->size < 8 || h->size % 8 || h->size > r->size - off) {
			bad_rec++;
			tail = head;
			break;
		}
		if (h->type == STROBE_REC_SAMPLE)
			check_sample((const void *)h);
		tail += h->size;
	}
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&r->ctrl->tail, tail, __ATOMIC_RELAXED);
}

static void drain_all(void)
{
	int i;

	pthread_mutex_lock(&drain_lock);
	for (i = 0; i < nr_rings; i++)
		drain_one(&rings[i]);
	pthread_mutex_unlock(&drain_lock);
}

static volatile int drain_stop;
static int drain_fd;

static void *drain_thread(void *arg)
{
	(void)arg;
	while (!drain_stop) {
		struct pollfd p = { drain_fd, POLLIN, 0 };

		poll(&p, 1, 20);
		drain_all();
	}
	return NULL;
}

static unsigned long long tally(unsigned long long *v)
{
	unsigned long long x;

	pthread_mutex_lock(&drain_lock);
	x = *v;
	pthread_mutex_unlock(&drain_lock);
	return x;
}

/* ---- the test ------------------------------------------------------------ */

static unsigned long long *phase_tally, phase_want, phase_end;

static int phase_done(void)
{
	return tally(phase_tally) >= phase_want || now_ns() >= phase_end;
}

static void phase(unsigned long long *t, unsigned long long want)
{
	phase_tally = t;
	phase_want = want;
	phase_end = now_ns() + PHASE_TIMEOUT_NS;
}

/* "range NAME LO HI": [lo, hi) as file offsets, from /proc/self/maps */
static void print_range(const char *name, uintptr_t lo, uintptr_t hi)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long long start, end, off;
	char line[512];

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx %*s %llx", &start, &end, &off) != 3)
			continue;
		if (lo >= start && lo < end) {
			printf("range %s %llu %llu\n", name, lo - start + off, hi - start + off);
			break;
		}
	}
	if (f)
		fclose(f);
}

static int workload_only(int seconds)
{
	static unsigned long long never;

	printf("pid %d\n", (int)getpid());
	print_range("leaf", (uintptr_t)__start_cc_leaf, (uintptr_t)__stop_cc_leaf);
	print_range("outer_a", (uintptr_t)__start_cc_outer_a, (uintptr_t)__stop_cc_outer_a);
	print_range("outer_b", (uintptr_t)__start_cc_outer_b, (uintptr_t)__stop_cc_outer_b);
	print_range("root", (uintptr_t)__start_cc_root, (uintptr_t)__stop_cc_root);
	fflush(stdout);
	phase_tally = &never;
	phase_want = 1;
	phase_end = now_ns() + seconds * 1000000000ULL;
	return root() == 0;
}

int main(int argc, char **argv)
{
	struct perf_event_attr s, c;
	struct strobe_config cfg;
	struct strobe_cpu_stats cs[MAXCPU];
	struct strobe_stats st;
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), fd, zfd, a, i;
	uint32_t type = PERF_TYPE_SOFTWARE;
	unsigned long long config = PERF_COUNT_SW_CPU_CLOCK, period = 1000000, freq = 0;
	unsigned long long hmax = 0, hsum = 0, nsamp = 0;
	size_t pg = STROBE_PAGE, data_size = PAGES * pg;
	pthread_t th;
	char *buf;
	int r;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "--workload"))
		return workload_only(atoi(argv[2]));
	for (a = 1; a + 1 < argc; a += 2) {
		if (!strcmp(argv[a], "--sample")) {
			if (!strcmp(argv[a + 1], "cycles"))
				type = PERF_TYPE_HARDWARE, config = PERF_COUNT_HW_CPU_CYCLES;
			else if (!strcmp(argv[a + 1], "instructions"))
				type = PERF_TYPE_HARDWARE, config = PERF_COUNT_HW_INSTRUCTIONS;
		} else if (!strcmp(argv[a], "--period")) {
			period = strtoull(argv[a + 1], NULL, 0), freq = 0;
		} else if (!strcmp(argv[a], "--freq")) {
			freq = strtoull(argv[a + 1], NULL, 0);
		}
	}
	if (ncpu > MAXCPU)
		ncpu = MAXCPU;
	my_pid = getpid();
	my_tid = syscall(SYS_gettid);
	if (ksyms_load()) {
		for (i = 0; i < (int)nr_ksyms; i++)
			if (!strcmp(ksyms[i].name, "vfs_read") && i + 1 < (int)nr_ksyms) {
				vfs_lo = ksyms[i].addr;
				vfs_hi = ksyms[i + 1].addr;
			}
	}
	info("callchain: %d CPUs, %zu kernel text symbols, vfs_read %#llx..%#llx", ncpu,
	     nr_ksyms, vfs_lo, vfs_hi);

	attr_init(&s, type, config);
	if (freq) {
		s.freq = 1;
		s.sample_freq = freq;
	} else {
		s.sample_period = period;
	}
	attr_init(&c, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);

	fd = open(DEV, O_RDWR);
	if (fd < 0) {
		check(0, "callchain-open", "%s", strerror(errno));
		goto out;
	}
	cfg_init(&cfg, &s, &c, 1, PAGES);
	cfg.flags = 1U << 31;
	r = ioctl(fd, STROBE_IOC_CONFIG, &cfg);
	check(r < 0 && errno == EINVAL, "callchain-unknown-flag-einval", "ret %d errno %d (%s)",
	      r, errno, strerror(errno));
	cfg_init(&cfg, &s, &c, 1, PAGES);
	cfg.flags = STROBE_CONFIG_CALLCHAIN;
	r = ioctl(fd, STROBE_IOC_CONFIG, &cfg);
	check(r == 0, "callchain-config", "errno %d (%s)", errno, strerror(errno));
	if (r)
		goto out;

	for (i = 0; i < ncpu; i++) {
		void *cp = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
				i * (pg + data_size));
		void *dp = mmap(NULL, data_size, PROT_READ, MAP_SHARED, fd,
				i * (pg + data_size) + pg);

		if (cp == MAP_FAILED || dp == MAP_FAILED) {
			check(0, "callchain-mmap", "cpu %d: %s", i, strerror(errno));
			goto out;
		}
		rings[nr_rings].cpu = i;
		rings[nr_rings].ctrl = cp;
		rings[nr_rings].data = dp;
		rings[nr_rings].size = data_size;
		nr_rings++;
	}
	drain_fd = fd;
	if (pthread_create(&th, NULL, drain_thread, NULL)) {
		check(0, "callchain-thread", "pthread_create");
		goto out;
	}
	if (ioctl(fd, STROBE_IOC_START, 0) < 0) {
		check(0, "callchain-start", "errno %d (%s)", errno, strerror(errno));
		goto out;
	}

	/* the workload runs on this thread, the drain thread tallies */
	phase(&leaf_n, WANT_LEAF);
	info("tree: root() returned %lu", root());
	zfd = open("/dev/zero", O_RDONLY);
	buf = malloc(1 << 16);
	if (zfd < 0 || !buf) {
		check(0, "callchain-dev-zero", "%s", strerror(errno));
	} else {
		phase(&kread_n, WANT_KREAD);
		info("kread: %ld bytes read", kread_outer(zfd, buf, 1 << 16));
	}
	ioctl(fd, STROBE_IOC_STOP, 0);
	drain_stop = 1;
	pthread_join(th, NULL);
	drain_all();

	st.size = sizeof(st);
	st.nr_cpus = ncpu;
	st.cpus = (uintptr_t)cs;
	if (ioctl(fd, STROBE_IOC_STATS, &st) == 0)
		for (i = 0; i < ncpu; i++) {
			nsamp += cs[i].samples;
			hsum += cs[i].handler_ns_total;
			if (cs[i].handler_ns_max > hmax)
				hmax = cs[i].handler_ns_max;
		}
	info("samples %llu (kernel %llu user %llu), entries per sample mean %.1f max %llu, "
	     "handler mean %llu ns max %llu ns", samples, kernel_samples, user_samples,
	     samples ? (double)sum_ips / samples : 0.0, max_ips, nsamp ? hsum / nsamp : 0, hmax);
	info("leaf samples %llu: caller outer_a %llu outer_b %llu, then root %llu",
	     leaf_n, leaf_a, leaf_b, leaf_root);
	info("example leaf chain: %s", example_leaf);
	info("kread samples %llu: vfs_read in kernel part %llu, kread_outer in user part %llu",
	     kread_n, kread_vfs, kread_outer_n);
	info("example kread chain: %s", example_kread);

	check(samples > 0 && !no_flag && !bad_size && !bad_rec, "callchain-records",
	      "%llu samples, %llu without STROBE_SAMPLE_CALLCHAIN, %llu of a wrong size, "
	      "%llu malformed records", samples, no_flag, bad_size, bad_rec);
	check(!bad_layout, "callchain-layout", "%llu samples out of perf's layout, first: %s",
	      bad_layout, first_bad);
	check(!kthread_user, "callchain-kthread-no-user", "%llu samples of pid 0 with a user part",
	      kthread_user);
	check(leaf_n >= WANT_LEAF / 4 && (leaf_a + leaf_b) * 10 >= leaf_n * 9 &&
	      leaf_root * 10 >= leaf_n * 9, "callchain-user-callers",
	      "%llu leaf samples, %llu with outer_a/outer_b as caller, %llu with root above "
	      "(want >= %d, 90%%, 90%%)", leaf_n, leaf_a + leaf_b, leaf_root, WANT_LEAF / 4);
	check(leaf_a && leaf_b && leaf_a * 100 >= (leaf_a + leaf_b) * 45 &&
	      leaf_a * 100 <= (leaf_a + leaf_b) * 75, "callchain-user-split",
	      "outer_a %llu, outer_b %llu: want both, outer_a 45..75%% (the work is 60/40)",
	      leaf_a, leaf_b);
	check(kread_n >= WANT_KREAD / 4 && kread_outer_n * 10 >= kread_n * 9,
	      "callchain-kernel-sample-user-part",
	      "%llu kernel samples under read(2), %llu with kread_outer in the user part "
	      "(want >= %d, 90%%)", kread_n, kread_outer_n, WANT_KREAD / 4);
	if (!vfs_hi)
		printf("SKIP callchain-kernel-part: no vfs_read in /proc/kallsyms "
		       "(addresses hidden?)\n");
	else
		check(kread_n && kread_vfs * 2 >= kread_n, "callchain-kernel-part",
		      "%llu kernel samples under read(2), %llu with vfs_read in the kernel "
		      "part (want 50%%)", kread_n, kread_vfs);
out:
	printf("RESULT %s (%d failures)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
