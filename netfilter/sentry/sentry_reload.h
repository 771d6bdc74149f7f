/* Live policy changes (sentry_reload.c): the new policy read on SIGHUP. */
#ifndef AGENTBOX_SENTRY_RELOAD_H
#define AGENTBOX_SENTRY_RELOAD_H

#include "error.h"
#include "sentry_state.h"

int sentry_reload_start(struct sentry *s, struct ab_err *err);
void sentry_reload(struct sentry *s);

#endif
