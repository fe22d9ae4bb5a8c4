/*
 * util.h - small helpers every strobe program uses: error reporting by
 * value, checked allocation, growable arrays, clocks and string escapes.
 *
 * Library functions never print: they return -1 (or NULL) and describe
 * the problem in a struct error that the caller shows as one line.
 */
#ifndef STROBE_UTIL_H
#define STROBE_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdarg.h>
#include <errno.h>
#include <sys/stat.h>

struct error {
	char msg[512];
};

/* Format msg into e (if non-NULL); always returns -1. */
int error_set(struct error *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Prefix the message already in e with "fmt: ". Returns -1. */
int error_prefix(struct error *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Allocation that dies with a message on failure (out of memory). */
void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Grow an array *p of *cap elements of size sz to hold at least n. */
void array_grow(void *pp, size_t *cap, size_t n, size_t sz);
#define ARRAY_GROW(p, cap, n) array_grow(&(p), &(cap), (n), sizeof(*(p)))

/* Clocks, ns. */
uint64_t clock_monotonic_ns(void);
uint64_t clock_realtime_ns(void);

/* Read the TSC (x86), CNTVCT_EL0 (arm64), or 0 where there is none. */
uint64_t tsc_read(void);

/* Parse a time "1.5", "1.5s", "250ms", "20us", "100ns" into ns. -1 bad. */
int parse_duration_ns(const char *s, int64_t *ns);
/* Parse an unsigned decimal or 0x hex number; -1 on junk or overflow. */
int parse_u64(const char *s, uint64_t *v);

/* Write s as a JSON string literal (quotes included). */
void json_write_string(FILE *f, const char *s);
/*
 * s as one CSV field (RFC 4180): in double quotes when it holds a comma,
 * quote, CR or LF or starts or ends with a space, a quote doubled.  With
 * CSV_TEXT (a text column: names, paths, never a number) a value that a
 * spreadsheet would take for a formula, one starting with = + - @ TAB or
 * CR, gets a single quote in front (OWASP's CSV injection advice).
 * csv_escape writes no NUL and returns the length, at most
 * CSV_ESCAPE_MAX(strlen(s)); csv_write_field writes the field to f.
 */
#define CSV_TEXT 1
#define CSV_ESCAPE_MAX(len) (2 * (len) + 3)
size_t csv_escape(char *dst, const char *s, int flags);
void csv_write_field(FILE *f, const char *s, int flags);
/*
 * Write s for a gnuplot script as single-quoted string constants: no
 * backquote command substitution, @ macro or backslash escape happens
 * inside one.  A single quote in s becomes '."'".' (gnuplot 5.4's scanner
 * mishandles the doubled '' right after an opening quote or another ''),
 * so the result is constants joined by '.', valid wherever gnuplot takes a
 * string expression.  Control characters become spaces.  The one way any
 * string from data goes into a gnuplot script.
 */
void gnuplot_write_string(FILE *f, const char *s);

/*
 * Text for a terminal.  Names, paths, problems and anything else a user, a
 * profiled process or a server controls may hold bytes a terminal obeys
 * instead of showing: C0 controls (ESC starts a sequence that can set the
 * title, clear the screen or forge a line; newline and CR forge lines), DEL,
 * the C1 controls U+0080..U+009F (in UTF-8, and as the lone bytes 0x80-0x9f
 * an 8-bit terminal takes for CSI, OSC...), and the Unicode controls that
 * break or reorder a line (U+2028, U+2029, the bidi embeddings, overrides
 * and isolates).  Each of those, and each byte that does not start valid
 * UTF-8, is shown as one '?'; printable UTF-8 is kept as it is.
 *
 * text_char: the length (1-4) of the character at p (1 for a byte that
 * starts no valid UTF-8) and whether it is shown as itself (*ok).  text_escape: s into dst (cap bytes, NUL-terminated,
 * cut at a character); returns dst.  text_sanitize: the same, in place.
 * text_write_string: s to f.  TEXT_SAFE(s) is text_escape into a buffer
 * of the caller's block, for one printf argument.
 */
size_t text_char(const unsigned char *p, int *ok);
char *text_escape(char *dst, size_t cap, const char *s);
void text_sanitize(char *s);
void text_write_string(FILE *f, const char *s);
#define TEXT_SAFE_MAX 4352
#define TEXT_SAFE(s) text_escape((char[TEXT_SAFE_MAX]){0}, TEXT_SAFE_MAX, (s))

/* Read a whole small file (e.g. from /proc) into a NUL-terminated buffer. */
char *file_read_all(const char *path, size_t *len);

/*
 * Open for reading a regular file that a user or a profiled process names,
 * without opening anything else.  The lookup is O_PATH (openat2 with
 * resolve, its RESOLVE_* flags; the last component is not followed unless
 * flags has OPEN_UNTRUSTED_FOLLOW, for magic links such as
 * /proc/PID/map_files/START-END),
 * so a device, FIFO or socket at the end is never opened: no driver's
 * open runs (a watchdog's, a tape's), nothing blocks.  Only when fstat
 * finds a regular file is that same inode opened, O_RDONLY | O_NONBLOCK |
 * O_NOCTTY, through /proc/self/fd.  st gets the file's status, also when
 * it is not regular.  Before Linux 5.6 (no openat2), a resolve of only
 * RESOLVE_NO_SYMLINKS, RESOLVE_NO_MAGICLINKS and RESOLVE_BENEATH (a
 * relative path) is done by walk_nofollow(); any other fails with ENOSYS.
 * Returns the fd, or -1 with errno: the lookup's,
 * ELOOP for a symlink at the end not followed (as open(2) with O_NOFOLLOW),
 * EFTYPE_NOT_REGULAR (st says what it is), or, with OPEN_UNTRUSTED_NO_FUSE,
 * EFTYPE_FUSE for a file on FUSE (fd_on_fuse(), checked before anything
 * asks its daemon; st then zeroed).  The one way strobed opens such a
 * file by path.
 */
#define EFTYPE_NOT_REGULAR EMEDIUMTYPE
#define EFTYPE_FUSE EREMOTE
#define EFTYPE_FUSE_TEXT "on a FUSE file system, not read (its daemon answers when it pleases)"
#define OPEN_UNTRUSTED_FOLLOW	1
#define OPEN_UNTRUSTED_NO_FUSE	2
int open_regular_untrusted(int dirfd, const char *path, uint64_t resolve, int flags,
			   struct stat *st);

/*
 * Look path up from dirfd (from / when absolute) one component at a time,
 * each O_PATH | O_NOFOLLOW: a symlink anywhere fails with ELOOP (but the
 * last component's, which is returned as is), ".." with EXDEV, a file on
 * the way that is no directory with ENOTDIR.  Each directory is passed to
 * dir_ok, when given, before it is looked in; its nonzero stops the walk
 * (EACCES).  An O_PATH handle of the last component (nothing opened for
 * real: no device's open, no FIFO's wait), or -1 with errno.  openat2's
 * RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH by hand, for kernels before 5.6,
 * and the walk of lib/ingest/public.c.
 */
int walk_nofollow(int dirfd, const char *path, int (*dir_ok)(int dfd, void *arg), void *arg);

/*
 * 1 if the file at fd (any handle, O_PATH too) is on a FUSE file system
 * (fuse, fuse.*, fuseblk), else 0; -1 if /proc cannot say.  Read from
 * /proc/self/fdinfo (its mount id) and /proc/self/mountinfo, so without
 * a request to the file system: its daemon, perhaps a user's, answers a
 * stat, an open or a read of root's when it pleases, or never.
 */
int fd_on_fuse(int fd);

/* One message of len bytes on the unix socket sock, with the descriptor
 * fd passed along (SCM_RIGHTS) unless fd is -1; MSG_NOSIGNAL, retried on
 * EINTR.  sendmsg's result. */
long fd_send_with(int sock, const void *buf, size_t len, int fd);

/* Close every descriptor but keep (a child that drops its privileges). */
void fd_close_others(int keep);

/* A name for the file open at fd (its /proc/self/fd link), for messages. */
const char *util_fd_name(int fd, char *buf, size_t len);

/* The last component of path, a pointer into it: path itself when it has
 * no slash or ends with one. */
const char *util_path_base(const char *path);

/* mkdir -p with mode; 0 or -1 with errno. */
int mkdir_p(const char *path, unsigned mode);

/* A growing string: append with sbuf_addf() or sbuf_add(); s is
 * NUL-terminated once anything was added; free(s) when done. */
struct sbuf {
	char *s;
	size_t n, cap;
};
void sbuf_addf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append the n bytes at p (which may hold NULs). */
void sbuf_add(struct sbuf *b, const void *p, size_t n);

/* Write all len bytes of buf to fd, across short writes and EINTR:
 * 0, or -1 with errno. */
int fd_write_all(int fd, const void *buf, size_t len);

/* pread len bytes at off, across short reads and EINTR: 1 when all were
 * read, 0 when the file ends first, -1 with errno. */
int fd_pread_all(int fd, void *buf, size_t len, uint64_t off);

/* A 64-bit finaliser (MurmurHash3's fmix64): spreads keys for hash tables. */
uint64_t hash_mix64(uint64_t x);

/* The one string hash: FNV-1a over the bytes of s (NULL: none), continued
 * from h.  Start from HASH_STRING_INIT; hash several strings by passing
 * each result on.  Its low bits are weak alone: hash_mix64() the result
 * for a table that masks them. */
#define HASH_STRING_INIT 0xcbf29ce484222325ULL
#define HASH_STRING_PRIME 0x100000001b3ULL
uint64_t hash_string(uint64_t h, const char *s);

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

#endif
