/* The gateway's response scan and what it stands on (buffers, locked
 * memory), for the fuzz targets: included once into a program. */
#ifndef AGENTBOX_FUZZ_GATEWAY_SCAN_SOURCES_H
#define AGENTBOX_FUZZ_GATEWAY_SCAN_SOURCES_H

#include "../../netfilter/gateway/pair.h"
#include "../../netfilter/gateway/buf.c"
#include "../../netfilter/gateway/ctl.c"
#include "../../netfilter/gateway/scan.c"

#endif
