/*
 * plotfile.c - the files of a plot (plotfile.h): gnuplot run in a private
 * directory, its output and the CSV put in place only when whole.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "plotfile.h"
#include "seriescsv.h"

static const char *path_ext(const char *p)
{
	const char *base = strrchr(p, '/'), *dot;

	base = base ? base + 1 : p;
	dot = strrchr(base, '.');
	return dot && dot != base ? dot + 1 : "";
}

enum plotfile_fmt plotfile_format(const char *path)
{
	const char *x = path_ext(path);

	if (!strcasecmp(x, "png"))
		return PLOTFILE_PNG;
	if (!strcasecmp(x, "svg"))
		return PLOTFILE_SVG;
	if (!strcasecmp(x, "pdf"))
		return PLOTFILE_PDF;
	if (!strcasecmp(x, "csv"))
		return PLOTFILE_CSV;
	return PLOTFILE_NONE;
}

int plotfile_begin(struct plotfile *pf, struct error *e)
{
	snprintf(pf->tmpdir, sizeof(pf->tmpdir), "/tmp/strobe-plot.XXXXXX");
	if (!mkdtemp(pf->tmpdir)) {
		pf->tmpdir[0] = 0;
		return error_set(e, "creating a temporary directory in /tmp: %s", strerror(errno));
	}
	return 0;
}

void plotfile_end(struct plotfile *pf)
{
	static const char *const files[] = {
		"plot.gp", "plot.dat", "plot.png", "plot.svg", "plot.pdf", "plot.txt",
		"plot.csv", "data.csv", "gnuplot.err",
	};
	char path[128];

	if (!pf->tmpdir[0])
		return;
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), "%s/%s", pf->tmpdir, files[i]);
		unlink(path);
	}
	rmdir(pf->tmpdir);
	pf->tmpdir[0] = 0;
}

/* The first line of gnuplot's stderr that says what went wrong. */
static void gnuplot_error(const char *errfile, char *buf, size_t len)
{
	FILE *f = fopen(errfile, "r");
	char line[1024], first[1024] = "";

	snprintf(buf, len, "no message");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!first[0] && line[strspn(line, " \t^")])
			snprintf(first, sizeof(first), "%s", line);
		if (strstr(line, " line ") && strchr(line, ':')) {
			const char *m = strstr(line, " line ");

			snprintf(buf, len, "%s", m + 1);
			fclose(f);
			return;
		}
	}
	fclose(f);
	if (first[0])
		snprintf(buf, len, "%s", first);
}

/* Run gnuplot on script in the directory: 0, or -1 with e set (not found,
 * killed, failed: its message). */
