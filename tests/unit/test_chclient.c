/*
 * test_chclient.c - chclient_query_lines() against a real HTTP peer on
 * 127.0.0.1 (a thread answering one request with canned bytes): lines
 * split across pieces arrive whole, a line past the bound fails the query
 * with one line instead of growing without end, and a long error answer
 * is read only as far as its message.  Hostile peers (issue 30): an answer
 * that never ends, one that announces 2 GB, one that stalls after its
 * headers, one that trickles forever and an endless error answer each end
 * the request within its limit (answer size, stall, deadline) with one
 * line naming the limit.
 */
#define _GNU_SOURCE 1	/* strcasestr */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "chclient.h"

struct peer {
	int lfd;
	int port;
	const char *status;	/* "200 OK" */
	enum { CANNED, ENDLESS, BIG_LENGTH, STALL, TRICKLE } mode;
	size_t body_len;
	char *body;
	pthread_t thread;
};

static int write_all(int fd, const void *p, size_t n)
{
	while (n) {
		/* the client may hang up mid-answer (a line too long): EPIPE,
		 * not SIGPIPE, which would end the whole test */
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w <= 0)
			return -1;
		p = (const char *)p + w;
		n -= (size_t)w;
	}
	return 0;
}

/* Read the request up to its body's end (Content-Length), then answer in
 * pieces of 1000 bytes so that lines are cut between writes. */
static void *peer_run(void *arg)
{
	struct peer *p = arg;
	char req[65536], hdr[256];
	size_t got = 0;
	int fd = accept(p->lfd, NULL, NULL);

	if (fd < 0)
		return NULL;
	for (;;) {
		ssize_t r = read(fd, req + got, sizeof(req) - 1 - got);
		char *end, *cl;

		if (r <= 0)
			break;
		got += (size_t)r;
		req[got] = 0;
		end = strstr(req, "\r\n\r\n");
		cl = strcasestr(req, "Content-Length:");
		if (end && (!cl || got >= (size_t)(end + 4 - req) + strtoul(cl + 15, NULL, 10)))
			break;
	}
	if (p->mode != CANNED) {
		char chunk[65536], c;

		/* no Content-Length (to the end of the connection), or one of
		 * 2 GB; then the body at full speed, nothing, or 10 bytes
		 * every 50 ms, until the client hangs up */
		snprintf(hdr, sizeof(hdr), "HTTP/1.1 %s\r\n%sConnection: close\r\n\r\n",
			 p->status, p->mode == BIG_LENGTH ? "Content-Length: 2147483648\r\n" : "");
		memset(chunk, 'a', sizeof(chunk));
		for (size_t i = 0; i < sizeof(chunk); i += 100)
			chunk[i] = '\n';
		if (p->body_len)
			memcpy(chunk, p->body, p->body_len);
		if (write_all(fd, hdr, strlen(hdr)) == 0) {
			if (p->mode == STALL)
				while (read(fd, &c, 1) > 0)
					;
			else if (p->mode == TRICKLE)
				while (write_all(fd, chunk, 10) == 0)
					usleep(50000);
			else
				while (write_all(fd, chunk, sizeof(chunk)) == 0)
					;
		}
		close(fd);
		return NULL;
	}
	snprintf(hdr, sizeof(hdr), "HTTP/1.1 %s\r\nContent-Length: %zu\r\n"
		 "Connection: close\r\n\r\n", p->status, p->body_len);
	if (write_all(fd, hdr, strlen(hdr)) == 0)
		for (size_t off = 0; off < p->body_len; off += 1000)
			if (write_all(fd, p->body + off, p->body_len - off < 1000 ?
				      p->body_len - off : 1000) < 0)
				break;
	close(fd);
	return NULL;
}

static void peer_start(struct peer *p, const char *status, const char *body, size_t len)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	p->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(p->lfd >= 0);
	assert_int_equal(bind(p->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(p->lfd, 1), 0);
	assert_int_equal(getsockname(p->lfd, (struct sockaddr *)&a, &alen), 0);
	p->port = ntohs(a.sin_port);
	p->status = status;
	p->mode = CANNED;
	p->body = malloc(len + 1);
	memcpy(p->body, body, len);
	p->body_len = len;
	assert_int_equal(pthread_create(&p->thread, NULL, peer_run, p), 0);
}

static void peer_stop(struct peer *p)
{
	pthread_join(p->thread, NULL);
	close(p->lfd);
	free(p->body);
}

struct seen {
	int n;
	size_t len[8];
	char first[64];
};

static int on_line(void *arg, char *line, struct error *e)
{
	struct seen *s = arg;

	(void)e;
	if (s->n < 8)
		s->len[s->n] = strlen(line);
	if (!s->n)
		snprintf(s->first, sizeof(s->first), "%s", line);
	s->n++;
	return 0;
}

/* Query the peer; 0 or -1 as chclient_query_lines() returned. */
static int query(struct peer *p, struct seen *s, struct error *e)
{
	struct chclient_url u;
	struct chclient_cred cred = { "default", "", { 0, 0, 0 } };
	struct chclient *c;
	char url[64];
	int ret;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", p->port);
	assert_int_equal(chclient_url_parse(url, &u, e), 0);
	c = chclient_new(&u, &cred, e);
	assert_non_null(c);
	ret = chclient_query_lines(c, "SELECT 1", on_line, s, e);
	chclient_free(c);
	return ret;
}

