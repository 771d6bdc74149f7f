/* How far up a wildcard may fold names (public_suffix.c), for egress
 * suggest (egress_suggest.c). */
#ifndef AGENTBOX_PUBLIC_SUFFIX_H
#define AGENTBOX_PUBLIC_SUFFIX_H

#include <stdbool.h>

/* May a wildcard cover the names below parent, that is, is parent at least
 * a registrable domain (a label below a public suffix)? */
bool egress_suffix_foldable(const char *parent);

#endif
