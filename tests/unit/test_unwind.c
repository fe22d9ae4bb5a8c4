/*
 * test_unwind.c - dwarf unwinding (unwind.h) of this program's own stack:
 * its registers and a copy of its stack taken inside a known chain of
 * functions built without frame pointers (f3 called by f2 by f1), unwound
 * after the chain returned (only the copy and the files are used; also
 * when taken in a child process that exited) with
 * maps read from /proc/self/maps; a frame in a library without CFI
 * (nocfi.c) stops the unwinding there with "no CFI" and no caller made up;
 * one whose CFI is in .debug_frame in a separate debug file (the same
 * source) is unwound through only when that file is given;
 * the depth limit; a stack through a signal handler's frame; hostile inputs (a truncated stack, garbage and zero
 * registers, maps without the IP, a binary that is no ELF, a wrong ABI or
 * register mask); maps that change rebuild the process's session; many
 * processes; samples unwound in the worker in batches, each as alone and
 * in-process; the worker's budget per kind (build-ids crashed until
 * refused leave unwinding working, and the reverse); and the cost per
 * sample, printed (not asserted).
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#if defined(__x86_64__) || defined(__aarch64__)
#include <asm/perf_regs.h>
#endif
#include "hashkey.h"
#include "unwind.h"
#include "uparse.h"
#include "uworker.h"
#include "util.h"

#define STACK_MAX	(64 * 1024)
#define MAX_FRAMES	64

/* What a sample would carry: registers in perf order, a stack copy. */
struct capture {
	uint64_t regs[64];
	uint32_t nr_regs;
	uint64_t mask;
	unsigned char stack[STACK_MAX];
	uint64_t stack_size;
};

#if defined(__x86_64__)
#define HAVE_CAPTURE 1
#define PERF_SP PERF_REG_X86_SP
#define PERF_IP PERF_REG_X86_IP
/*
 * capture_regs(buf): the caller's registers at its return address, in
 * perf order for unwind_regs_mask() (ax bx cx dx si di bp sp ip r8-r15):
 * sp as after the return, ip the return address.  The callee-saved
 * registers are the caller's own.
 */
__asm__(".text\n"
	".globl capture_regs\n"
	".type capture_regs, @function\n"
	"capture_regs:\n"
	".cfi_startproc\n"
	"movq %rax, 0(%rdi)\n"
	"movq %rbx, 8(%rdi)\n"
	"movq %rcx, 16(%rdi)\n"
	"movq %rdx, 24(%rdi)\n"
	"movq %rsi, 32(%rdi)\n"
	"movq %rdi, 40(%rdi)\n"
	"movq %rbp, 48(%rdi)\n"
	"leaq 8(%rsp), %rax\n"
	"movq %rax, 56(%rdi)\n"
	"movq (%rsp), %rax\n"
	"movq %rax, 64(%rdi)\n"
	"movq %r8, 72(%rdi)\n"
	"movq %r9, 80(%rdi)\n"
	"movq %r10, 88(%rdi)\n"
	"movq %r11, 96(%rdi)\n"
	"movq %r12, 104(%rdi)\n"
	"movq %r13, 112(%rdi)\n"
	"movq %r14, 120(%rdi)\n"
	"movq %r15, 128(%rdi)\n"
	"ret\n"
	".cfi_endproc\n"
	".size capture_regs, .-capture_regs\n");
#elif defined(__aarch64__)
#define HAVE_CAPTURE 1
#define PERF_SP PERF_REG_ARM64_SP
#define PERF_IP PERF_REG_ARM64_PC
/* x0-x30, sp, pc (the return address, x30) */
__asm__(".text\n"
	".globl capture_regs\n"
	".type capture_regs, %function\n"
	"capture_regs:\n"
	".cfi_startproc\n"
	"stp x0, x1, [x0, #0]\n"
	"stp x2, x3, [x0, #16]\n"
	"stp x4, x5, [x0, #32]\n"
	"stp x6, x7, [x0, #48]\n"
	"stp x8, x9, [x0, #64]\n"
	"stp x10, x11, [x0, #80]\n"
	"stp x12, x13, [x0, #96]\n"
	"stp x14, x15, [x0, #112]\n"
	"stp x16, x17, [x0, #128]\n"
	"stp x18, x19, [x0, #144]\n"
	"stp x20, x21, [x0, #160]\n"
	"stp x22, x23, [x0, #176]\n"
	"stp x24, x25, [x0, #192]\n"
	"stp x26, x27, [x0, #208]\n"
	"stp x28, x29, [x0, #224]\n"
	"mov x9, sp\n"
	"stp x30, x9, [x0, #240]\n"
	"str x30, [x0, #256]\n"
	"ret\n"
	".cfi_endproc\n"
	".size capture_regs, .-capture_regs\n");
#else
#define HAVE_CAPTURE 0
#endif

#if HAVE_CAPTURE
void capture_regs(uint64_t *buf);

/* Where this thread's stack ends (above sp), from /proc/self/maps. */
static uint64_t stack_end(uint64_t sp)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	uint64_t end = sp;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e;

		if (sscanf(line, "%llx-%llx", &s, &e) == 2 && sp >= s && sp < e)
			end = e;
	}
	fclose(f);
	return end;
}


/* The chain: each calls the next and does some work after it, so that
 * no call is a tail call. */
volatile int sink;