static int run_gnuplot(const struct plotfile *pf, const char *script, struct error *e)
{
	const char *gp = getenv("STROBE_GNUPLOT");
	char errfile[128], msg[600];
	int status, ex[2];
	pid_t pid;
	ssize_t r;
	int code = 0;

	if (!gp || !*gp)
		gp = "gnuplot";
	snprintf(errfile, sizeof(errfile), "%s/gnuplot.err", pf->tmpdir);
	if (pipe2(ex, O_CLOEXEC) < 0)
		return error_set(e, "running gnuplot: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		int err = errno;

		close(ex[0]);
		close(ex[1]);
		return error_set(e, "running gnuplot: %s", strerror(err));
	}
	if (pid == 0) {
		int fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int nul = open("/dev/null", O_RDWR);

		if (fd >= 0)
			dup2(fd, 2);
		if (nul >= 0) {
			dup2(nul, 0);
			dup2(nul, 1);
		}
		if (chdir(pf->tmpdir) == 0)
			execlp(gp, gp, script, (char *)NULL);
		code = errno;
		if (write(ex[1], &code, sizeof(code)) < 0)
			_exit(127);
		_exit(127);
	}
	close(ex[1]);
	r = read(ex[0], &code, sizeof(code));
	close(ex[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (r == (ssize_t)sizeof(code)) {
		if (code == ENOENT)
			return error_set(e, "gnuplot not found%s%s: install it (apt-get install "
					 "gnuplot-nox) or set STROBE_GNUPLOT, or write the series "
					 "with -o FILE.csv", strcmp(gp, "gnuplot") ? " at " : "",
					 strcmp(gp, "gnuplot") ? gp : "");
		return error_set(e, "cannot run %s: %s", gp, strerror(code));
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		gnuplot_error(errfile, msg, sizeof(msg));
		if (WIFSIGNALED(status))
			return error_set(e, "gnuplot was killed by signal %d: %s", WTERMSIG(status),
					 msg);
		return error_set(e, "gnuplot failed (exit %d): %s", WEXITSTATUS(status), msg);
	}
	return 0;
}

/* Copy file src to dst (created 0644, replaced), or to the stream to. */
static int copy_file(const char *src, const char *dst, FILE *to)
{
	char buf[65536];
	FILE *in = fopen(src, "rb"), *out = to;
	size_t n;
	int ret = 0;

	if (!in)
		return -1;
	if (!out)
		out = fopen(dst, "wb");
	if (!out) {
		fclose(in);
		return -1;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n) {
			ret = -1;
			break;
		}
	if (ferror(in))
		ret = -1;
	fclose(in);
	if (to) {
		if (fflush(to) == EOF)
			ret = -1;
	} else if (fclose(out) == EOF) {
		ret = -1;
	}
	if (ret < 0 && !to)
		unlink(dst);
	return ret;
}

/* Put the finished file src at dst: rename, or copy across file systems. */
static int install(const char *src, const char *dst, struct error *e)
{
	int err;

	if (rename(src, dst) == 0)
		return 0;
	err = errno;
	if (err != EXDEV)
		return error_set(e, "writing %s: %s", dst, strerror(err));
	if (copy_file(src, dst, NULL) < 0)
		return error_set(e, "writing %s: %s", dst, strerror(errno));
	return 0;
}

int plotfile_csv(struct plotfile *pf, const struct series *s, int wall, const char *tmpname,
		 const char *dst, struct error *e)
{
	char path[128];
	FILE *f;

	if (!strcmp(dst, "-")) {
		if (seriescsv_write(stdout, s, wall) < 0)
			return error_set(e, "writing the CSV: %s", strerror(errno));
		return 0;
	}
	snprintf(path, sizeof(path), "%s/%s", pf->tmpdir, tmpname);
	f = fopen(path, "w");
	if (!f)
		return error_set(e, "writing %s: %s", path, strerror(errno));
	if (seriescsv_write(f, s, wall) < 0) {
		fclose(f);
		return error_set(e, "writing %s: %s", path, strerror(errno));
	}
	if (fclose(f) == EOF)
		return error_set(e, "writing %s: %s", path, strerror(errno));
	return install(path, dst, e);
}

int plotfile_render(struct plotfile *pf, enum plotfile_fmt fmt, const struct series *s,
		    const struct series_req *r, const struct gnuplot_opts *o,
		    const char *output, struct error *e)
{
	static const char *const ext[] = {
		[PLOTFILE_PNG] = "png", [PLOTFILE_SVG] = "svg", [PLOTFILE_PDF] = "pdf",
		[PLOTFILE_TERM] = "txt",
	};
	static const enum gnuplot_term term[] = {
		[PLOTFILE_PNG] = GNUPLOT_PNG, [PLOTFILE_SVG] = GNUPLOT_SVG,
		[PLOTFILE_PDF] = GNUPLOT_PDF, [PLOTFILE_TERM] = GNUPLOT_DUMB,
	};
	struct gnuplot_opts go = *o;
	char dat[128], script[128], out[128];
	FILE *f;
	struct stat st;

	go.term = term[fmt];
	snprintf(dat, sizeof(dat), "%s/plot.dat", pf->tmpdir);
	snprintf(script, sizeof(script), "%s/plot.gp", pf->tmpdir);
	snprintf(out, sizeof(out), "%s/plot.%s", pf->tmpdir, ext[fmt]);
	f = fopen(dat, "w");
	if (!f || gnuplot_write_data(f, s, go.wall) < 0 || fclose(f) == EOF)
		return error_set(e, "writing %s: %s", dat, strerror(errno));
	f = fopen(script, "w");
	if (!f || gnuplot_write_script(f, s, r, &go, "plot.dat", out) < 0 || fclose(f) == EOF)
		return error_set(e, "writing %s: %s", script, strerror(errno));
	if (run_gnuplot(pf, script, e) < 0)
		return -1;
	if (stat(out, &st) < 0 || st.st_size == 0) {
		char errfile[128], msg[600];

		snprintf(errfile, sizeof(errfile), "%s/gnuplot.err", pf->tmpdir);
		gnuplot_error(errfile, msg, sizeof(msg));
		return error_set(e, "gnuplot wrote no output: %s", msg);
	}
	if (fmt == PLOTFILE_TERM) {
		if (copy_file(out, NULL, stdout) < 0)
			return error_set(e, "writing to stdout: %s", strerror(errno));
		return 0;
	}
	return install(out, output, e);
}
