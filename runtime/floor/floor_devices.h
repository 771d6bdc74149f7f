/* The hardening floor's device checks and the device cgroup every container
 * gets (floor_devices.c). Each refusal is one line naming the config path and
 * the setting of agentbox-config(5) that relaxes it. */
#ifndef AGENTBOX_FLOOR_DEVICES_H
#define AGENTBOX_FLOOR_DEVICES_H

#include <stdbool.h>
#include <stdint.h>

#include "agent_config.h"
#include "config.h"
#include "error.h"

/* Refuse block devices and character devices off the allowlist in every form
 * the config can reach them: linux.devices, linux.resources.devices and bind
 * mounts of device nodes (or of directories holding them). */
int floor_devices(const struct agent_config *cfg, const struct oci_config *c, struct ab_err *err);

/* The device cgroup rules a container gets, always (even with no
 * linux.resources.devices): deny-all and mknod of any node first, runc's
 * default set (null, zero, full, random, urandom, tty, ptmx, pts), then the
 * config's rules in order, as runc applies them (a deny-all among them
 * resets the config's rules before it). A device of linux.devices is opened
 * only if a rule allows it, as in runc. Called after floor_devices allowed
 * what the config asks. */
int floor_device_rules(struct oci_config *c, struct ab_err *err);

/* Is the character device MAJOR:MINOR on the floor's allowlist (runc's
 * default set, the console, or the admin's floor.allow_devices)? */
bool floor_char_device_allowed(const struct agent_config *cfg, int64_t major, int64_t minor);

#endif