__attribute__((noinline, noclone)) int f3(void *arg)
{
	struct capture *c = arg;
	uint64_t sp, end, n;

	capture_regs(c->regs);
	c->mask = unwind_regs_mask();
	c->nr_regs = (uint32_t)__builtin_popcountll(c->mask);
	sp = c->regs[__builtin_popcountll(c->mask & ((1ULL << PERF_SP) - 1))];
	end = stack_end(sp);
	n = end - sp < STACK_MAX ? end - sp : STACK_MAX;
	memcpy(c->stack, (const void *)(uintptr_t)sp, n);
	c->stack_size = n;
	sink++;
	return sink;
}

__attribute__((noinline, noclone)) int f2(void *arg)
{
	int r = f3(arg);

	sink += r;
	return r + 1;
}

__attribute__((noinline, noclone)) int f1(void *arg)
{
	int r = f2(arg);

	sink += r;
	return r + 2;
}

/* The caller of the library without CFI, with a frame pointer (a chain of
 * frames the frame-pointer heuristic could follow past the library). */
__attribute__((noinline, noclone, optimize("no-omit-frame-pointer")))
int g1(int (*mid)(int (*)(void *), void *), void *arg)
{
	int r = mid(f3, arg);

	sink += r;
	return r + 3;
}

/* A signal handler's stack: through the kernel's signal frame (libc's
 * __restore_rt, a signal frame's CFI) to the interrupted function. */
static struct capture *sig_capture;

void on_signal(int sig);

__attribute__((noinline, noclone)) void on_signal(int sig)
{
	f3(sig_capture);
	sink += sig;
}

__attribute__((noinline, noclone)) int h1(void *arg)
{
	sig_capture = arg;
	raise(SIGUSR1);
	sink++;
	return sink;
}
#endif

/* The binaries of this process: binary_id is the index + 1. */
static char *paths[256];
static size_t nr_paths;

static int open_binary(void *ctx, int64_t id)
{
	if (id < 1 || (size_t)id > nr_paths)
		return -1;
	return open(paths[id - 1], O_RDONLY | O_CLOEXEC);
}

/* Opens something that is no ELF file for every binary. */
static int open_not_elf(void *ctx, int64_t id)
{
	return open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
}

static int64_t path_id(const char *path)
{
	size_t i;

	for (i = 0; i < nr_paths; i++)
		if (!strcmp(paths[i], path))
			return (int64_t)i + 1;
	assert_true(nr_paths < sizeof(paths) / sizeof(paths[0]));
	paths[nr_paths++] = xstrdup(path);
	return (int64_t)nr_paths;
}

/* p's maps: the executable file mappings of /proc/self/maps. */
static void read_maps(struct proc *p)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];

	assert_non_null(f);
	memset(p, 0, sizeof(*p));
	p->pid = (uint32_t)getpid();
	p->start_ns = 1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off;
		char perms[8], path[4096];

		path[0] = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095[^\n]", &s, &e, perms, &off,
			   path) < 4 || perms[2] != 'x' || path[0] != '/')
			continue;
		ARRAY_GROW(p->maps, p->cap_maps, p->nr_maps + 1);
		p->maps[p->nr_maps].start = s;
		p->maps[p->nr_maps].end = e;
		p->maps[p->nr_maps].pgoff = off;
		p->maps[p->nr_maps].binary_id = path_id(path);
		p->nr_maps++;
	}
	fclose(f);
}

static const struct map *find_map(const struct proc *p, uint64_t ip)
{
	size_t i;

	for (i = 0; i < p->nr_maps; i++)
		if (ip >= p->maps[i].start && ip < p->maps[i].end)
			return &p->maps[i];
	return NULL;
}

/* Whether frame i of ips is in function fn (a return address is looked
 * up inside its call instruction). */
static int frame_in(const uint64_t *ips, size_t i, const void *fn)
{
	Dl_info info;

	if (!dladdr((void *)(uintptr_t)(ips[i] - (i ? 1 : 0)), &info) || !info.dli_saddr)
		return 0;
	return info.dli_saddr == fn;
}

static const char *frame_name(const uint64_t *ips, size_t i)
{
	Dl_info info;

	if (!dladdr((void *)(uintptr_t)(ips[i] - (i ? 1 : 0)), &info) || !info.dli_sname)
		return "?";
	return info.dli_sname;
}

static void print_frames(const char *what, enum unwind_result r, const uint64_t *ips, size_t nr)
{
	size_t i;

	printf("%s: %s, %zu frames:", what, unwind_result_name(r), nr);
	for (i = 0; i < nr; i++)
		printf(" %s", frame_name(ips, i));
	printf("\n");
}

static struct unwinder *new_unwinder(int (*open)(void *, int64_t))
{
	struct unwind_ops ops = { NULL, open, NULL };
	struct error e;
	struct unwinder *u = unwinder_new(&ops, &e);

	assert_non_null(u);
	return u;
}

static enum unwind_result unwind_capture(struct unwinder *u, const struct proc *p,
					 const struct capture *c, uint64_t *ips, size_t max,
					 size_t *nr, int64_t *stop)
{
	return unwind_user(u, p, PERF_SAMPLE_REGS_ABI_64, c->mask,
			   (const unsigned char *)c->regs, c->nr_regs, c->stack,
			   c->stack_size, ips, max, nr, stop);
}

#if HAVE_CAPTURE
static int skip_if_unbuilt(void)
{
	if (!unwind_regs_mask()) {
		printf("skipped: no dwarf unwinding on this architecture\n");
		skip();
	}
	return 0;
}
#else
static int skip_if_unbuilt(void)
{
	printf("skipped: no register capture for this architecture in the test\n");
	skip();
	return 0;
}
#endif

