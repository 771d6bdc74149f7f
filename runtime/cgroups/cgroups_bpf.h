/* cgroup v2's device controller: an eBPF program (cgroups_bpf.c), for cgroups_v2.c. */
#ifndef AGENTBOX_CGROUPS_BPF_H
#define AGENTBOX_CGROUPS_BPF_H

#include <stddef.h>

#include "config_types.h"
#include "error.h"

struct bpf_insn;
/* Build the program for rules (last match wins; nothing matched = deny). */
int cg_bpf_devices_build(const struct oci_device_rule *rules, size_t n, struct bpf_insn **ret,
			 size_t *ret_n, struct ab_err *err);
/* Load it and attach it to the cgroup at dir, replacing programs attached before. */
int cg_bpf_devices_apply(const char *dir, const struct oci_device_rule *rules, size_t n,
			 struct ab_err *err);

#endif
