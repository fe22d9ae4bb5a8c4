/*
 * tsc.c - TSC <-> CLOCK_MONOTONIC conversion (see tsc.h).
 *
 * The kernel's cyc2ns scale gives ns = cyc * mult >> shift.  Applied to
 * differences from a reference pair it needs 128-bit intermediates: a day
 * of 3 GHz cycles times a 32-bit mult overflows 64 bits.
 */
#include "config.h"
#include "tsc.h"
#include "util.h"

typedef unsigned __int128 u128;

void tsc_conv_init(struct tsc_conv *c, uint32_t mult, uint16_t shift,
		   uint64_t ref_tsc, uint64_t ref_ns, const char *source)
{
	c->mult = mult;
	c->shift = shift;
	c->ref_tsc = ref_tsc;
	c->ref_ns = ref_ns;
	c->source = source;
}

uint64_t tsc_to_ns(const struct tsc_conv *c, uint64_t tsc)
{
	if (!c->mult)
		return 0;
	if (tsc >= c->ref_tsc)
		return c->ref_ns + (uint64_t)(((u128)(tsc - c->ref_tsc) * c->mult) >> c->shift);
	return c->ref_ns - (uint64_t)(((u128)(c->ref_tsc - tsc) * c->mult) >> c->shift);
}

uint64_t tsc_from_ns(const struct tsc_conv *c, uint64_t ns)
{
	if (!c->mult)
		return 0;
	if (ns >= c->ref_ns)
		return c->ref_tsc + (uint64_t)(((u128)(ns - c->ref_ns) << c->shift) / c->mult);
	return c->ref_tsc - (uint64_t)(((u128)(c->ref_ns - ns) << c->shift) / c->mult);
}

int tsc_conv_calibrate(struct tsc_conv *c, uint64_t tsc0, uint64_t ns0,
		       uint64_t tsc1, uint64_t ns1)
{
	u128 mult;
	uint16_t shift = 32;

	if (tsc1 <= tsc0 || ns1 <= ns0)
		return -1;
	/* mult = ns/cyc << shift, with shift lowered until mult fits 32 bits */
	for (;;) {
		mult = ((u128)(ns1 - ns0) << shift) / (tsc1 - tsc0);
		if (mult <= UINT32_MAX || shift == 0)
			break;
		shift--;
	}
	if (mult == 0 || mult > UINT32_MAX)
		return -1;
	tsc_conv_init(c, (uint32_t)mult, shift, tsc0, ns0, "calibrated");
	return 0;
}

void tsc_reference(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 16; i++) {
		uint64_t a = clock_monotonic_ns();
		uint64_t t = tsc_read();
		uint64_t b = clock_monotonic_ns();

		if (b - a < best) {
			best = b - a;
			*tsc = t;
			*ns = a + (b - a) / 2;
		}
	}
}