int main(int argc, char **argv);

void test_chain(void **state);

void test_chain(void **state)
{
#if HAVE_CAPTURE
	struct capture *c = xcalloc(1, sizeof(*c));
	struct unwinder *u = new_unwinder(open_binary);
	uint64_t ips[MAX_FRAMES], ips2[MAX_FRAMES];
	size_t nr, nr2, i;
	int64_t stop;
	struct proc p;
	enum unwind_result r;
	int saw_main = 0;

	skip_if_unbuilt();
	f1(c);
	/* the chain returned: its stack now holds other things */
	read_maps(&p);
	r = unwind_capture(u, &p, c, ips, MAX_FRAMES, &nr, &stop);
	print_frames("chain", r, ips, nr);
	assert_true(nr >= 5);
	assert_true(frame_in(ips, 0, (void *)f3));
	assert_true(frame_in(ips, 1, (void *)f2));
	assert_true(frame_in(ips, 2, (void *)f1));
	assert_true(frame_in(ips, 3, (void *)test_chain));
	for (i = 4; i < nr; i++)
		saw_main |= frame_in(ips, i, (void *)main);
	assert_true(saw_main);
	/* through libcmocka and libc to _start, whose CFI ends the stack */
	assert_int_equal(r, UNWIND_OK);
	assert_int_equal(stop, 0);
	/* every frame is in a mapping */
	for (i = 0; i < nr; i++)
		assert_non_null(find_map(&p, ips[i]));

	/* the same again, from the kept session: the same frames */
	r = unwind_capture(u, &p, c, ips2, MAX_FRAMES, &nr2, &stop);
	assert_int_equal(r, UNWIND_OK);
	assert_int_equal(nr2, nr);
	assert_memory_equal(ips, ips2, nr * sizeof(*ips));

	/* the depth limit: the innermost frames, and where it stopped */
	r = unwind_capture(u, &p, c, ips2, 3, &nr2, &stop);
	assert_int_equal(r, UNWIND_DEPTH);
	assert_int_equal(nr2, 3);
	assert_memory_equal(ips, ips2, 3 * sizeof(*ips));
	assert_int_equal(stop, find_map(&p, ips[2])->binary_id);
	unwinder_free(u);
	free(p.maps);
	free(c);
#else
	skip_if_unbuilt();
#endif
}

static void test_no_cfi(void **state)
{
#if HAVE_CAPTURE
	struct capture *c = xcalloc(1, sizeof(*c));
	struct unwinder *u = new_unwinder(open_binary);
	uint64_t ips[MAX_FRAMES];
	size_t nr;
	int64_t stop;
	struct proc p;
	enum unwind_result r;
	char exe[4096], lib[4200];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	void *h;
	int (*mid)(int (*)(void *), void *);
	const struct map *m;

	skip_if_unbuilt();
	assert_true(n > 0);
	exe[n] = 0;
	snprintf(lib, sizeof(lib), "%s/libnocfi.so", dirname(exe));
	h = dlopen(lib, RTLD_NOW);
	if (!h)
		fail_msg("%s", dlerror());
	mid = (int (*)(int (*)(void *), void *))dlsym(h, "nocfi_mid");
	assert_non_null(mid);
	g1(mid, c);
	read_maps(&p);
	r = unwind_capture(u, &p, c, ips, MAX_FRAMES, &nr, &stop);
	print_frames("through a library without CFI", r, ips, nr);
	/* f3, then the library's frame, and nothing after it */
	assert_int_equal(r, UNWIND_NO_CFI);
	assert_int_equal(nr, 2);
	assert_true(frame_in(ips, 0, (void *)f3));
	assert_true(frame_in(ips, 1, (void *)mid));
	m = find_map(&p, ips[1] - 1);
	assert_non_null(m);
	assert_int_equal(stop, m->binary_id);
	assert_string_equal(paths[stop - 1], lib);
	unwinder_free(u);
	dlclose(h);
	free(p.maps);
	free(c);
#else
	skip_if_unbuilt();
#endif
}

/* A stack taken in another process (a child, gone by then), unwound with
 * only the copy and the files. */
void test_other_process(void **state);

void test_other_process(void **state)
{
#if HAVE_CAPTURE
	struct capture *c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct unwinder *u = new_unwinder(open_binary);
	uint64_t ips[MAX_FRAMES];
	size_t nr;
	int64_t stop;
	struct proc p;
	enum unwind_result r;
	pid_t child;
	int status;

	skip_if_unbuilt();
	assert_true(c != MAP_FAILED);
	read_maps(&p);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		f1(c);
		_exit(0);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && !WEXITSTATUS(status));
	assert_true(c->stack_size > 0);
	p.pid = (uint32_t)child;
	r = unwind_capture(u, &p, c, ips, MAX_FRAMES, &nr, &stop);
	print_frames("taken in a child that exited", r, ips, nr);
	assert_int_equal(r, UNWIND_OK);
	assert_true(nr >= 5);
	assert_true(frame_in(ips, 0, (void *)f3));
	assert_true(frame_in(ips, 1, (void *)f2));
	assert_true(frame_in(ips, 2, (void *)f1));
	assert_true(frame_in(ips, 3, (void *)test_other_process));
	unwinder_free(u);
	free(p.maps);
	munmap(c, sizeof(*c));
#else
	skip_if_unbuilt();
#endif
}

