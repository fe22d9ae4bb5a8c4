/*
 * uiflame.c - /api/flame of the explorer (uiapi_int.h): strobe export
 * --format folded of a window, from the last session's flame index
 * (flameindex.h) while that session is unchanged, else from
 * stacks_window(); with color_by= the boxes' metric as JSON
 * (flamemetric.h); with where= a condition's samples, from scratch.
 */
#include "config.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "flame.h"
#include "flameindex.h"
#include "flamemetric.h"
#include "stacks.h"
#include "uiapi_int.h"

/* The flame index of the last session asked (flameindex.h): a window of
 * it costs the scan of its samples, its stacks read and named once.
 * uiapi_handle()'s calls are serialised (uiapi.h), and so its uses. */
static struct flame_index *flame_cache;

/* The folded text of tree t (or of flame_cache's last window) into r. */
static void flame_reply(const struct flame_tree *t, struct uiapi_reply *r)
{
	struct error e = { "" };
	struct uiapi_out out;

	uiapi_out_open(&out);
	if ((t ? flame_write_folded(t, out.f, &e) :
		 flame_index_write_folded(flame_cache, out.f, &e)) < 0) {
		fclose(out.f);
		free(out.buf);
		uiapi_fail(r, 500, "%s", e.msg);
		return;
	}
	uiapi_out_done(&out, r, TYPE_TEXT);
}

/* /api/flame from the session's flame index: 1 when answered (r set), 0
 * when the index cannot answer (the request is made from scratch). */
static int flame_indexed(struct source *src, const struct report_opts *o,
			 const struct db_session *s, int64_t from, int64_t to, const char *event,
			 struct uiapi_reply *r)
{
	const struct flame_tree *t;
	const struct stack_set *set;
	struct error e = { "" };
	int what = FLAME_SAMPLES, rc;

	if (flame_cache && !flame_index_current(flame_cache, s)) {
		flame_index_free(flame_cache);
		flame_cache = NULL;
	}
	if (!flame_cache) {
		if (!db_session_complete(s))
			return 0;	/* still growing: read as it is now */
		if (!(flame_cache = flame_index_make(src->db, o, &e)))
			return 0;	/* the scratch path says why */
	}
	set = flame_index_set(flame_cache);
	if (!set->call_graph[0])
		return 0;
	if (event && (what = flame_event_index(set, event, &e)) < 0) {
		uiapi_fail(r, 400, "bad event: %s", e.msg);
		return 1;
	}
	rc = flame_index_window(flame_cache, src->db, from, to, what, &t, &e);
	if (rc > 0)
		return 0;
	if (rc < 0) {
		uiapi_fail(r, 422, "%s", e.msg);
		return 1;
	}
	flame_reply(NULL, r);
	return 1;
}

/* color_by=: the metric's JSON (flamemetric.h) of set's tree into r, the
 * metric's "seconds" o's window [from, to). */
static void flame_metric_reply(struct flame_metric *m, const struct stack_set *set,
			       struct report_opts *o, int64_t from, int64_t to, int what,
			       struct uiapi_reply *r)
{
	struct flame_tree *t = NULL;
	struct error e = { "" };
	struct uiapi_out out;

	/* "seconds": the window, cut at the session's end (as the command's) */
	o->has_from = o->has_to = 1;
	o->from_ns = from;
	o->to_ns = to;
	if (flame_metric_bind(m, &set->session, report_metric_seconds(&set->session, o),
			      "color_by", &e) < 0) {
		uiapi_fail(r, 400, "%s", e.msg);
		return;
	}
	if (!(t = flame_tree_build_sums(set, what, &e))) {
		uiapi_fail(r, 422, "%s", e.msg);
		return;
	}
	flame_metric_values(m, t);
	flame_metric_scale(m, t, 1, 1);
	uiapi_out_open(&out);
	if (flame_metric_write_json(m, t, out.f, &e) < 0) {
		fclose(out.f);
		free(out.buf);
		uiapi_fail(r, 500, "%s", e.msg);
	} else {
		uiapi_out_done(&out, r, TYPE_JSON);
	}
	flame_tree_free(t);
}

/* strobe export --format folded of [from, to): stacks_window() and the
 * folded writer of flame.h, or the same tree from the session's flame
 * index; with color_by=METRIC|EXPR (from stacks_window(): the index keeps
 * no sums) the JSON of flamemetric.h, that folded text and each frame's
 * value and colour. */
int uiapi_flame(struct source *src, const struct uiapi_args *a, struct uiapi_reply *r)
{
	struct flame_metric m = { 0 };
	const char *cb;
	struct report_opts o = { .by = REPORT_BY_SYMBOL, .pid = -1, .mode = REPORT_ALL };
	struct db_session *s = xmalloc(sizeof(*s));
	struct stack_set *set = NULL;
	struct flame_tree *t = NULL;
	struct error e = { "" };
	const char *event;
	int64_t from, to;
	int what = FLAME_SAMPLES, on = 0;
	struct where w;

	if (uiapi_local_only(src, "a flame graph", r) || uiapi_arg_where(src, a, &w, &on, r) ||
	    uiapi_arg_session(src, a, "session", 0, s, r) ||
	    uiapi_arg_window(a, "from", "to", s, &from, &to, r) || uiapi_arg_str(a, "event", &event, r) ||
	    uiapi_arg_str(a, "color_by", &cb, r))
		goto out;
	if (cb && flame_metric_parse(&m, cb, "color_by", &e) < 0) {
		uiapi_fail(r, 400, "%s", e.msg);
		goto out;
	}
	o.session = s->id;
	if (on) {
		/* the index holds no condition (nor sums for color_by): such
		 * a window is read from scratch */
		o.where = &w;
		if (uiapi_where_ready_window(src, &w, s, &o, from, to, r))
			goto out;
	} else if (!cb && flame_indexed(src, &o, s, from, to, event, r)) {
		goto out;
	}
	if (!(set = stacks_window(src->db, &o, from, to, &e))) {
		uiapi_fail(r, 422, "%s", e.msg);
		goto out;
	}
	if (!set->call_graph[0]) {
		uiapi_fail(r, 422, "session %lld has no call stacks: record with -g",
		     (long long)set->session.id);
		goto out;
	}
	if (event && (what = flame_event_index(set, event, &e)) < 0) {
		uiapi_fail(r, 400, "bad event: %s", e.msg);
		goto out;
	}
	if (cb) {
		flame_metric_reply(&m, set, &o, from, to, what, r);
		goto out;
	}
	if (!(t = flame_tree_build(set, what, &e))) {
		uiapi_fail(r, 422, "%s", e.msg);
		goto out;
	}
	flame_reply(t, r);
out:
	flame_metric_free(&m);
	flame_tree_free(t);
	if (set)
		stacks_free(set);
	if (on)
		where_free(&w);
	free(s);
	return 1;
}

void uiapi_release(void)
{
	flame_index_free(flame_cache);
	flame_cache = NULL;
}
