/* Network devices of the current network namespace. */
#ifndef AGENTBOX_NETDEV_H
#define AGENTBOX_NETDEV_H

#include "error.h"

/* Bring the loopback interface up (nothing to do when it already is). A new
 * network namespace starts with lo down; runc and crun bring it up, and
 * programs expect 127.0.0.1 and ::1 to work. */
int netdev_loopback_up(struct ab_err *err);

#endif
