# Functional checks of the driver through its ABI (tests/kernel/reader.c).
exec /reader ${NFAULTS:-16384}
