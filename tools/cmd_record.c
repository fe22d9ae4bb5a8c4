/*
 * cmd_record.c - strobe record: one system-wide session around a command.
 *
 * Uses the strobed that answers on the socket when it writes the database
 * asked for; otherwise starts a private strobed (on --db, with a socket in
 * a private directory), and shuts it down afterwards.  Exits with the
 * command's status.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <libgen.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cmd.h"
#include "control.h"

struct private_daemon {
	pid_t pid;
	char dir[64];
	char socket[128];
	char log[128];
};

/* strobed next to this strobe (build tree or install), else from PATH. */
static char *find_strobed(void)
{
	char self[PATH_MAX], *dir;
	const char *env = getenv("STROBED");
	static const char *const rel[] = { "strobed", "../daemon/strobed", "../sbin/strobed" };
	ssize_t n;

	if (env && *env)
		return xstrdup(env);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = 0;
		dir = dirname(self);
		for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
			char *p = xasprintf("%s/%s", dir, rel[i]);

			if (access(p, X_OK) == 0)
				return p;
			free(p);
		}
	}
	return xstrdup("strobed");
}

/* The last line of strobed's log, without its "strobed: " or
 * "strobed[PID] DATE TIME: " prefix; "" if there is none. */
static void log_tail(const char *log, char *buf, size_t len)
{
	char *s = file_read_all(log, NULL), *last = NULL, *p;

	buf[0] = 0;
	if (!s)
		return;
	for (p = strtok(s, "\n"); p; p = strtok(NULL, "\n"))
		last = p;
	if (last) {
		if (!strncmp(last, "strobed: ", 9))
			last += 9;
		else if (!strncmp(last, "strobed[", 8) && strchr(last, ']') &&
			 strstr(strchr(last, ']'), ": "))
			last = strstr(strchr(last, ']'), ": ") + 2;
		snprintf(buf, len, "%s", last);
	}
	free(s);
}

static void print_log_tail(const char *log)
{
	char last[512];

	log_tail(log, last, sizeof(last));
	if (last[0])
		fprintf(stderr, "strobe record: strobed: %s\n", last);
}

static int daemon_start(struct private_daemon *pd, const char *db, struct error *e)
{
	char *strobed = find_strobed();

	snprintf(pd->dir, sizeof(pd->dir), "/tmp/strobe-record.XXXXXX");
	if (!mkdtemp(pd->dir)) {
		free(strobed);
		return error_set(e, "mkdtemp: %s", strerror(errno));
	}
	snprintf(pd->socket, sizeof(pd->socket), "%s/strobed.sock", pd->dir);
	snprintf(pd->log, sizeof(pd->log), "%s/strobed.log", pd->dir);
	pd->pid = fork();
	if (pd->pid < 0) {
		free(strobed);
		return error_set(e, "fork: %s", strerror(errno));
	}
	if (pd->pid == 0) {
		int fd = open(pd->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (fd >= 0) {
			dup2(fd, 2);
			close(fd);
		}
		execlp(strobed, strobed, "--foreground", "--db", db, "--socket", pd->socket,
		       (char *)NULL);
		fprintf(stderr, "cannot run %s: %s\n", strobed, strerror(errno));
		_exit(127);
	}
	free(strobed);
	/* wait for it to answer, or to die */
	for (int i = 0; i < 1000; i++) {
		struct proto_msg resp;
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		int status;

		if (control_simple(pd->socket, "ping", &resp, NULL) == 0) {
			proto_free(&resp);
			return 0;
		}
		if (waitpid(pd->pid, &status, WNOHANG) == pd->pid) {
			char last[400];

			pd->pid = 0;
			log_tail(pd->log, last, sizeof(last));	/* one line: its reason */
			return error_set(e, "strobed did not start: %s",
					 last[0] ? last : "it exited without saying why");
		}
		nanosleep(&ts, NULL);
	}
	return error_set(e, "the private strobed did not answer on %s within 10 s", pd->socket);
}

static void daemon_stop(struct private_daemon *pd)
{
	struct proto_msg resp;
	int status;

	if (pd->pid > 0) {
		if (control_simple(pd->socket, "shutdown", &resp, NULL) == 0)
			proto_free(&resp);
		else
			kill(pd->pid, SIGTERM);
		waitpid(pd->pid, &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			print_log_tail(pd->log);
	}
	unlink(pd->socket);
	unlink(pd->log);
	rmdir(pd->dir);
}

/* Does the daemon on socket write db? (NULL db: any will do) */
static int daemon_usable(const char *socket, const char *db)
{
	struct proto_msg resp;
	const char *theirs;
	char a[PATH_MAX], b[PATH_MAX];
	int ok;

	if (control_simple(socket, "ping", &resp, NULL) < 0)
		return 0;
	theirs = proto_get(&resp, "db");
	ok = !db || (theirs && realpath(theirs, a) && realpath(db, b) && !strcmp(a, b));
	proto_free(&resp);
	return ok;
}

static int run_command(char **argv, int *status)
{
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(argv[0], argv);
		fprintf(stderr, "strobe record: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

static const struct option record_long[] = {
	START_LONG_OPTIONS,
	{ "db", required_argument, NULL, 'd' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int cmd_record(int argc, char **argv)
{
	struct private_daemon pd = { 0 };
	struct start_opts o;
	struct proto_msg resp;
	const char *db = NULL;
	struct error e;
	long long id;
	int c, r, status = 0, ret;

	start_opts_init(&o);
	while ((c = getopt_long(argc, argv, "+" START_SHORT_OPTIONS "h", record_long, NULL)) != -1) {
		if (c == 'd') {
			db = optarg;
			continue;
		}
		if (c == 'h') {
			printf("usage: strobe record " START_USAGE " [--db PATH] -- CMD [ARGS...]\n"
			       "Record a system-wide session while CMD runs.\n"
			       START_HELP
			       "  --db PATH            the database (a private strobed is started "
			       "on it\n"
			       "                       when none serves it)\n");
			return 0;
		}
		r = start_opts_parse(&o, c, optarg, "record");
		if (r < 0)
			return 2;
		if (r == 0) {
			fprintf(stderr, "usage: strobe record " START_USAGE " [--db PATH] -- CMD [ARGS...]\n");
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "strobe record: no command given: strobe record [OPTIONS] -- CMD [ARGS...]\n");
		return 2;
	}
	if (start_opts_check(&o, "record") < 0)
		return 2;
	if (!daemon_usable(o.socket, db)) {
		if (daemon_start(&pd, db ? db : cmd_default_db(), &e) < 0) {
			fprintf(stderr, "strobe record: %s\n", e.msg);
			daemon_stop(&pd);
			return 1;
		}
		o.socket = pd.socket;
	}
	if (control_start(&o, &id, &e) < 0) {
		fprintf(stderr, "strobe record: %s\n", e.msg);
		daemon_stop(&pd);
		return 1;
	}
	/* Ctrl-C reaches the command; we stop the session when it is gone */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	if (run_command(argv + optind, &status) < 0) {
		fprintf(stderr, "strobe record: cannot run %s: %s\n", argv[optind], strerror(errno));
		status = 127 << 8;
	}
	ret = control_stop(o.socket, &resp, &e);
	if (ret < 0) {
		fprintf(stderr, "strobe record: stopping session %lld: %s\n", id, e.msg);
	} else {
		fputs("strobe record: ", stderr);
		control_print_stop(stderr, &resp);
		proto_free(&resp);
	}
	daemon_stop(&pd);
	if (ret < 0)
		return 1;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
