/* The configuration from the runtime (ctl.c): read from its records, the
 * secrets in locked memory; and the one in use. */
#ifndef AGENTBOX_GATEWAY_CTL_H
#define AGENTBOX_GATEWAY_CTL_H

#include <stddef.h>

#include "error.h"
#include "gateway.h"

/* Read the runtime's records from fd until GW_REC_END; secrets go straight
 * into locked memory (gw_secure_alloc) and are rendered there. */
int gw_config_read(int fd, struct gw_config *cfg, struct ab_err *err);
/* Memory that is never swapped or dumped, wiped when freed */
void *gw_secure_alloc(size_t len);
void gw_secure_free(void *p, size_t len);

/* The configuration in use (main.c sets it once it is read). */
extern const struct gw_config *gw_cfg;
/* Credentials for host (lowercase): the indexes into gw_cfg->creds, count returned */
size_t gw_creds_for(const char *host, size_t idx[CRED_MAX]);

#endif