static void test_signal(void **state)
{
#if HAVE_CAPTURE
	struct capture *c = xcalloc(1, sizeof(*c));
	struct unwinder *u = new_unwinder(open_binary);
	uint64_t ips[MAX_FRAMES];
	size_t nr, i, at_handler = 0, at_h1 = 0, at_main = 0;
	int64_t stop;
	struct proc p;
	enum unwind_result r;
	struct sigaction sa, old;

	skip_if_unbuilt();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	h1(c);
	sigaction(SIGUSR1, &old, NULL);
	read_maps(&p);
	r = unwind_capture(u, &p, c, ips, MAX_FRAMES, &nr, &stop);
	print_frames("in a signal handler", r, ips, nr);
	assert_int_equal(r, UNWIND_OK);
	assert_true(frame_in(ips, 0, (void *)f3));
	assert_true(frame_in(ips, 1, (void *)on_signal));
	for (i = 2; i < nr; i++) {
		if (!at_h1 && frame_in(ips, i, (void *)h1))
			at_h1 = i;
		if (!at_main && frame_in(ips, i, (void *)main))
			at_main = i;
	}
	at_handler = 1;
	/* the trampoline and raise's frames between, then the interrupted
	 * chain in order */
	assert_true(at_h1 > at_handler + 1);
	assert_true(at_main > at_h1);
	unwinder_free(u);
	free(p.maps);
	free(c);
#else
	skip_if_unbuilt();
#endif
}

