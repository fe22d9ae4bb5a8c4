/*
 * stacksecret - spins with a secret on its stack, for the raw stack
 * copies of --keep-stacks (t0495).
 *
 * Usage: STACKSECRET=TEXT stacksecret [SECONDS]   (SECONDS default 2)
 *
 * The secret comes from the environment (which other users cannot read
 * through /proc/PID/environ, unlike the command line), is copied into a
 * local buffer of hold(), a few hundred bytes above the stack pointer
 * while hold() spins, and read back after: every user-mode sample's stack
 * copy (--call-graph dwarf, any size) holds it.
 *
 * Known answer: nearly all its samples are in hold (and the vDSO's
 * clock_gettime); prints nothing, exits 0 (2 after one line on stderr
 * without STACKSECRET or with a bad argument).
 */
#include <string.h>
#include "workload.h"

static volatile uint64_t sink;

static __attribute__((noinline)) void hold(const char *secret, double seconds)
{
	char buf[256];
	volatile char *keep = buf;

	snprintf(buf, sizeof(buf), "%s", secret);
	WL_SPIN(seconds, sink);
	sink += keep[0];	/* buf stays live, in memory, to the end */
}

int main(int argc, char **argv)
{
	const char *secret = getenv("STACKSECRET");
	double seconds = 2;

	if (!secret || !*secret) {
		fprintf(stderr, "stacksecret: set STACKSECRET\n");
		return 2;
	}
	if (wl_seconds_arg(argc, argv, "stacksecret", &seconds) < 0)
		return 2;
	hold(secret, seconds);
	return 0;
}
