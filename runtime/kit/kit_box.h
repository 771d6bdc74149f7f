/* Named boxes (agentbox-kit(8), BOXES): `kit run --name NAME` keeps the box's
 * writable layer, everything outside the workspace with its home included,
 * and starts from it the next time; the kit's other settings are applied
 * afresh each run.
 *
 * A box is a directory of the box store, on persistent storage: root's is
 * /var/lib/agentbox/boxes, another user's $XDG_DATA_HOME/agentbox/boxes
 * (~/.local/share/agentbox/boxes); $AGENTBOX_BOXES overrides both.
 *
 *   STORE/.lock            flock, exclusive while the store changes (briefly)
 *   STORE/NAME/box.json    name, kit, base rootfs, user, created, last used, layers
 *   STORE/NAME/lock        flock, exclusive for a run's whole length: one run a box
 *   STORE/NAME/upper/      the overlay's upper layer: what the box wrote
 *   STORE/NAME/work/       the overlay's work directory, emptied before each run
 *   STORE/.layers/ID/      frozen layers, read-only lower layers of the boxes listing them
 *
 * `kit fork NAME NEW` freezes NAME's upper layer (a rename, whatever its
 * size) into a layer both boxes then stack under a new, empty upper layer of
 * their own: nothing is copied, and neither box can change what the other
 * sees, because overlayfs copies a lower file up before writing it. (Hard
 * links between two upper layers would not do: a file written in place there
 * changes in both boxes.) A layer goes when no box lists it any more.
 *
 * Crash safety: every change is a rename or an atomic rewrite of box.json,
 * in an order a later store operation can finish (a box made or a fork begun
 * under a ".new-" or "freezing" name is completed or removed), and the locks
 * are flocks, released when their holder dies. */
#ifndef AGENTBOX_KIT_BOX_H
#define AGENTBOX_KIT_BOX_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "util.h"

#define KIT_BOX_NAME_MAX 63
#define KIT_BOX_LAYERS ".layers"     /* the frozen layers, in the store */

struct kit_box {
	struct arena arena;
	char name[KIT_BOX_NAME_MAX + 1];
	char store[PATH_MAX];
	char dir[PATH_MAX + 80];        /* STORE/NAME */
	int store_fd;                   /* O_PATH of the store */
	int lock_fd;                    /* held by a run; -1 otherwise */
	bool fresh;                     /* made by this run */
	/* box.json */
	char *kit;                      /* the kit file of the last run, NULL for the default kit */
	char *base;                     /* what the layers lie on: "host", "dir:PATH", "image:DIGEST" */
	bool has_user;
	uint32_t uid, gid;
	int64_t created, last_used;     /* seconds since the epoch */
	bool learn;                     /* the last run was in learn mode (egress open, recorded) */
	char **layers;                  /* frozen layers, top first */
	size_t n_layers;
	char *freezing;                 /* a fork's layer not yet in `layers` */
};

/* Letters, digits, "-", "_" and "."; at most 63; starting with a letter or digit. */
bool kit_box_name_valid(const char *name);
/* The box store's directory (not made). */
int kit_box_store_path(char *buf, size_t len, struct ab_err *err);

/* ---- kit_box_run.c: a run's box ---- */

/* For a run: open NAME (made when it does not exist) and lock it for the
 * run; a box another run holds is refused with one line. */
int kit_box_acquire(const char *name, struct kit_box *b, struct ab_err *err);
/* The first run sets what the box lies on and who its user is; a later run
 * must match them. */
int kit_box_check_base(struct kit_box *b, const char *base, uint32_t uid, uint32_t gid,
		       struct ab_err *err);
/* Record the kit, the time and the mode (learn) of this run. */
int kit_box_touch(struct kit_box *b, const char *kit_file, bool learn, struct ab_err *err);
/* The overlay's layers, relative to the store (the mount is made from there):
 * lowerdir ("layers/A:...:BASE"), upperdir and workdir (emptied first). */
int kit_box_overlay_dirs(struct kit_box *b, const char *base_dir, char **ret_lower, char **ret_upper,
			 char **ret_work, struct ab_err *err);
/* Unlock and forget (the box stays). */
void kit_box_release(struct kit_box *b);

/* ---- kit_box_ops.c: what `kit ls`, `kit rm` and `kit fork` do ---- */

struct kit_box_info {
	char name[KIT_BOX_NAME_MAX + 1];
	char *kit;                      /* NULL: the default kit */
	int64_t created, last_used;
	uint64_t size;                  /* bytes in its own upper layer */
	uint64_t layers_size;           /* bytes in the frozen layers under it */
	bool running;
	bool learn;                     /* its last run was in learn mode */
};
/* Every box of the store, by name. */
int kit_box_list(struct arena *a, struct kit_box_info **ret, size_t *ret_n, struct ab_err *err);
int kit_box_remove(const char *name, struct ab_err *err);
int kit_box_fork(const char *from, const char *to, struct ab_err *err);

/* ---- kit_box.c: the store, for kit_box_run.c and kit_box_ops.c ---- */

/* Open (making it if need be) the store, and take its lock. */
int kit_box_store_open(int *ret_dirfd, int *ret_lockfd, char *path, size_t len, struct ab_err *err);
/* Finish what a crash left in the store (under its lock): half-made boxes and
 * removals, a freeze cut short, layers no box lists. */
void kit_box_store_repair(int storefd);
/* An empty struct for a box of the store at storefd. */
void kit_box_init(struct kit_box *b, int storefd, const char *store);
/* Read NAME's box.json into b. */
int kit_box_load(int storefd, const char *name, struct kit_box *b, struct ab_err *err);
/* Write b's box.json atomically into the store's directory dir (b->name, or
 * where a box is being made). */
int kit_box_save_at(int storefd, const char *dir, const struct kit_box *b, struct ab_err *err);
/* flock LOCK_EX|LOCK_NB on NAME/lock: the fd, or -1 with errno (EWOULDBLOCK:
 * a run or another command holds it). */
int kit_box_lock(int storefd, const char *name);
/* The names of the boxes in the store, sorted. */
size_t kit_box_names(int storefd, struct arena *a, char ***ret);
/* Freeze b's upper layer into .layers/b->freezing, or finish a freeze a crash
 * cut short: the rename, a new empty upper layer like the old one's root,
 * the layer first in box.json. */
int kit_box_finish_freeze(struct kit_box *b, struct ab_err *err);
/* An empty directory `to` with the owner and mode of likefd/like. */
int kit_box_mkdir_like(int dirfd, const char *to, int likefd, const char *like, struct ab_err *err);
/* bytes random bytes as hex into buf (2 * bytes + 1). */
void kit_box_new_id(char *buf, size_t bytes);

#endif