static int open_debug(void *ctx, int64_t id)
{
	char path[4200];

	if (id < 1 || (size_t)id > nr_paths)
		return -1;
	snprintf(path, sizeof(path), "%s.debug", paths[id - 1]);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* A library whose CFI is in .debug_frame, in its separate debug file:
 * unwound through with ops.open_debug, "no CFI" without. */
static void test_debug_frame(void **state)
{
#if HAVE_CAPTURE
	struct capture *c = xcalloc(1, sizeof(*c));
	struct unwind_ops ops = { NULL, open_binary, open_debug };
	struct unwinder *u = new_unwinder(open_binary), *ud;
	uint64_t ips[MAX_FRAMES];
	size_t nr;
	int64_t stop;
	struct proc p;
	enum unwind_result r;
	char exe[4096], lib[4200];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct error e;
	void *h;
	int (*mid)(int (*)(void *), void *);

	skip_if_unbuilt();
	assert_true(n > 0);
	exe[n] = 0;
	snprintf(lib, sizeof(lib), "%s/libdbgframe.so", dirname(exe));
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		fail_msg("%s", dlerror());
	mid = (int (*)(int (*)(void *), void *))dlsym(h, "nocfi_mid");
	assert_non_null(mid);
	g1(mid, c);
	read_maps(&p);
	r = unwind_capture(u, &p, c, ips, MAX_FRAMES, &nr, &stop);
	print_frames("debug file not given", r, ips, nr);
	assert_int_equal(r, UNWIND_NO_CFI);
	assert_int_equal(nr, 2);
	assert_string_equal(paths[stop - 1], lib);

	ud = unwinder_new(&ops, &e);
	assert_non_null(ud);
	r = unwind_capture(ud, &p, c, ips, MAX_FRAMES, &nr, &stop);
	print_frames("with its debug file", r, ips, nr);
	assert_int_equal(r, UNWIND_OK);
	assert_true(nr >= 5);
	assert_true(frame_in(ips, 0, (void *)f3));
	assert_true(frame_in(ips, 1, (void *)mid));
	assert_true(frame_in(ips, 2, (void *)g1));
	unwinder_free(ud);
	unwinder_free(u);
	dlclose(h);
	free(p.maps);
	free(c);
#else
	skip_if_unbuilt();
#endif
}

static void test_hostile(void **state)
{
#if HAVE_CAPTURE
	struct capture *c = xcalloc(1, sizeof(*c));
	struct capture *bad = xcalloc(1, sizeof(*bad));
	struct unwinder *u = new_unwinder(open_binary), *u2;
	uint64_t ips[MAX_FRAMES], good[MAX_FRAMES];
	size_t nr, nr_good, i, ip_idx, sp_idx;
	int64_t stop;
	struct proc p, q;
	enum unwind_result r;

	skip_if_unbuilt();
	f1(c);
	read_maps(&p);
	r = unwind_capture(u, &p, c, good, MAX_FRAMES, &nr_good, &stop);
	assert_int_equal(r, UNWIND_OK);
	ip_idx = (size_t)__builtin_popcountll(c->mask & ((1ULL << PERF_IP) - 1));
	sp_idx = (size_t)__builtin_popcountll(c->mask & ((1ULL << PERF_SP) - 1));

	/* a truncated stack: the frames up to where the copy ends, then
	 * "outside the stack copy" */
	memcpy(bad, c, sizeof(*bad));
	bad->stack_size = 16;
	r = unwind_capture(u, &p, bad, ips, MAX_FRAMES, &nr, &stop);
	print_frames("16-byte stack", r, ips, nr);
	assert_int_equal(r, UNWIND_STACK);
	assert_true(nr >= 1 && nr < nr_good);
	assert_memory_equal(ips, good, nr * sizeof(*ips));
	bad->stack_size = 0;
	r = unwind_capture(u, &p, bad, ips, MAX_FRAMES, &nr, &stop);
	assert_int_equal(r, UNWIND_STACK);
	assert_true(nr >= 1 && nr < nr_good);
	assert_memory_equal(ips, good, nr * sizeof(*ips));

	/* garbage registers: wherever they point, the IP is in no mapping */
	srand(12);
	for (i = 0; i < 200; i++) {
		size_t k;

		for (k = 0; k < c->nr_regs; k++)
			bad->regs[k] = ((uint64_t)rand() << 33) ^ ((uint64_t)rand() << 11) ^ (uint64_t)rand();
		bad->stack_size = c->stack_size;
		r = unwind_capture(u, &p, bad, ips, MAX_FRAMES, &nr, &stop);
		if (!find_map(&p, bad->regs[ip_idx])) {
			assert_int_equal(r, UNWIND_NO_MAP);
			assert_int_equal(nr, 1);
			assert_int_equal(stop, 0);
		}
		/* a real IP with garbage sp and other registers: the IP,
		 * then whatever the CFI finds in the copy, never a crash */
		bad->regs[ip_idx] = c->regs[ip_idx];
		r = unwind_capture(u, &p, bad, ips, MAX_FRAMES, &nr, &stop);
		assert_true(nr >= 1 && ips[0] == c->regs[ip_idx]);
		assert_true(r != UNWIND_OK || nr > 1);
		/* garbage stack contents, real registers */
		memcpy(bad->regs, c->regs, sizeof(bad->regs));
		for (k = 0; k < 256; k++)
			bad->stack[rand() % bad->stack_size] = (unsigned char)rand();
		r = unwind_capture(u, &p, bad, ips, MAX_FRAMES, &nr, &stop);
		assert_true(nr >= 1 && nr <= MAX_FRAMES && ips[0] == c->regs[ip_idx]);
		memcpy(bad->stack, c->stack, c->stack_size);
	}

	/* all registers zero */
	memset(bad->regs, 0, sizeof(bad->regs));
	r = unwind_capture(u, &p, bad, ips, MAX_FRAMES, &nr, &stop);
	assert_int_equal(r, UNWIND_NO_MAP);
	assert_int_equal(nr, 1);
	assert_int_equal(ips[0], 0);

	/* maps without the test program: its IP is in no mapping */
	memset(&q, 0, sizeof(q));
	q.pid = p.pid;
	q.start_ns = p.start_ns;
	q.maps = xcalloc(p.nr_maps, sizeof(*q.maps));
	for (i = 0; i < p.nr_maps; i++)
		if (p.maps[i].binary_id != find_map(&p, c->regs[ip_idx])->binary_id)
			q.maps[q.nr_maps++] = p.maps[i];
	r = unwind_capture(u, &q, c, ips, MAX_FRAMES, &nr, &stop);
	assert_int_equal(r, UNWIND_NO_MAP);
	assert_int_equal(nr, 1);
	assert_int_equal(stop, 0);
	/* the maps changed back: the session is rebuilt, all frames again */
	r = unwind_capture(u, &p, c, ips, MAX_FRAMES, &nr, &stop);
	assert_int_equal(r, UNWIND_OK);
	assert_int_equal(nr, nr_good);
	/* no maps at all */
	q.nr_maps = 0;
	r = unwind_capture(u, &q, c, ips, MAX_FRAMES, &nr, &stop);
	assert_int_equal(r, UNWIND_NO_MAP);
	assert_int_equal(nr, 1);

	/* each mapping names another mapping's binary, or a file offset
	 * past its end: no crash, no reads outside the buffers */
	for (i = 0; i < p.nr_maps; i++) {
		q.maps[i] = p.maps[i];
		q.maps[i].binary_id = p.maps[(i + 1) % p.nr_maps].binary_id;
		if (i % 2)
			q.maps[i].pgoff += 1ULL << 40;
	}
	q.nr_maps = p.nr_maps;
	q.pid++;
	r = unwind_capture(u, &q, c, ips, MAX_FRAMES, &nr, &stop);
	assert_true(nr >= 1 && nr <= MAX_FRAMES);

	/* the binaries are no ELF files */
	u2 = new_unwinder(open_not_elf);
	r = unwind_capture(u2, &p, c, ips, MAX_FRAMES, &nr, &stop);
	assert_int_equal(r, UNWIND_NO_BINARY);
	assert_int_equal(nr, 1);
	assert_int_equal(stop, find_map(&p, c->regs[ip_idx])->binary_id);
	unwinder_free(u2);

	/* no registers, another ABI, masks that do not fit the registers */
	r = unwind_user(u, &p, PERF_SAMPLE_REGS_ABI_NONE, 0, NULL, 0, NULL, 0, ips,
			MAX_FRAMES, &nr, &stop);
	assert_int_equal(r, UNWIND_NO_REGS);
	assert_int_equal(nr, 0);
	r = unwind_user(u, &p, PERF_SAMPLE_REGS_ABI_32, c->mask, (const unsigned char *)c->regs,
			c->nr_regs, c->stack, c->stack_size, ips, MAX_FRAMES, &nr, &stop);
	assert_int_equal(r, UNWIND_ERROR);
	assert_int_equal(nr, 0);
	r = unwind_user(u, &p, 7, c->mask, (const unsigned char *)c->regs,
			c->nr_regs, c->stack, c->stack_size, ips, MAX_FRAMES, &nr, &stop);
	assert_int_equal(r, UNWIND_ERROR);
	r = unwind_user(u, &p, PERF_SAMPLE_REGS_ABI_64, c->mask, (const unsigned char *)c->regs,
			c->nr_regs - 1, c->stack, c->stack_size, ips, MAX_FRAMES, &nr, &stop);
	assert_int_equal(r, UNWIND_ERROR);
	r = unwind_user(u, &p, PERF_SAMPLE_REGS_ABI_64, c->mask & ~(1ULL << PERF_IP),
			(const unsigned char *)c->regs, c->nr_regs - 1, c->stack, c->stack_size,
			ips, MAX_FRAMES, &nr, &stop);
	assert_int_equal(r, UNWIND_ERROR);
	(void)sp_idx;

	/* registers and stack at odd addresses */
	{
		unsigned char *odd = xmalloc(c->nr_regs * 8 + c->stack_size + 2);

		memcpy(odd + 1, c->regs, c->nr_regs * 8);
		memcpy(odd + 1 + c->nr_regs * 8 + 1, c->stack, c->stack_size);
		r = unwind_user(u, &p, PERF_SAMPLE_REGS_ABI_64, c->mask, odd + 1, c->nr_regs,
				odd + 2 + c->nr_regs * 8, c->stack_size, ips, MAX_FRAMES, &nr, &stop);
		assert_int_equal(r, UNWIND_OK);
		assert_int_equal(nr, nr_good);
		assert_memory_equal(ips, good, nr * sizeof(*ips));
		free(odd);
	}

	/* many processes: sessions are dropped and rebuilt, results stay */
	for (i = 0; i < 100; i++) {
		p.pid = 1000 + (uint32_t)(i % 40);
		r = unwind_capture(u, &p, c, ips, MAX_FRAMES, &nr, &stop);
		assert_int_equal(r, UNWIND_OK);
		assert_int_equal(nr, nr_good);
		if (i % 3 == 0)
			unwinder_forget(u, p.pid, p.start_ns);
	}
	unwinder_free(u);
	free(q.maps);
	free(p.maps);
	free(bad);
	free(c);
#else
	skip_if_unbuilt();
#endif
}

/* The cost per sample, printed for doc/PERFORMANCE.md (not asserted:
 * machine speed varies). */
static void test_cost(void **state)
{
#if HAVE_CAPTURE
	struct capture *c = xcalloc(1, sizeof(*c));
	struct unwinder *u = new_unwinder(open_binary);
	uint64_t ips[MAX_FRAMES], t0, t1;
	size_t nr, i, n = 20000;
	int64_t stop;
	struct proc p;
	enum unwind_result r;

	skip_if_unbuilt();
	f1(c);
	read_maps(&p);
	t0 = clock_monotonic_ns();
	r = unwind_capture(u, &p, c, ips, MAX_FRAMES, &nr, &stop);
	t1 = clock_monotonic_ns();
	assert_int_equal(r, UNWIND_OK);
	printf("unwind cost: first sample (session built) %.0f us, %zu maps\n",
	       (t1 - t0) / 1e3, p.nr_maps);
	t0 = clock_monotonic_ns();
	for (i = 0; i < n; i++) {
		r = unwind_capture(u, &p, c, ips, MAX_FRAMES, &nr, &stop);
		assert_int_equal(r, UNWIND_OK);
	}
	t1 = clock_monotonic_ns();
	printf("unwind cost: %.0f ns per sample of %zu frames (%.0f ns per frame), %zu samples\n",
	       (double)(t1 - t0) / n, nr, (double)(t1 - t0) / n / nr, n);
	unwinder_free(u);
	free(p.maps);
	free(c);
#else
	skip_if_unbuilt();
#endif
}

/*
 * Samples unwound in the worker in batches (uworker.h): a burst of
 * samples of three processes (two with the same maps, one with none) and
 * of several shapes (a chain, a signal handler's stack, a depth limit,
 * garbage registers) goes in fewer round trips than samples, each process
 * sent once per batch, and every sample's answer equals, sample by sample,
 * what the worker answers it alone (a batch of one) and what unwind_user()
 * answers in this process.  Red with UWORKER_BATCH 1.
 */
static void test_batch(void **state)
{
#if HAVE_CAPTURE
	enum { K = 24 };
	struct capture *c[3];
	struct unwinder *u = new_unwinder(open_binary);
	struct unwind_ops ops = { NULL, open_binary, NULL };
	struct uworker *w;
	struct uworker_counts before, after;
	struct proc p[3];
	struct sigaction sa, old;
	struct error e;
	uint64_t ips[MAX_FRAMES], ips1[MAX_FRAMES], ips2[MAX_FRAMES];
	size_t nr, nr1, nr2, done = 0, ran = 0;
	int64_t stop, stop1, stop2;
	enum unwind_result r, r1, r2;
	int idx[K];

	skip_if_unbuilt();
	for (int i = 0; i < 3; i++)
		c[i] = xcalloc(1, sizeof(*c[i]));
	f1(c[0]);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	h1(c[1]);
	sigaction(SIGUSR1, &old, NULL);
	*c[2] = *c[0];
	for (uint32_t i = 0; i < c[2]->nr_regs; i++)
		c[2]->regs[i] ^= 0x5a5a5a5a5a5aULL;	/* garbage registers */
	read_maps(&p[0]);
	read_maps(&p[1]);
	p[1].pid++;			/* another process, the same maps */
	memset(&p[2], 0, sizeof(p[2]));	/* one with no maps */
	p[2].pid = 7;
	w = uworker_new(&ops, &e);
	if (!w)
		fail_msg("uworker_new: %s", e.msg);

	/* the batches: each sample added, the batch run when full */
	uworker_counts(w, &before);
	while (done < K) {
		size_t i = done, max = i % 5 == 4 ? 3 : MAX_FRAMES;
		struct capture *ci = c[i % 3];
		struct proc *pi = &p[(i / 3) % 3];
		int k = uworker_add(w, pi, PERF_SAMPLE_REGS_ABI_64, ci->mask,
				    (const unsigned char *)ci->regs, ci->nr_regs, ci->stack,
				    ci->stack_size, max);

		if (k == UWORKER_FULL || i == K - 1) {
			size_t n;

			if (k >= 0)
				idx[done++] = k;
			assert_true(k >= 0 || ran < done);
			n = uworker_run(w);
			assert_int_equal(n, done - ran);
			/* each answer as the worker alone and unwind_user() say */
			for (size_t j = ran; j < done; j++) {
				struct capture *cj = c[j % 3];
				struct proc *pj = &p[(j / 3) % 3];
				size_t mj = j % 5 == 4 ? 3 : MAX_FRAMES;

				r = uworker_result(w, (size_t)idx[j], ips, &nr, &stop);
				r2 = unwind_capture(u, pj, cj, ips2, mj, &nr2, &stop2);
				assert_int_equal(r, r2);
				assert_int_equal(nr, nr2);
				assert_int_equal(stop, stop2);
				assert_memory_equal(ips, ips2, nr * sizeof(*ips));
			}
			ran = done;
			continue;
		}
		assert_true(k >= 0);
		assert_int_equal(k, (int)(done - ran));	/* in order */
		idx[done++] = k;
	}
	uworker_counts(w, &after);
	printf("batched: %zu samples in %llu round trips\n", (size_t)K,
	       (unsigned long long)(after.calls - before.calls));
	assert_int_equal(after.samples - before.samples, K);
	assert_true(after.calls - before.calls < K / 2);

	/* alone: a round trip each, the same answers */
	for (size_t i = 0; i < K; i++) {
		size_t max = i % 5 == 4 ? 3 : MAX_FRAMES;
		struct capture *ci = c[i % 3];

		r1 = uworker_unwind(w, &p[(i / 3) % 3], PERF_SAMPLE_REGS_ABI_64, ci->mask,
				    (const unsigned char *)ci->regs, ci->nr_regs, ci->stack,
				    ci->stack_size, ips1, max, &nr1, &stop1);
		r2 = unwind_capture(u, &p[(i / 3) % 3], ci, ips2, max, &nr2, &stop2);
		assert_int_equal(r1, r2);
		assert_int_equal(nr1, nr2);
		assert_int_equal(stop1, stop2);
		assert_memory_equal(ips1, ips2, nr1 * sizeof(*ips1));
		if (i == 0)
			assert_true(r1 == UNWIND_OK && nr1 >= 5);
		if (i == 4)
			assert_true(r1 == UNWIND_DEPTH && nr1 == 3);
	}
	uworker_counts(w, &before);
	assert_int_equal(before.calls - after.calls, K);
	uworker_free(w);
	unwinder_free(u);
	free(p[0].maps);
	free(p[1].maps);
	for (int i = 0; i < 3; i++)
		free(c[i]);
#else
	skip_if_unbuilt();
#endif
}

/* Kill pid 100 ms from now (a thread): a request sent meanwhile to the
 * stopped worker is in flight when it dies, as in a parser's crash. */
static void *kill_later(void *arg)
{
	usleep(100000);
	kill((pid_t)(intptr_t)arg, SIGKILL);
	return NULL;
}

/* A worker running (selftest starts one, charged to no kind), stopped,
 * and killed while the caller's next request is in flight. */
static pthread_t crash_next_request(struct uworker *w)
{
	struct symworker_self me;
	struct error e;
	pthread_t t;
	pid_t pid;

	assert_int_equal(uworker_selftest(w, &me, &e), 0);
	pid = uworker_pid(w);
	assert_true(pid > 0);
	kill(pid, SIGSTOP);
	assert_int_equal(pthread_create(&t, NULL, kill_later, (void *)(intptr_t)pid), 0);
	return t;
}

/*
 * The ingest worker's budget is per kind (uworker.h): UWORKER_RESTARTS
 * + 1 build-id requests that crash in flight get build-ids refused (at
 * once, counted), and dwarf unwinding (and JIT files) still work afterwards,
 * as in process; the reverse on a second uworker: unwinding crashed as
 * often is refused, build-ids still read.  Red with the old shared budget
 * (symworker max_restarts UWORKER_RESTARTS: the unwinding after the
 * build-id crashes is 'unwinder failed').
 */
static void test_budget_per_kind(void **state)
{
#if HAVE_CAPTURE
	struct capture *c = xcalloc(1, sizeof(*c));
	struct unwinder *u = new_unwinder(open_binary);
	struct unwind_ops ops = { NULL, open_binary, NULL };
	uint64_t ips[MAX_FRAMES], ips2[MAX_FRAMES];
	uint8_t id[BUILD_ID_MAX], want[BUILD_ID_MAX];
	struct uworker_counts uc;
	struct uworker *w;
	struct jitmap m;
	struct error e;
	struct proc p;
	size_t nr, nr2;
	int64_t stop, stop2;
	enum unwind_result r, r2;
	int fd, na;

	skip_if_unbuilt();
	f1(c);
	read_maps(&p);
	r2 = unwind_capture(u, &p, c, ips2, MAX_FRAMES, &nr2, &stop2);
	assert_int_equal(r2, UNWIND_OK);
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	na = hashkey_build_id_fd(fd, want, sizeof(want), &e);
	assert_true(na > 0);

	/* build-ids crashed UWORKER_RESTARTS + 1 times: refused, unwinding not */
	w = uworker_new(&ops, &e);
	if (!w)
		fail_msg("uworker_new: %s", e.msg);
	for (int i = 0; i <= UWORKER_RESTARTS; i++) {
		pthread_t t = crash_next_request(w);

		assert_int_equal(uparse_build_id(w, fd, id, sizeof(id), &e), -2);
		pthread_join(t, NULL);
	}
	assert_int_equal(uparse_build_id(w, fd, id, sizeof(id), &e), -2);
	assert_non_null(strstr(e.msg, "not asked again"));
	r = uworker_unwind(w, &p, PERF_SAMPLE_REGS_ABI_64, c->mask, (const unsigned char *)c->regs,
			   c->nr_regs, c->stack, c->stack_size, ips, MAX_FRAMES, &nr, &stop);
	print_frames("after the build-id crashes", r, ips, nr);
	assert_int_equal(r, r2);
	assert_int_equal(nr, nr2);
	assert_memory_equal(ips, ips2, nr * sizeof(*ips));
	assert_int_equal(uparse_jit(w, UPARSE_JITMAP, "1000 10 f\n", 10, 1, 0, &m, NULL, &e), 0);
	assert_int_equal(m.nr, 1);
	jitmap_free(&m);
	uworker_counts(w, &uc);
	printf("failed: unwind %llu, build-id %llu, jit %llu; refused %llu %llu %llu\n",
	       (unsigned long long)uc.failed[UWORKER_UNWIND],
	       (unsigned long long)uc.failed[UWORKER_BUILD_ID],
	       (unsigned long long)uc.failed[UWORKER_JIT],
	       (unsigned long long)uc.refused[UWORKER_UNWIND],
	       (unsigned long long)uc.refused[UWORKER_BUILD_ID],
	       (unsigned long long)uc.refused[UWORKER_JIT]);
	assert_int_equal(uc.failed[UWORKER_BUILD_ID], UWORKER_RESTARTS + 1);
	assert_int_equal(uc.refused[UWORKER_BUILD_ID], 1);
	assert_int_equal(uc.failed[UWORKER_UNWIND] + uc.refused[UWORKER_UNWIND], 0);
	assert_int_equal(uc.failed[UWORKER_JIT] + uc.refused[UWORKER_JIT], 0);
	uworker_free(w);

	/* the reverse: unwinding crashed as often, build-ids still read */
	w = uworker_new(&ops, &e);
	if (!w)
		fail_msg("uworker_new: %s", e.msg);
	for (int i = 0; i <= UWORKER_RESTARTS; i++) {
		pthread_t t = crash_next_request(w);

		r = uworker_unwind(w, &p, PERF_SAMPLE_REGS_ABI_64, c->mask,
				   (const unsigned char *)c->regs, c->nr_regs, c->stack,
				   c->stack_size, ips, MAX_FRAMES, &nr, &stop);
		assert_int_equal(r, UNWIND_FAILED);
		pthread_join(t, NULL);
	}
	r = uworker_unwind(w, &p, PERF_SAMPLE_REGS_ABI_64, c->mask, (const unsigned char *)c->regs,
			   c->nr_regs, c->stack, c->stack_size, ips, MAX_FRAMES, &nr, &stop);
	assert_int_equal(r, UNWIND_FAILED);	/* refused */
	assert_int_equal(uparse_build_id(w, fd, id, sizeof(id), &e), na);
	assert_memory_equal(id, want, (size_t)na);
	uworker_counts(w, &uc);
	assert_int_equal(uc.failed[UWORKER_UNWIND], UWORKER_RESTARTS + 1);
	assert_int_equal(uc.refused[UWORKER_UNWIND], 1);
	assert_int_equal(uc.failed[UWORKER_BUILD_ID] + uc.refused[UWORKER_BUILD_ID], 0);
	uworker_free(w);
	close(fd);
	unwinder_free(u);
	free(p.maps);
	free(c);
#else
	skip_if_unbuilt();
#endif
}

static void test_names(void **state)
{
	assert_string_equal(unwind_result_name(UNWIND_NO_CFI), "no CFI");
	assert_string_equal(unwind_result_name(UNWIND_NO_MAP), "no mapping");
	assert_string_equal(unwind_result_name(UNWIND_STACK), "outside the stack copy");
	assert_string_equal(unwind_result_name(UNWIND_NO_REGS), "no registers");
	assert_string_equal(unwind_result_name(UNWIND_NO_BINARY), "binary unreadable");
	assert_string_equal(unwind_result_name(UNWIND_DEPTH), "depth limit");
#if defined(__x86_64__)
	/* the general registers and ip, not flags nor segment registers */
	assert_true(unwind_regs_mask() == 0xff01ffULL);
#elif defined(__aarch64__)
	assert_true(unwind_regs_mask() == (1ULL << 33) - 1);
#endif
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_chain),
		cmocka_unit_test(test_other_process),
		cmocka_unit_test(test_signal),
		cmocka_unit_test(test_no_cfi),
		cmocka_unit_test(test_debug_frame),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_cost),
		cmocka_unit_test(test_batch),
		cmocka_unit_test(test_budget_per_kind),
	};
	int r;

	r = cmocka_run_group_tests(tests, NULL, NULL);
	while (nr_paths)
		free(paths[--nr_paths]);
	return r;
}
