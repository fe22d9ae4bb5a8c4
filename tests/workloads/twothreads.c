/*
 * twothreads - a process whose two threads take known, different numbers
 * of page faults, started on a signal (for 'strobe count -p/-t
 * --per-thread').
 *
 * Usage: twothreads NA NB
 *
 * Maps NA + NB pages of anonymous private memory without transparent huge
 * pages (as pagetouch does), starts thread "tt-a" and thread "tt-b", and
 * prints one line "ready PID TID_A TID_B" on stdout once both wait.  On
 * SIGUSR1, tt-a writes one byte to each of its NA pages and tt-b to each of
 * its NB pages; the main thread joins them and exits 0.
 *
 * Known answer: after SIGUSR1, tt-a takes exactly NA first-touch faults
 * and tt-b exactly NB (their stacks and the code they run are touched
 * before they wait); the main thread takes a handful (join, exit).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

struct worker {
	const char *name;
	volatile char *mem;
	size_t npages, pagesize;
	pid_t tid;
	int go_fd;		/* reads EOF when it is time to fault */
	int ready_fd;		/* writes one byte once waiting */
};

__attribute__((noinline)) static void touch_pages(volatile char *p, size_t npages,
						  size_t pagesize)
{
	for (size_t i = 0; i < npages; i++)
		p[i * pagesize] = 1;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char b;

	pthread_setname_np(pthread_self(), w->name);
	w->tid = (pid_t)syscall(SYS_gettid);
	touch_pages(w->mem, 0, w->pagesize);	/* the code path, no page */
	if (write(w->ready_fd, "r", 1) != 1)
		return NULL;
	while (read(w->go_fd, &b, 1) < 0 && errno == EINTR)
		;
	touch_pages(w->mem, w->npages, w->pagesize);
	return NULL;
}

static int parse_pages(const char *s, size_t *n)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v == 0 || v > (1ULL << 30))
		return -1;
	*n = (size_t)v;
	return 0;
}

int main(int argc, char **argv)
{
	struct worker w[2] = { { .name = "tt-a" }, { .name = "tt-b" } };
	long pagesize = sysconf(_SC_PAGESIZE);
	int go[2], ready[2], sig;
	pthread_t th[2];
	sigset_t set;
	char *mem, b;

	if (argc != 3 || parse_pages(argv[1], &w[0].npages) < 0 ||
	    parse_pages(argv[2], &w[1].npages) < 0) {
		fprintf(stderr, "usage: twothreads NA NB (page counts >= 1)\n");
		return 1;
	}
	mem = mmap(NULL, (w[0].npages + w[1].npages) * (size_t)pagesize, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED ||
	    madvise(mem, (w[0].npages + w[1].npages) * (size_t)pagesize, MADV_NOHUGEPAGE) < 0) {
		fprintf(stderr, "twothreads: mmap: %s\n", strerror(errno));
		return 1;
	}
	if (pipe(go) < 0 || pipe(ready) < 0) {
		fprintf(stderr, "twothreads: pipe: %s\n", strerror(errno));
		return 1;
	}
	/* SIGUSR1 waits for sigwait in the main thread, in every thread */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	for (int i = 0; i < 2; i++) {
		w[i].mem = mem + (i ? w[0].npages * (size_t)pagesize : 0);
		w[i].pagesize = (size_t)pagesize;
		w[i].go_fd = go[0];
		w[i].ready_fd = ready[1];
		if (pthread_create(&th[i], NULL, worker_main, &w[i])) {
			fprintf(stderr, "twothreads: pthread_create failed\n");
			return 1;
		}
	}
	for (int i = 0; i < 2; i++)
		if (read(ready[0], &b, 1) != 1) {
			fprintf(stderr, "twothreads: a thread did not start\n");
			return 1;
		}
	printf("ready %ld %ld %ld\n", (long)getpid(), (long)w[0].tid, (long)w[1].tid);
	fflush(stdout);
	while (sigwait(&set, &sig))
		;
	close(go[1]);	/* both read EOF: go */
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	return 0;
}
