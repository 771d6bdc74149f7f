/* Git's metadata as kit run reads it to find what to protect in a workspace
 * (oci/kit/kit_git.h): text a box may have written in an earlier run (a
 * .gitmodules, a sub/.git file), so untrusted. The input is read as a config
 * (every key must come out lower-cased and named as git names keys, every
 * value and subsection NUL-free), and as a .git file and a .gitmodules
 * written to a scratch directory. */
#include "fuzz.h"

#include <ctype.h>
#include <fcntl.h>
#include <unistd.h>

#include "kit_git.h"

static char fz_git_dir[128];

static void fz_git_cleanup(void)
{
	fuzz_rm_tree(fz_git_dir);
}

FUZZ_INIT(gitmeta)
{
	fuzz_scratch_dir("/tmp", "gitmeta", fz_git_dir, sizeof fz_git_dir);
	atexit(fz_git_cleanup);
	return 0;
}

static void fz_git_check(const char *section, const char *sub, const char *key, const char *value, void *data)
{
	size_t *n = data;
	(*n)++;
	FUZZ_CHECK(section && *section, "an empty section");
	for (const char *p = section; *p; p++)
		FUZZ_CHECK(!isupper((unsigned char)*p) && (isalnum((unsigned char)*p) || *p == '-' || *p == '.'),
			   "section \"%s\"", section);
	FUZZ_CHECK(key && isalpha((unsigned char)key[0]), "key \"%s\"", key ? key : "(null)");
	for (const char *p = key; *p; p++)
		FUZZ_CHECK(!isupper((unsigned char)*p) && (isalnum((unsigned char)*p) || *p == '-'), "key \"%s\"", key);
	FUZZ_CHECK(!value || strlen(value) < 4096, "a value longer than a line");
	FUZZ_CHECK(!sub || strlen(sub) < 4096, "a subsection longer than a line");
}

static void fz_git_write(const char *name, const uint8_t *data, size_t size)
{
	char path[192];
	snprintf(path, sizeof path, "%s/%s", fz_git_dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		abort();
	close(fd);
}

FUZZ_TARGET(gitmeta)
{
	size_t n = 0;
	kit_git_config_each((const char *)data, size, fz_git_check, &n);
	FUZZ_CHECK(n <= size, "%zu keys from %zu bytes", n, size);

	struct arena a = {0};
	fz_git_write("file", data, size);
	int dfd = open(fz_git_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		abort();
	const char *t = kit_gitfile_target(dfd, "file", &a);
	FUZZ_CHECK(!t || (*t && strlen(t) < size), "a gitdir longer than its file");
	char **paths;
	size_t m = kit_gitmodules_paths(dfd, "file", &a, &paths);
	for (size_t i = 0; i < m; i++)
		FUZZ_CHECK(paths[i] && *paths[i], "an empty submodule path");
	struct kit_git_config_refs refs;
	kit_git_config_refs(dfd, "file", &a, &refs);
	close(dfd);
	arena_free(&a);
	return 0;
}
