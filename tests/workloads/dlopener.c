/*
 * dlopener - loads a library only after a delay, then runs code in it.
 *
 * Usage: dlopener LIBPATH DELAY_S HOT_S
 *
 * Spins DELAY_S seconds of CLOCK_MONOTONIC in its own function
 * before_dlopen (so a profiling session started before it sees the library
 * mapped later, and the time before is busy, not asleep), then
 * dlopen(LIBPATH, RTLD_NOW), looks up hot_in_lib and calls
 * hot_in_lib(HOT_S).  The library stays loaded until exit.  Use with
 * tests/workloads/libhot.so.
 *
 * Prints one line to stdout before calling hot_in_lib:
 * "spin_start_ns=S dlopen_ns=D", CLOCK_MONOTONIC (strobe's time_ns) at the
 * start of the spin and just after dlopen returned, so a test can place its
 * windows around the real moments however late a loaded machine started it.
 *
 * Known answer: for the first DELAY_S seconds ~DELAY_S seconds of samples
 * in before_dlopen (dlopener) and none in the library, then ~HOT_S seconds
 * of samples in hot_in_lib (libhot.so).  Exits 0; on errors prints one
 * line to stderr and exits 1.
 */
#include <dlfcn.h>
#include <string.h>
#include "workload.h"

static volatile uint64_t sink;

/* the program's own work before the dlopen: a spin in this function */
__attribute__((noinline)) static void before_dlopen(double seconds)
{
	WL_SPIN(seconds, sink);
}

static int parse_seconds(const char *s, double *v)
{
	char *e;

	errno = 0;
	*v = strtod(s, &e);
	if (errno || e == s || *e || !isfinite(*v) || *v < 0 || *v > 1e6)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	double delay, hot;
	void *lib, *sym;
	void (*fn)(double);
	double t_spin, t_open;

	if (argc != 4) {
		fprintf(stderr, "usage: dlopener LIBPATH DELAY_S HOT_S\n");
		return 1;
	}
	if (parse_seconds(argv[2], &delay) < 0) {
		fprintf(stderr, "dlopener: bad DELAY_S '%s'\n", argv[2]);
		return 1;
	}
	if (parse_seconds(argv[3], &hot) < 0) {
		fprintf(stderr, "dlopener: bad HOT_S '%s'\n", argv[3]);
		return 1;
	}
	t_spin = wl_now();
	before_dlopen(delay);
	lib = dlopen(argv[1], RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "dlopener: %s\n", dlerror());
		return 1;
	}
	t_open = wl_now();
	dlerror();
	sym = dlsym(lib, "hot_in_lib");
	if (!sym) {
		const char *err = dlerror();

		if (err)
			fprintf(stderr, "dlopener: %s\n", err);
		else
			fprintf(stderr, "dlopener: %s: hot_in_lib is NULL\n", argv[1]);
		return 1;
	}
	memcpy(&fn, &sym, sizeof(fn));	/* object to function pointer */
	printf("spin_start_ns=%.0f dlopen_ns=%.0f\n", t_spin * 1e9, t_open * 1e9);
	fflush(stdout);
	fn(hot);
	return 0;
}
