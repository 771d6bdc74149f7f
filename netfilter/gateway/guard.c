/* The rules of requests to credential hosts and of readable responses
 * (guard.h). */
#include <string.h>
#include <strings.h>

#include "guard.h"

static bool word_eq(const char *w, const char *s, size_t len)
{
	return strlen(w) == len && strncasecmp(w, s, len) == 0;
}

const char *gw_guard_method(const char *method, size_t len, bool max_forwards)
{
	/* methods are case-sensitive, but servers that echo are not always */
	if (word_eq("TRACE", method, len) || word_eq("TRACK", method, len))
		return "it gives the request back, credential and all";
	if (word_eq("OPTIONS", method, len) && max_forwards)
		return "with Max-Forwards it is answered by a proxy on the way";
	return NULL;
}

bool gw_guard_drops(const char *name, size_t len, const char *value, size_t vlen)
{
	if (word_eq("te", name, len))
		return !word_eq("trailers", value, vlen);
	return word_eq("accept-encoding", name, len) || word_eq("range", name, len) ||
	       word_eq("if-range", name, len) || word_eq("sec-websocket-extensions", name, len);
}

/* every comma-separated item of v (parameters aside) is one of `ok` */
static bool items_are(const char *v, size_t len, const char *ok, const char *also)
{
	size_t i = 0;
	while (i < len) {
		while (i < len && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
			i++;
		size_t start = i;
		while (i < len && v[i] != ',' && v[i] != ' ' && v[i] != '\t' && v[i] != ';' && v[i] != '/')
			i++;
		size_t n = i - start;
		if (n && !word_eq(ok, v + start, n) && !(also && word_eq(also, v + start, n)))
			return false;
		while (i < len && v[i] != ',')
			i++;   /* parameters, a version */
	}
	return true;
}

bool gw_guard_upgrade_ok(const char *value, size_t len)
{
	return items_are(value, len, "websocket", NULL);
}

bool gw_guard_coding_readable(const char *v, size_t len, bool transfer)
{
	return items_are(v, len, "identity", transfer ? "chunked" : NULL);
}
