/*
 * jitdump - JIT-style code named in a jitdump file (the format perf inject
 * --jit reads): two counting loops written as machine code into anonymous
 * executable memory, jit_func_a and jit_func_b, described by two
 * JIT_CODE_LOAD records in DIR/jit-PID.dump, which is mmapped PROT_READ |
 * PROT_EXEC as JITs do so that profilers see its name.  No perf map.
 *
 * Usage: jitdump DIR [SECONDS]       (default 2)
 *
 * Each round calls jit_func_a for 3 N iterations and jit_func_b for N: of
 * the loops' time, 75% is in jit_func_a and 25% in jit_func_b.  Rounds go
 * on until SECONDS have passed; then it exits 0 leaving the file behind
 * (as JITs do).  Timestamps are CLOCK_MONOTONIC.  Exits 77 on an
 * architecture it has no machine code for (x86-64 and arm64 only) or when
 * DIR cannot hold executable mappings (noexec), 1 on an error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#define ELF_MACH 62
/* mov %rdi,%rax; 1: sub $1,%rax; jne 1b; ret */
static const unsigned char code[] = {
	0x48, 0x89, 0xf8, 0x48, 0x83, 0xe8, 0x01, 0x75, 0xfa, 0xc3,
};
#elif defined(__aarch64__)
#define ELF_MACH 183
/* 1: subs x0, x0, #1; b.ne 1b; ret */
static const uint32_t code[] = { 0xf1000400, 0x54ffffe1, 0xd65f03c0 };
#endif

#define FUNC_STRIDE 64	/* jit_func_b starts this far after jit_func_a */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void put32(unsigned char **p, uint32_t v)
{
	memcpy(*p, &v, 4);
	*p += 4;
}

static void put64(unsigned char **p, uint64_t v)
{
	memcpy(*p, &v, 8);
	*p += 8;
}

static int write_all(int fd, const void *b, size_t n)
{
	return write(fd, b, n) == (ssize_t)n ? 0 : -1;
}

/* One JIT_CODE_LOAD record: header, pid, tid, vma, code_addr, code_size,
 * code_index, the name with its NUL, the code bytes. */
static int code_load(int fd, const char *name, uint64_t addr, uint64_t index)
{
	unsigned char rec[256], *p = rec;
	size_t nlen = strlen(name) + 1;
	uint32_t total = 56 + nlen + sizeof(code);

	put32(&p, 0);
	put32(&p, total);
	put64(&p, mono_ns());
	put32(&p, (uint32_t)getpid());
	put32(&p, (uint32_t)syscall(SYS_gettid));
	put64(&p, addr);
	put64(&p, addr);
	put64(&p, sizeof(code));
	put64(&p, index);
	memcpy(p, name, nlen);
	p += nlen;
	memcpy(p, code, sizeof(code));
	p += sizeof(code);
	return write_all(fd, rec, p - rec);
}

int main(int argc, char **argv)
{
#if defined(__x86_64__) || defined(__aarch64__)
	double seconds = argc > 2 ? atof(argv[2]) : 2;
	long page = sysconf(_SC_PAGESIZE);
	void (*fa)(uint64_t), (*fb)(uint64_t);
	unsigned char hdr[40], *p = hdr;
	uint64_t end;
	char path[4096];
	void *mem, *marker;
	int fd;

	if (argc < 2 || seconds <= 0 || seconds > 1e6) {
		fprintf(stderr, "usage: jitdump DIR [SECONDS]\n");
		return 1;
	}
	mem = mmap(NULL, page, PROT_READ | PROT_WRITE | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("jitdump: mmap");
		return 1;
	}
	memcpy(mem, code, sizeof(code));
	memcpy((char *)mem + FUNC_STRIDE, code, sizeof(code));
	__builtin___clear_cache((char *)mem, (char *)mem + FUNC_STRIDE + sizeof(code));

	snprintf(path, sizeof(path), "%s/jit-%d.dump", argv[1], (int)getpid());
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	put32(&p, 0x4A695444);		/* magic, in this machine's byte order */
	put32(&p, 1);			/* version */
	put32(&p, sizeof(hdr));		/* total_size */
	put32(&p, ELF_MACH);
	put32(&p, 0);			/* pad1 */
	put32(&p, (uint32_t)getpid());
	put64(&p, mono_ns());
	put64(&p, 0);			/* flags: CLOCK_MONOTONIC timestamps */
	if (write_all(fd, hdr, sizeof(hdr))) {
		perror(path);
		return 1;
	}
	/* the mapping profilers see (perf's jvmti agent does the same) */
	marker = mmap(NULL, page, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (marker == MAP_FAILED) {
		int err = errno;

		fprintf(stderr, "jitdump: mmap %s PROT_EXEC: %s\n", path, strerror(err));
		unlink(path);
		return err == EPERM || err == EACCES ? 77 : 1;
	}
	if (code_load(fd, "jit_func_a", (uint64_t)(uintptr_t)mem, 1) ||
	    code_load(fd, "jit_func_b", (uint64_t)(uintptr_t)mem + FUNC_STRIDE, 2) ||
	    close(fd)) {
		perror(path);
		return 1;
	}
	fa = (void (*)(uint64_t))(uintptr_t)mem;
	fb = (void (*)(uint64_t))((uintptr_t)mem + FUNC_STRIDE);
	end = mono_ns() + (uint64_t)(seconds * 1e9);
	while (mono_ns() < end) {
		fa(3000000);
		fb(1000000);
	}
	return 0;
#else
	(void)argc;
	(void)argv;
	fprintf(stderr, "jitdump: no machine code for this architecture\n");
	return 77;
#endif
}