static void test_lines_across_pieces(void **state)
{
	/* 3 lines, the second 2500 bytes: cut by two piece boundaries */
	size_t n = 6 + 2500 + 1 + 4;
	char *body = malloc(n);
	struct peer p;
	struct seen s = { 0 };
	struct error e = { "" };

	(void)state;
	memcpy(body, "first\n", 6);
	memset(body + 6, 'x', 2500);
	memcpy(body + 2506, "\nend\n", 5);
	peer_start(&p, "200 OK", body, n);
	assert_int_equal(query(&p, &s, &e), 0);
	peer_stop(&p);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.first, "first");
	assert_int_equal(s.len[1], 2500);
	assert_int_equal(s.len[2], 3);
	free(body);
}

static void test_line_too_long(void **state)
{
	size_t n = (2U << 20) + 1;	/* one line of 2 MiB */
	char *body = malloc(n);
	struct peer p;
	struct seen s = { 0 };
	struct error e = { "" };

	(void)state;
	memset(body, 'y', n - 1);
	body[n - 1] = '\n';
	peer_start(&p, "200 OK", body, n);
	assert_int_equal(query(&p, &s, &e), -1);
	peer_stop(&p);
	assert_int_equal(s.n, 0);
	assert_non_null(strstr(e.msg, "a line of the answer is longer than 1048576 bytes"));
	assert_null(strchr(e.msg, '\n'));
	free(body);
}

static void test_long_error_answer(void **state)
{
	/* ClickHouse's exception text, then 4 MiB more: the message is
	 * still the exception's, read from a bounded prefix */
	static const char text[] = "Code: 62, e.displayText() = DB::Exception: Syntax error, "
				   "e.what() = DB::Exception\n";
	size_t n = sizeof(text) - 1 + (4U << 20);
	char *body = malloc(n);
	struct peer p;
	struct seen s = { 0 };
	struct error e = { "" };

	(void)state;
	memcpy(body, text, sizeof(text) - 1);
	memset(body + sizeof(text) - 1, 'z', n - (sizeof(text) - 1));
	peer_start(&p, "500 Internal Server Error", body, n);
	assert_int_equal(query(&p, &s, &e), -1);
	peer_stop(&p);
	assert_int_equal(s.n, 0);
	assert_non_null(strstr(e.msg, "Syntax error (ClickHouse error 62)"));
	free(body);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* A hostile peer in mode m answering chclient_query() (lines: 0) or
 * chclient_query_lines() (1) under limits of 1 MiB, a 3 s deadline and a
 * 1 s stall limit; the query must fail within max_s with msg in its error,
 * holding no answer. */
static void hostile(int m, const char *status, const char *body, int lines, const char *msg,
		    double max_s)
{
	struct chclient_url u;
	struct chclient_cred cred = { "default", "", { 1U << 20, 3, 1 } };
	struct chclient *c;
	struct sbuf out = { 0 };
	struct seen s = { 0 };
	struct error e = { "" };
	struct peer p;
	char url[64];
	double t0;
	int ret;

	peer_start(&p, status, body ? body : "", body ? strlen(body) : 0);
	p.mode = m;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", p.port);
	assert_int_equal(chclient_url_parse(url, &u, &e), 0);
	c = chclient_new(&u, &cred, &e);
	assert_non_null(c);
	t0 = now_s();
	ret = lines ? chclient_query_lines(c, "SELECT 1", on_line, &s, &e) :
		      chclient_query(c, "SELECT 1", &out, &e);
	t0 = now_s() - t0;
	chclient_free(c);	/* the connection closed: the peer's write fails */
	peer_stop(&p);
	print_message("%.2f s: %s\n", t0, e.msg);
	assert_int_equal(ret, -1);
	assert_non_null(strstr(e.msg, msg));
	assert_non_null(strstr(e.msg, url));
	assert_null(strchr(e.msg, '\n'));
	assert_null(out.s);
	assert_true(t0 < max_s);
}

static void test_endless_answer(void **state)
{
	(void)state;
	hostile(ENDLESS, "200 OK", NULL, 0, "the answer is longer than 1 MiB, the limit "
		"(STROBE_CLICKHOUSE_MAX_ANSWER_MB): connection closed", 2.5);
}

static void test_big_length(void **state)
{
	(void)state;
	hostile(BIG_LENGTH, "200 OK", NULL, 0, "the answer is longer than 1 MiB", 2.5);
}

static void test_stall_after_headers(void **state)
{
	(void)state;
	hostile(STALL, "200 OK", NULL, 0, "nothing received for 1 s, the limit "
		"(STROBE_CLICKHOUSE_STALL)", 2.9);
	hostile(STALL, "200 OK", NULL, 1, "nothing received for 1 s", 2.9);
}

static void test_trickle_deadline(void **state)
{
	(void)state;
	hostile(TRICKLE, "200 OK", NULL, 0, "no whole answer within 3 s, the limit "
		"(STROBE_CLICKHOUSE_TIMEOUT)", 5);
	/* streamed lines: any size, but not any time */
	hostile(ENDLESS, "200 OK", NULL, 1, "no whole answer within 3 s", 5);
}

static void test_endless_error(void **state)
{
	(void)state;
	/* the message from the first 64 KiB; the rest is not waited for */
	hostile(ENDLESS, "500 Internal Server Error", "Code: 62, e.displayText() = "
		"DB::Exception: Syntax error, e.what() = DB::Exception\n", 0,
		"Syntax error (ClickHouse error 62)", 2.5);
	hostile(ENDLESS, "500 Internal Server Error", "Code: 62, e.displayText() = "
		"DB::Exception: Syntax error, e.what() = DB::Exception\n", 1,
		"Syntax error (ClickHouse error 62)", 2.5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_across_pieces),
		cmocka_unit_test(test_line_too_long),
		cmocka_unit_test(test_long_error_answer),
		cmocka_unit_test(test_endless_answer),
		cmocka_unit_test(test_big_length),
		cmocka_unit_test(test_stall_after_headers),
		cmocka_unit_test(test_trickle_deadline),
		cmocka_unit_test(test_endless_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
