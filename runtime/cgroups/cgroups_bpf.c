/* The cgroup v2 device controller: a BPF_PROG_TYPE_CGROUP_DEVICE program, assembled here
 * from the rules, loaded and attached to the container's cgroup.
 *
 * The program sees struct bpf_cgroup_dev_ctx { access_type, major, minor }, where
 * access_type holds the device type in its low 16 bits (BPF_DEVCG_DEV_*) and the
 * requested access in its high 16 bits (BPF_DEVCG_ACC_*). It returns 1 to allow.
 * Rules are checked from the last to the first and the first hit decides, which is
 * "last match wins" over the list as written; nothing matched means deny.
 *
 * Access matching: an allow rule matches when it grants every requested bit; a deny
 * rule matches when it refuses any requested bit. So [allow c 1:3 rwm, deny c 1:3 w]
 * still lets /dev/null be read but not written, as the v1 controller would. One
 * difference from v1 stays: access split over several allow rules for one device
 * (allow r, allow w) is not combined for a request of both. */

#include "cgroups_bpf.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

static struct bpf_insn insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	return (struct bpf_insn){ .code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm };
}

/* dst = *(u32 *)(src + off) */
static struct bpf_insn ld_w(uint8_t dst, uint8_t src, int16_t off)
{
	return insn(BPF_LDX | BPF_MEM | BPF_W, dst, src, off, 0);
}

static struct bpf_insn alu32_imm(uint8_t op, uint8_t dst, int32_t imm)
{
	return insn(BPF_ALU | op | BPF_K, dst, 0, 0, imm);
}

static struct bpf_insn mov32_reg(uint8_t dst, uint8_t src)
{
	return insn(BPF_ALU | BPF_MOV | BPF_X, dst, src, 0, 0);
}

static struct bpf_insn mov64_imm(uint8_t dst, int32_t imm)
{
	return insn(BPF_ALU64 | BPF_MOV | BPF_K, dst, 0, 0, imm);
}

static struct bpf_insn jmp_imm(uint8_t op, uint8_t dst, int32_t imm, int16_t off)
{
	return insn(BPF_JMP | op | BPF_K, dst, 0, off, imm);
}

static struct bpf_insn jmp_reg(uint8_t op, uint8_t dst, uint8_t src, int16_t off)
{
	return insn(BPF_JMP | op | BPF_X, dst, src, off, 0);
}

static struct bpf_insn exit_insn(void)
{
	return insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
}

static uint32_t access_bits(const char *a)
{
	uint32_t bits = 0;
	for (; *a; a++)
		bits |= *a == 'r' ? BPF_DEVCG_ACC_READ : *a == 'w' ? BPF_DEVCG_ACC_WRITE
		      : *a == 'm' ? BPF_DEVCG_ACC_MKNOD : 0;
	return bits;
}

#define ACC_ALL (BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE | BPF_DEVCG_ACC_MKNOD)

/* Registers after the prologue: r2 type, r3 access, r4 major, r5 minor. */
enum { R0, R1, R2, R3, R4, R5 };

/* Instructions of one rule's block; the test jumps go to its end ("next rule").
 * *ret_final says the block has no test at all: nothing after it can run. */
static size_t rule_block(const struct oci_device_rule *d, struct bpf_insn *out, bool *ret_final)
{
	struct bpf_insn tmp[16];
	size_t n = 0;
	/* jumps are patched once the block length is known; mark them with off = -1 */
	if (d->type != 'a')
		tmp[n++] = jmp_imm(BPF_JNE, R2, d->type == 'b' ? BPF_DEVCG_DEV_BLOCK
								: BPF_DEVCG_DEV_CHAR, -1);
	uint32_t acc = access_bits(d->access);
	if (acc != ACC_ALL) {
		tmp[n++] = mov32_reg(R1, R3);
		tmp[n++] = alu32_imm(BPF_AND, R1, (int32_t)acc);
		if (d->allow)
			tmp[n++] = jmp_reg(BPF_JNE, R1, R3, -1);    /* not all granted */
		else
			tmp[n++] = jmp_imm(BPF_JEQ, R1, 0, -1);     /* none refused */
	}
	if (d->major >= 0)
		tmp[n++] = jmp_imm(BPF_JNE, R4, (int32_t)d->major, -1);
	if (d->minor >= 0)
		tmp[n++] = jmp_imm(BPF_JNE, R5, (int32_t)d->minor, -1);
	*ret_final = n == 0;
	tmp[n++] = mov64_imm(R0, d->allow ? 1 : 0);
	tmp[n++] = exit_insn();
	for (size_t i = 0; i < n; i++) {
		if (BPF_CLASS(tmp[i].code) == BPF_JMP && BPF_OP(tmp[i].code) != BPF_EXIT &&
		    tmp[i].off == -1)
			tmp[i].off = (int16_t)(n - i - 1);
		if (out)
			out[i] = tmp[i];
	}
	return n;
}

