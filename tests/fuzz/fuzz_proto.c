/*
 * fuzz_proto - the control-socket line parser proto_parse() (lib/base/proto.c).
 * Asserts beyond "no crash": a parse that fails leaves a message in e and
 * no fields; a parse that succeeds gives a valid verb, at most
 * PROTO_MAX_FIELDS distinct keys, and round-trips: proto_format() of it
 * parses again to the same verb, keys and values, and formats to the same
 * line.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = malloc(size + 1);
	struct proto_msg m, m2;
	struct error e = { "" };

	memcpy(line, data, size);
	line[size] = 0;
	if (proto_parse(line, &m, &e) < 0) {
		assert(e.msg[0]);
		assert(m.nr == 0);
		proto_free(&m);
		free(line);
		return 0;
	}
	assert(m.verb[0] && strlen(m.verb) < PROTO_MAX_NAME);
	assert(m.nr >= 0 && m.nr <= PROTO_MAX_FIELDS);
	for (int i = 0; i < m.nr; i++) {
		assert(m.f[i].value);
		assert(proto_get(&m, m.f[i].key) == m.f[i].value);
	}
	char *out = proto_format(&m);
	assert(out && strlen(out) > 0 && out[strlen(out) - 1] == '\n');
	assert(!strchr(out, '\n') || strchr(out, '\n') == out + strlen(out) - 1);
	if (strlen(out) - 1 < PROTO_MAX_LINE) {
		struct error e2 = { "" };
		int rc = proto_parse(out, &m2, &e2);
		assert(rc == 0);
		assert(strcmp(m.verb, m2.verb) == 0 && m.nr == m2.nr);
		for (int i = 0; i < m.nr; i++) {
			assert(strcmp(m.f[i].key, m2.f[i].key) == 0);
			assert(strcmp(m.f[i].value, m2.f[i].value) == 0);
		}
		char *out2 = proto_format(&m2);
		assert(strcmp(out, out2) == 0);
		free(out2);
		proto_free(&m2);
	}
	free(out);
	proto_free(&m);
	free(line);
	return 0;
}
