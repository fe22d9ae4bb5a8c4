/*
 * jitmap - JIT-style code: a counting loop written as machine code into
 * anonymous executable memory, named in /tmp/perf-PID.map, the perf map
 * convention of JIT compilers (V8's --perf-basic-prof, Python's -X perf).
 *
 * Usage: jitmap [SECONDS]        (default 2)
 *        jitmap -n CALLS         (a fixed amount of work: CALLS calls of
 *                                 10 million iterations, ~3 ms each)
 *
 * The region is mapped read, write and execute; the loop is the only code
 * in it, at its start, and the map file has one line:
 *   <start> <size> jit_hot_loop
 * The program calls the loop until SECONDS have passed (or CALLS times), then exits 0
 * leaving the map file behind (as JITs do).  Exits 77 on an architecture
 * it has no machine code for (x86-64 and arm64 only), 1 on an error.
 *
 * Known answer: almost all its user-mode samples are in jit_hot_loop.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
/* mov %rdi,%rax; 1: sub $1,%rax; jne 1b; ret */
static const unsigned char code[] = {
	0x48, 0x89, 0xf8, 0x48, 0x83, 0xe8, 0x01, 0x75, 0xfa, 0xc3,
};
#elif defined(__aarch64__)
/* 1: subs x0, x0, #1; b.ne 1b; ret */
static const uint32_t code[] = { 0xf1000400, 0x54ffffe1, 0xd65f03c0 };
#endif

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
#if defined(__x86_64__) || defined(__aarch64__)
	int fixed = argc > 2 && !strcmp(argv[1], "-n");
	double seconds = argc > 1 && !fixed ? atof(argv[1]) : 2, end;
	long calls = fixed ? atol(argv[2]) : 0;
	long page = sysconf(_SC_PAGESIZE);
	void (*loop)(uint64_t);
	char path[64];
	FILE *f;
	void *mem;

	if (seconds <= 0 || seconds > 1e6 || (fixed && (calls <= 0 || calls > 1000000))) {
		fprintf(stderr, "usage: jitmap [SECONDS] | jitmap -n CALLS\n");
		return 1;
	}
	mem = mmap(NULL, page, PROT_READ | PROT_WRITE | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("jitmap: mmap");
		return 1;
	}
	memcpy(mem, code, sizeof(code));
	__builtin___clear_cache((char *)mem, (char *)mem + sizeof(code));
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	if (!f || fprintf(f, "%lx %zx jit_hot_loop\n", (unsigned long)(uintptr_t)mem,
			  sizeof(code)) < 0 || fclose(f)) {
		perror(path);
		return 1;
	}
	loop = (void (*)(uint64_t))(uintptr_t)mem;
	if (fixed) {
		while (calls-- > 0)
			loop(10000000);
		return 0;
	}
	end = now() + seconds;
	while (now() < end)
		loop(10000000);
	return 0;
#else
	(void)argc;
	(void)argv;
	fprintf(stderr, "jitmap: no machine code for this architecture\n");
	return 77;
#endif
}