int cg_bpf_devices_build(const struct oci_device_rule *rules, size_t n, struct bpf_insn **ret,
			 size_t *ret_n, struct ab_err *err)
{
	if (n > 4096)
		return ab_error(err, 0, "linux.resources.devices: too many rules (%zu)", n);
	/* The verifier refuses unreachable code, so stop at the first rule (from the end)
	 * that matches everything, e.g. docker's leading deny-all. */
	size_t total = 6 + 2, first = 0;
	bool final = false;
	for (size_t i = 0; i < n; i++)
		if (rules[i].major > INT32_MAX || rules[i].minor > INT32_MAX)
			return ab_error(err, 0, "linux.resources.devices[%zu]: device number out "
					"of range", i);
	for (size_t i = n; i-- > 0 && !final;) {
		total += rule_block(&rules[i], NULL, &final);
		first = i;
	}
	struct bpf_insn *p = xcalloc(total, sizeof *p);
	size_t k = 0;
	p[k++] = ld_w(R2, R1, offsetof(struct bpf_cgroup_dev_ctx, access_type));
	p[k++] = alu32_imm(BPF_AND, R2, 0xffff);
	p[k++] = ld_w(R3, R1, offsetof(struct bpf_cgroup_dev_ctx, access_type));
	p[k++] = alu32_imm(BPF_RSH, R3, 16);
	p[k++] = ld_w(R4, R1, offsetof(struct bpf_cgroup_dev_ctx, major));
	p[k++] = ld_w(R5, R1, offsetof(struct bpf_cgroup_dev_ctx, minor));
	for (size_t i = n; i-- > first;)
		k += rule_block(&rules[i], p + k, &final);
	if (!final) {
		p[k++] = mov64_imm(R0, 0);
		p[k++] = exit_insn();
	}
	*ret = p;
	*ret_n = k;
	return 0;
}

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return (int)syscall(__NR_bpf, cmd, attr, sizeof *attr);
}

static int prog_load(const struct bpf_insn *p, size_t n, struct ab_err *err)
{
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	a.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
	a.insns = (uintptr_t)p;
	a.insn_cnt = (uint32_t)n;
	a.license = (uintptr_t)"Apache";
	int fd = sys_bpf(BPF_PROG_LOAD, &a);
	if (fd >= 0)
		return fd;
	int e = errno;
	/* Load again with the verifier's log, which says what it disliked. */
	static char log[4096];
	log[0] = 0;
	a.log_buf = (uintptr_t)log;
	a.log_size = sizeof log;
	a.log_level = 1;
	fd = sys_bpf(BPF_PROG_LOAD, &a);
	if (fd >= 0)
		return fd;
	log[strcspn(log, "\n")] = 0;
	return ab_error(err, e, "load the device cgroup BPF program%s%s", log[0] ? ": " : "", log);
}

/* Programs on the cgroup now, to be replaced by ours. */
static size_t prog_query(int cgfd, uint32_t *ids, size_t max)
{
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	a.query.target_fd = (uint32_t)cgfd;
	a.query.attach_type = BPF_CGROUP_DEVICE;
	a.query.prog_ids = (uintptr_t)ids;
	a.query.prog_cnt = (uint32_t)max;
	if (sys_bpf(BPF_PROG_QUERY, &a) < 0)
		return 0;
	return a.query.prog_cnt < max ? a.query.prog_cnt : max;
}

static void prog_detach_id(int cgfd, uint32_t id)
{
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	a.prog_id = id;
	_cleanup_close_ int pfd = sys_bpf(BPF_PROG_GET_FD_BY_ID, &a);
	if (pfd < 0) {
		log_debug("cgroups: get BPF program %u: %m", id);
		return;
	}
	memset(&a, 0, sizeof a);
	a.target_fd = (uint32_t)cgfd;
	a.attach_bpf_fd = (uint32_t)pfd;
	a.attach_type = BPF_CGROUP_DEVICE;
	if (sys_bpf(BPF_PROG_DETACH, &a) < 0)
		log_debug("cgroups: detach BPF program %u: %m", id);
}

int cg_bpf_devices_apply(const char *dir, const struct oci_device_rule *rules, size_t n,
			 struct ab_err *err)
{
	_cleanup_free_ struct bpf_insn *prog = NULL;
	size_t len;
	if (cg_bpf_devices_build(rules, n, &prog, &len, err) < 0)
		return -1;
	_cleanup_close_ int cgfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cgfd < 0)
		return ab_error(err, errno, "open %s", dir);
	uint32_t old[64];
	size_t n_old = prog_query(cgfd, old, ARRAY_SIZE(old));

	_cleanup_close_ int pfd = prog_load(prog, len, err);
	if (pfd < 0)
		return -1;
	/* Attach the new program before removing the old ones, so there is no moment
	 * without a filter. With several attached, each must allow. */
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	a.target_fd = (uint32_t)cgfd;
	a.attach_bpf_fd = (uint32_t)pfd;
	a.attach_type = BPF_CGROUP_DEVICE;
	a.attach_flags = BPF_F_ALLOW_MULTI;
	if (sys_bpf(BPF_PROG_ATTACH, &a) < 0)
		return ab_error(err, errno, "attach the device BPF program to %s", dir);
	for (size_t i = 0; i < n_old; i++)
		prog_detach_id(cgfd, old[i]);
	return 0;
}
