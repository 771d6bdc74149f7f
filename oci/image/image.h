/* OCI image layouts (as skopeo and umoci write them) unpacked into a cache.
 *
 * image_prepare() resolves a tag through index.json (an image index inside is
 * narrowed to linux and the host's architecture), checks the sha256 of every
 * blob it reads (index, manifest, config, layers), and unpacks the layers in
 * order, whiteouts applied, into CACHE/<manifest digest hex>: written to a
 * temporary directory beside it and renamed, so the cache never holds half an
 * image. An unpacked image is used as it is the next time.
 *
 * libarchive is loaded with dlopen only here, so that the runtime itself does not
 * pay for it at start-up. */
#ifndef AGENTBOX_IMAGE_H
#define AGENTBOX_IMAGE_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "util.h"

/* What the image's config says about the process (strings in the caller's arena). */
struct image_config {
	char **env;             /* "NAME=VALUE" */
	size_t n_env;
	char **entrypoint;
	size_t n_entrypoint;
	char **cmd;
	size_t n_cmd;
	char *workdir;          /* NULL when unset */
	char *user;             /* NULL when unset */
};

/* Unpack (or find in the cache) the image `tag` of the layout directory `layout`
 * (tag NULL: the layout must hold exactly one image). ret_rootfs: the unpacked
 * root, absolute; ret_cached: whether it was there already. */
int image_prepare(const char *layout, const char *tag, const char *cache_dir, struct arena *a,
		  char **ret_rootfs, struct image_config *ret_config, bool *ret_cached,
		  struct ab_err *err);

#endif
