# Stress of the driver (tests/kernel/stress.c): a fork storm at the highest
# sampling rate for STRESS_SECONDS (default 30), rmmod during a session,
# close in the middle of a session, racing ioctls and mmap.  Each subtest is
# its own process; the module must still unload afterwards (guest/init).
rc=0
for t in storm rmmod close race mmap-race; do
	/stress -t "${STRESS_SECONDS:-30}" "$t" || rc=1
done
exit $rc
