/* The credential gateway's sources that its fuzz targets run (it is its own
 * executable, not a library): included once into a program, whether one
 * target (libFuzzer) or all of them (tests/fuzz/replay.c). The sentry's
 * side (records.c) is stubbed: the targets check what the box gets. */
#ifndef AGENTBOX_FUZZ_GATEWAY_SOURCES_H
#define AGENTBOX_FUZZ_GATEWAY_SOURCES_H

#include "gateway_scan_sources.h"
#include "../../netfilter/gateway/guard.c"
#include "../../netfilter/gateway/h1_resp.c"
#include "../../netfilter/gateway/h1.c"

void gw_log_deny(const char *host, const struct sockaddr_storage *dst, const char *reason, const char *detail)
{
	(void)host;
	(void)dst;
	(void)reason;
	(void)detail;
}

void gw_pair_log_use(struct gw_pair *p, size_t cred)
{
	(void)p;
	(void)cred;
}

#endif
