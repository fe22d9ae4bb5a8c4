/*
 * nocfi.c - a library built without frame pointers and without unwind
 * tables (no .eh_frame entry for its code): test_unwind dlopens it and
 * samples a stack through it, which must stop there ("no CFI"), not go on
 * with a guessed caller.
 */
volatile int nocfi_sink;

int nocfi_mid(int (*cb)(void *), void *arg)
{
	int r = cb(arg);

	nocfi_sink += r;
	return r + 1;
}
