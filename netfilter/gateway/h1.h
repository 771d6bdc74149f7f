/* HTTP/1.1 through the gateway (h1.c), over a pair's plaintext buffers. */
#ifndef AGENTBOX_GATEWAY_H1_H
#define AGENTBOX_GATEWAY_H1_H

#include <stdbool.h>

#include "pair.h"

int gw_h1_init(struct gw_pair *p);
/* Move what is buffered: requests rewritten toward the server, responses
 * toward the box. *progress when anything moved; -1: the pair must end. */
int gw_h1_process(struct gw_pair *p, bool *progress);
void gw_h1_free(struct gw_pair *p);

#endif
