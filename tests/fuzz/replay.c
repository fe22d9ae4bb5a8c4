/*
 * replay.c - run a libFuzzer harness without libFuzzer (and without
 * clang): LLVMFuzzerTestOneInput() once per file given, or per file of
 * each directory given (not recursive).  Built with gcc by Makefile.am as
 * tests/fuzz/replay_NAME, so the test suite replays every corpus
 * (tests/t0900-fuzz-replay.sh).  A harness's failed assert aborts it;
 * otherwise prints "replayed N inputs" and exits 0.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f) {
		perror(path);
		return -1;
	}
	do {
		if (len == cap) {
			cap = cap ? 2 * cap : 65536;
			buf = realloc(buf, cap);
			if (!buf)
				abort();
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	if (ferror(f)) {
		perror(path);
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	/* a copy of exactly len bytes, so reads past the input are caught by
	 * a sanitizer or valgrind as they would be under libFuzzer */
	unsigned char *in = malloc(len ? len : 1);
	if (!in)
		abort();
	memcpy(in, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(in, len);
	free(in);
	return 0;
}

int main(int argc, char **argv)
{
	long count = 0;
	int bad = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st) < 0) {
			perror(argv[i]);
			bad = 1;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (replay_file(argv[i]) < 0)
				bad = 1;
			else
				count++;
			continue;
		}
		struct dirent **ents;
		int n = scandir(argv[i], &ents, NULL, alphasort);
		if (n < 0) {
			perror(argv[i]);
			bad = 1;
			continue;
		}
		for (int j = 0; j < n; j++) {
			char path[4096];
			struct stat fs;

			snprintf(path, sizeof(path), "%s/%s", argv[i], ents[j]->d_name);
			if (stat(path, &fs) == 0 && S_ISREG(fs.st_mode)) {
				if (replay_file(path) < 0)
					bad = 1;
				else
					count++;
			}
			free(ents[j]);
		}
		free(ents);
	}
	printf("replayed %ld inputs\n", count);
	return bad;
}
