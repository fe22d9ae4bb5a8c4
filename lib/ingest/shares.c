/*
 * shares.c - each user's share of a session's ingest tables (shares.h).
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "shares.h"
#include "util.h"

struct owner {
	uint32_t uid;
	uint64_t used[SHARES_TABLES], refused[SHARES_TABLES];
};

struct shares {
	uint64_t limit[SHARES_TABLES];
	struct owner owners[SHARES_OWNERS_MAX + 1];	/* the last: all others */
	int nr_owners;
};

static const char *const table_name[SHARES_TABLES] = { "names", "binaries", "cgroups", "stacks" };

struct shares *shares_new(void)
{
	struct shares *s = xcalloc(1, sizeof(*s));

	s->owners[SHARES_OWNERS_MAX].uid = SHARES_UNKNOWN - 1;	/* "other uids" */
	return s;
}

void shares_free(struct shares *s)
{
	free(s);
}

void shares_set_limit(struct shares *s, enum shares_table t, uint64_t limit)
{
	s->limit[t] = limit;
}

/* uid's entry; past SHARES_OWNERS_MAX owners, the one of all others (whose
 * share they then split: the table is still not one user's). */
static struct owner *owner_of(struct shares *s, uint32_t uid)
{
	for (int i = 0; i < s->nr_owners; i++)
		if (s->owners[i].uid == uid)
			return &s->owners[i];
	if (s->nr_owners == SHARES_OWNERS_MAX)
		return &s->owners[SHARES_OWNERS_MAX];
	s->owners[s->nr_owners].uid = uid;
	return &s->owners[s->nr_owners++];
}

int shares_take(struct shares *s, enum shares_table t, uint32_t uid)
{
	struct owner *o;

	if (uid == 0)
		return 1;
	o = owner_of(s, uid);
	if (s->limit[t] && o->used[t] >= s->limit[t] / SHARES_DIV) {
		o->refused[t]++;
		return 0;
	}
	o->used[t]++;
	return 1;
}

uint64_t shares_refused(const struct shares *s)
{
	uint64_t n = 0;

	for (int i = 0; i <= SHARES_OWNERS_MAX; i++)
		for (int t = 0; t < SHARES_TABLES; t++)
			n += s->owners[i].refused[t];
	return n;
}

static void add_owner(char *buf, size_t len, size_t *pos, const struct owner *o, int t)
{
	char who[32];

	if (o->uid == SHARES_UNKNOWN)
		snprintf(who, sizeof(who), "gone processes");
	else if (o->uid == SHARES_UNKNOWN - 1)
		snprintf(who, sizeof(who), "other uids");
	else
		snprintf(who, sizeof(who), "uid %u", o->uid);
	if (*pos < len)
		*pos += (size_t)snprintf(buf + *pos, len - *pos, "%s refused %llu", who,
					 (unsigned long long)o->refused[t]);
}

void shares_refusals(const struct shares *s, char *buf, size_t len)
{
	size_t pos = 0;

	if (!len)
		return;
	buf[0] = 0;
	for (int t = 0; t < SHARES_TABLES; t++) {
		const struct owner *shown[SHARES_OWNERS_MAX + 1];
		int n = 0;

		for (int i = 0; i <= SHARES_OWNERS_MAX; i++)
			if (s->owners[i].refused[t])
				shown[n++] = &s->owners[i];
		if (!n)
			continue;
		/* most refused first: few owners, insertion sort */
		for (int i = 1; i < n; i++)
			for (int j = i; j > 0 && shown[j]->refused[t] > shown[j - 1]->refused[t]; j--) {
				const struct owner *x = shown[j];

				shown[j] = shown[j - 1];
				shown[j - 1] = x;
			}
		if (pos < len)
			pos += (size_t)snprintf(buf + pos, len - pos, "%s%s: ", pos ? "; " : "",
						table_name[t]);
		for (int i = 0; i < n; i++) {
			if (i && pos < len)
				pos += (size_t)snprintf(buf + pos, len - pos, ", ");
			add_owner(buf, len, &pos, shown[i], t);
		}
	}
}

int proc_owner(uint32_t pid, uint32_t *uid)
{
	char path[32], line[256];
	unsigned long u;
	int found = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %lu", &u) == 1) {
			*uid = (uint32_t)u;
			found = 0;
			break;
		}
	fclose(f);
	return found;
}
