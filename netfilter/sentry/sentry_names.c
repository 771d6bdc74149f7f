/* The sentry's memory of names and their addresses: one (name, address) pair
 * per slot, NAME_ADDRS of them in pages of their own, mapped at the first
 * answer (a box that resolves no name never touches them), in buckets of
 * NAME_WAYS by address: what held an address is one bucket's look. A pair
 * seen again is refreshed; a new one takes an empty slot of its bucket or
 * the least recently seen. A connection outlives the set element its lookup
 * made, so pairs are kept past their TTL, for as long as there is room (an
 * address many names share keeps the last NAME_WAYS of them). */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "sentry_mem.h"
#include "sentry_names.h"
#include "util.h"

#define NAME_WAYS 16

struct name_addr {
	uint64_t seen_ms;        /* 0: empty */
	uint32_t hash;           /* of name */
	uint8_t family;
	uint8_t addr[16];
	char name[DNS_NAME_TEXT];
};

struct sentry_names {
	struct name_addr v[NAME_ADDRS];
};

static uint32_t name_hash(const char *name)
{
	uint32_t h = 2166136261u;
	for (const char *c = name; *c; c++)
		h = (h ^ (uint8_t)*c) * 16777619u;   /* FNV-1a */
	return h;
}

static size_t alen(int family)
{
	return family == AF_INET ? 4 : 16;
}

/* The bucket of addr's pairs */
static struct name_addr *bucket(struct sentry_names *m, int family, const uint8_t *addr)
{
	uint32_t h = 2166136261u ^ (uint32_t)family;
	for (size_t i = 0; i < alen(family); i++)
		h = (h ^ addr[i]) * 16777619u;
	return &m->v[(h % (NAME_ADDRS / NAME_WAYS)) * NAME_WAYS];
}

void sentry_names_note(struct sentry *s, const char *name, int family, const uint8_t *addr)
{
	if (!s->names_map && !(s->names_map = sentry_zpages(sizeof *s->names_map)))
		return;   /* no memory: names go unknown, nothing is opened by it */
	uint32_t h = name_hash(name);
	struct name_addr *b = bucket(s->names_map, family, addr), *slot = NULL, *oldest = &b[0];
	for (size_t i = 0; i < NAME_WAYS && !slot; i++) {
		struct name_addr *p = &b[i];
		if (p->seen_ms && p->hash == h && p->family == family && memcmp(p->addr, addr, alen(family)) == 0 &&
		    strcmp(p->name, name) == 0)
			slot = p;
		else if (p->seen_ms < oldest->seen_ms)
			oldest = p;
	}
	if (!slot) {
		slot = oldest;
		memset(slot, 0, sizeof *slot);
		slot->hash = h;
		slot->family = (uint8_t)family;
		memcpy(slot->addr, addr, alen(family));
		snprintf(slot->name, sizeof slot->name, "%s", name);
	}
	slot->seen_ms = now_ms();
}

size_t sentry_names_for(struct sentry *s, int family, const uint8_t *addr, uint64_t max_age_ms, const char **out,
			size_t max)
{
	const struct name_addr *v[NAME_WAYS];
	size_t n = 0;
	uint64_t now = now_ms();
	if (!s->names_map)
		return 0;
	const struct name_addr *b = bucket(s->names_map, family, addr);
	for (size_t i = 0; i < NAME_WAYS; i++) {
		const struct name_addr *p = &b[i];
		if (p->seen_ms && p->seen_ms + max_age_ms >= now && p->family == family &&
		    memcmp(p->addr, addr, alen(family)) == 0)
			v[n++] = p;
	}
	/* most recent first: insertion by seen time (there are few) */
	for (size_t i = 1; i < n; i++)
		for (size_t k = i; k > 0 && v[k]->seen_ms > v[k - 1]->seen_ms; k--) {
			const struct name_addr *t = v[k];
			v[k] = v[k - 1];
			v[k - 1] = t;
		}
	size_t m = n < max ? n : max;
	for (size_t i = 0; i < m; i++)
		out[i] = v[i]->name;
	return m;
}

bool sentry_names_held(struct sentry *s, const char *name, int family, const uint8_t *addr, uint64_t max_age_ms)
{
	const char *v[NAME_WAYS];
	size_t n = sentry_names_for(s, family, addr, max_age_ms, v, NAME_WAYS);
	for (size_t i = 0; i < n; i++)
		if (streq(v[i], name))
			return true;
	return false;
}

size_t sentry_names_addrs(struct sentry *s, const struct egress_entry *e, int *fam, uint8_t (*addrs)[16], size_t max)
{
	size_t n = 0;
	for (size_t i = 0; s->names_map && i < NAME_ADDRS; i++) {
		const struct name_addr *p = &s->names_map->v[i];
		if (!p->seen_ms || !egress_entry_matches_name(e, p->name))
			continue;
		bool seen = false;
		for (size_t k = 0; k < n && k < max && !seen; k++)
			seen = fam[k] == p->family && memcmp(addrs[k], p->addr, alen(p->family)) == 0;
		if (seen)
			continue;
		if (n < max) {
			fam[n] = p->family;
			memset(addrs[n], 0, 16);
			memcpy(addrs[n], p->addr, alen(p->family));
		}
		n++;
	}
	return n;
}

void sentry_names_free(struct sentry *s)
{
	if (s->names_map)
		(void)munmap(s->names_map, sizeof *s->names_map);
	s->names_map = NULL;
}
