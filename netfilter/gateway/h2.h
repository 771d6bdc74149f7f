/* HTTP/2 through the gateway (h2.c), over a pair's plaintext buffers. */
#ifndef AGENTBOX_GATEWAY_H2_H
#define AGENTBOX_GATEWAY_H2_H

#include <stdbool.h>

#include "pair.h"

int gw_h2_init(struct gw_pair *p);
/* Move what is buffered through both sessions. *progress when anything
 * moved; -1: the pair must end. */
int gw_h2_process(struct gw_pair *p, bool *progress);
void gw_h2_free(struct gw_pair *p);

#endif
