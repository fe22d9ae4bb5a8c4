/*
 * uparse.c - build-ids and JIT symbols parsed in the ingest worker (see
 * uparse.h): the worker's side (uparse_serve), the checks of its answers
 * and the parent's calls.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "symworker.h"
#include "uparse.h"
#include "uworker.h"

/* --- the worker --- */

struct wstate {			/* the last JIT file parsed, for its next chunks */
	uint64_t seq;
	int rc;
	struct jitmap m;
	struct jitdump_info info;
	char msg[160];
};

static size_t serve_build_id(void *out)
{
	struct uparse_rep r;
	uint8_t id[BUILD_ID_MAX];
	struct error e;
	int fd = symworker_ext_fd(1);

	memset(&r, 0, sizeof(r));
	r.rc = -1;
	if (fd >= 0) {
		r.rc = hashkey_build_id_fd(fd, id, sizeof(id), &e);
		close(fd);
	}
	memcpy(out, &r, sizeof(r));
	if (r.rc > 0)
		memcpy((unsigned char *)out + sizeof(r), id, (size_t)r.rc);
	return sizeof(r) + (r.rc > 0 ? (size_t)r.rc : 0);
}

static void jit_parse(struct wstate *w, const struct uparse_req *q)
{
	struct error e;
	void *buf = NULL;
	int fd;

	jitmap_free(&w->m);
	memset(&w->info, 0, sizeof(w->info));
	w->msg[0] = 0;
	w->seq = q->seq;
	w->rc = -1;
	fd = symworker_ext_fd(1);
	if (fd < 0 || q->size > JITDUMP_FILE_MAX) {
		snprintf(w->msg, sizeof(w->msg), "the ingest worker got no file");
		goto out;
	}
	if (q->size) {
		buf = mmap(NULL, q->size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (buf == MAP_FAILED) {
			buf = NULL;
			snprintf(w->msg, sizeof(w->msg), "mmap: %s", strerror(errno));
			goto out;
		}
	}
	if (q->kind == UPARSE_JITMAP) {
		jitmap_parse(buf ? buf : "", q->size, &w->m);
		w->rc = 0;
	} else {
		w->rc = jitdump_parse(buf ? buf : (const void *)"", q->size, q->pid, q->not_before,
				      &w->m, &w->info, &e);
		if (w->rc < 0)
			snprintf(w->msg, sizeof(w->msg), "%.150s", e.msg);
	}
out:
	if (buf)
		munmap(buf, q->size);
	if (fd >= 0)
		close(fd);
}

size_t uparse_serve(void **state, const void *req, size_t len, void *out, size_t cap)
{
	struct wstate *w = *state;
	unsigned char *o = out;
	struct uparse_req q;
	struct uparse_rep r;
	size_t at;

	if (!w)
		w = *state = xcalloc(1, sizeof(*w));
	memset(&r, 0, sizeof(r));
	r.rc = -1;
	if (len != sizeof(q) || cap < sizeof(r))
		goto bad;
	memcpy(&q, req, sizeof(q));
	if (q.kind == UPARSE_BUILD_ID)
		return cap < sizeof(r) + BUILD_ID_MAX ? 0 : serve_build_id(out);
	if (q.kind != UPARSE_JITMAP && q.kind != UPARSE_JITDUMP)
		goto bad;
	if (q.from == 0 || q.seq != w->seq)
		jit_parse(w, &q);
	r.rc = w->rc;
	r.total = w->m.nr;
	r.dropped = w->m.dropped;
	r.version = w->info.version;
	r.elf_mach = w->info.elf_mach;
	r.jpid = w->info.pid;
	r.swapped = (uint32_t)w->info.swapped;
	r.timestamp = w->info.timestamp;
	r.flags = w->info.flags;
	r.records = w->info.records;
	r.early = w->info.early;
	snprintf(r.msg, sizeof(r.msg), "%s", w->msg);
	at = sizeof(r);
	for (uint64_t i = q.from; i < w->m.nr && r.nr < UPARSE_JIT_CHUNK; i++) {
		const struct jitmap_sym *s = &w->m.syms[i];
		struct uparse_sym us = { .start = s->start, .size = s->size,
					 .load_ns = s->load_ns };
		size_t nl = s->name ? strlen(s->name) : 0;

		if (at + sizeof(us) + nl > cap)
			break;
		us.name_len = (uint32_t)nl;
		memcpy(o + at, &us, sizeof(us));
		memcpy(o + at + sizeof(us), s->name, nl);
		at += sizeof(us) + nl;
		r.nr++;
	}
	memcpy(out, &r, sizeof(r));
	return at;
bad:
	memcpy(out, &r, MIN(cap, sizeof(r)));
	return MIN(cap, sizeof(r));
}

/* --- the checks of its answers --- */

int uparse_check_build_id(const void *rep, size_t n, size_t cap, uint8_t *id)
{
	struct uparse_rep r;

	if (n < sizeof(r))
		return -1;
	memcpy(&r, rep, sizeof(r));
	if (r.rc < -1 || r.rc > BUILD_ID_MAX || (size_t)MAX(r.rc, 0) > cap ||
	    n != sizeof(r) + (size_t)MAX(r.rc, 0))
		return -1;
	if (r.rc > 0)
		memcpy(id, (const unsigned char *)rep + sizeof(r), (size_t)r.rc);
	return r.rc;
}

int uparse_check_jit(const void *rep, size_t n, uint64_t from, uint64_t total, struct jitmap *m)
{
	const unsigned char *b = rep;
	struct uparse_rep r;
	size_t at = sizeof(r), old = m->nr;

	if (n < sizeof(r))
		return -1;
	memcpy(&r, rep, sizeof(r));
	if (memchr(r.msg, 0, sizeof(r.msg)) == NULL || (r.rc != 0 && r.rc != -1) ||
	    r.total > JITMAP_SYMS_MAX || (total != (uint64_t)-1 && r.total != total) ||
	    from != m->nr || r.nr > UPARSE_JIT_CHUNK || r.nr > r.total - MIN(from, r.total) ||
	    (r.rc < 0 && r.total) || (from < r.total && r.nr == 0))
		return -1;
	m->syms = xrealloc(m->syms, (old + r.nr + 1) * sizeof(*m->syms));
	for (uint32_t i = 0; i < r.nr; i++) {
		struct uparse_sym us;
		struct jitmap_sym *s = &m->syms[m->nr];
		const unsigned char *name;

		if (n - at < sizeof(us))
			goto bad;
		memcpy(&us, b + at, sizeof(us));
		at += sizeof(us);
		if (us.name_len > JITMAP_NAME_MAX || n - at < us.name_len ||
		    us.size > JITMAP_SIZE_MAX || us.start + us.size < us.start)
			goto bad;
		name = b + at;
		for (uint32_t k = 0; k < us.name_len; k++)
			if (name[k] < 0x20 || name[k] == 0x7f)
				goto bad;
		s->start = us.start;
		s->size = us.size;
		s->load_ns = us.load_ns;
		s->name = xmalloc(us.name_len + 1);
		memcpy(s->name, name, us.name_len);
		s->name[us.name_len] = 0;
		at += us.name_len;
		m->nr++;
	}
	if (at != n)
		goto bad;
	m->dropped = r.dropped > JITMAP_FILE_MAX ? JITMAP_FILE_MAX : (size_t)r.dropped;
	return 0;
bad:
	while (m->nr > old)
		free(m->syms[--m->nr].name);
	return -1;
}

/* --- the parent's calls --- */

int uparse_build_id(struct uworker *u, int fd, uint8_t *id, size_t cap, struct error *e)
{
	struct uparse_req q = { .kind = UPARSE_BUILD_ID };
	unsigned char rep[sizeof(struct uparse_rep) + BUILD_ID_MAX];
	ssize_t n;
	int rc;

	n = uworker_call(u, &q, sizeof(q), rep, sizeof(rep), fd, e);
	if (n < 0)
		return -2;
	rc = uparse_check_build_id(rep, (size_t)n, cap, id);
	if (rc < -1 || (rc == -1 && n != sizeof(struct uparse_rep))) {
		uworker_discard(u);
		error_set(e, "the ingest worker's answer for a build-id did not make sense");
		return -2;
	}
	if (rc == -1) {
		error_set(e, "the ingest worker could not read the binary's ELF headers");
		return -2;
	}
	return rc;
}

int uparse_jit(struct uworker *u, enum uparse_kind kind, const void *buf, size_t len,
	       uint32_t pid, uint64_t not_before, struct jitmap *m, struct jitdump_info *info,
	       struct error *e)
{
	static uint64_t seq;	/* ingests run in threads of their own */
	struct uparse_req q = { .kind = kind, .pid = pid,
				.seq = __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED),
				.not_before = not_before, .size = len };
	uint64_t total = (uint64_t)-1;
	struct uparse_rep r;
	unsigned char *rep;
	int fd, ret = -2;

	memset(m, 0, sizeof(*m));
	fd = memfd_create("strobe-jit", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return error_set(e, "memfd_create: %s", strerror(errno)), -2;
	if ((len && fd_write_all(fd, buf, len) < 0) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
		error_set(e, "memfd: %s", strerror(errno));
		close(fd);
		return -2;
	}
	rep = xmalloc(SYMWORKER_EXT_MAX);
	for (;;) {
		ssize_t n;

		q.from = m->nr;
		n = uworker_call(u, &q, sizeof(q), rep, SYMWORKER_EXT_MAX, fd, e);
		if (n < 0)
			goto fail;
		if (uparse_check_jit(rep, (size_t)n, q.from, total, m) < 0) {
			uworker_discard(u);
			error_set(e, "the ingest worker's answer did not make sense");
			goto fail;
		}
		memcpy(&r, rep, sizeof(r));
		total = r.total;
		if (m->nr >= total)
			break;
	}
	if (info) {
		memset(info, 0, sizeof(*info));
		info->version = r.version;
		info->elf_mach = r.elf_mach;
		info->pid = r.jpid;
		info->swapped = r.swapped != 0;
		info->timestamp = r.timestamp;
		info->flags = r.flags;
		info->records = (size_t)MIN(r.records, (uint64_t)SIZE_MAX);
		info->early = (size_t)MIN(r.early, (uint64_t)SIZE_MAX);
	}
	ret = r.rc;
	if (ret < 0)
		error_set(e, "%s", r.msg);
	goto out;
fail:
	jitmap_free(m);
	memset(m, 0, sizeof(*m));
out:
	free(rep);
	close(fd);
	return ret;
}
