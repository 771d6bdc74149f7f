/* agentbox setup's edits (runtime/setup/): daemon.json keeps every other
 * key and its order, merges into an existing runtimes object, is idempotent,
 * undoes only its own entry and refuses what is not JSON; the containerd block
 * and the Podman drop-in go in once and come out whole. */
#include <stdio.h>
#include <string.h>

#include "setup.h"
#include "util.h"
#include "tap.h"

#define BIN "/usr/bin/agentbox"

typedef int (*edit_fn)(const char *, const char *, const char *, bool, struct setup_change *, struct ab_err *);

/* one edit; *after gets the new text ("" for no file), the return value the edit's */
static int edit(edit_fn fn, const char *text, bool undo, char *after, size_t size, struct ab_err *err)
{
	struct setup_change c;
	ab_err_clear(err);
	int r = fn(text, "F", BIN, undo, &c, err);
	snprintf(after, size, "%s", r == 1 && c.after ? c.after : r == 1 ? "" : text ? text : "");
	if (r == 1)
		setup_change_free(&c);
	return r;
}

static void docker_tests(void)
{
	char out[4096], again[4096], back[4096];
	struct ab_err err;
	const char *orig = "{\"log-level\": \"warn\", \"mtu\": 1500, \"f\": 1.50e3, \"big\": 123456789012345678901234567890,"
			   " \"hosts\": [\"unix:///run/x.sock\"], \"features\": {\"buildkit\": true}, \"z\": null}";

	/* no file: one is made */
	ok(edit(setup_edit_docker, NULL, false, out, sizeof out, &err) == 1, "docker: no file: a change");
	is_str(out, "{\n  \"runtimes\": {\n    \"agentbox\": {\n      \"path\": \"" BIN "\"\n    }\n  }\n}\n",
	       "docker: no file: just the runtime");
	ok(edit(setup_edit_docker, "  \n", false, out, sizeof out, &err) == 1, "docker: a blank file counts as {}");

	/* unknown keys kept, in order, numbers as written */
	ok(edit(setup_edit_docker, orig, false, out, sizeof out, &err) == 1, "docker: add to a file with other keys");
	const char *keys[] = {"\"log-level\": \"warn\"", "\"mtu\": 1500", "\"f\": 1.50e3",
			      "\"big\": 123456789012345678901234567890", "\"unix:///run/x.sock\"", "\"buildkit\": true",
			      "\"z\": null", "\"runtimes\""};
	const char *prev = out;
	bool in_order = true;
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
		const char *at = strstr(out, keys[i]);
		in_order &= at && at >= prev;
		prev = at ? at : prev;
	}
	ok(in_order, "docker: every other key kept, in its order, numbers by their text");
	has_substr(out, "\"path\": \"" BIN "\"", "docker: the path is set");

	/* idempotent */
	ok(edit(setup_edit_docker, out, false, again, sizeof again, &err) == 0, "docker: a second run has nothing to change");

	/* undo gives the keys back, without runtimes */
	ok(edit(setup_edit_docker, out, true, back, sizeof back, &err) == 1, "docker: undo is a change");
	ok(!strstr(back, "agentbox") && strstr(back, "\"z\": null") && strstr(back, "\"mtu\": 1500"),
	   "docker: undo takes the entry out and keeps the rest");
	has_substr(back, "\"runtimes\": {}", "docker: ... leaving runtimes empty, for dockerd's SIGHUP to drop the runtime");
	ok(edit(setup_edit_docker, back, true, again, sizeof again, &err) == 0, "docker: undo twice: nothing to change");

	/* merge into an existing runtimes object; an entry of ours keeps its other keys */
	const char *rt = "{\"runtimes\": {\"crun\": {\"path\": \"/usr/bin/crun\"}, "
			 "\"agentbox\": {\"path\": \"/usr/local/sbin/agentbox\", \"runtimeArgs\": [\"--debug\"]}}, \"debug\": true}";
	ok(edit(setup_edit_docker, rt, false, out, sizeof out, &err) == 1, "docker: an old path is a change");
	has_substr(out, "\"crun\": {\n      \"path\": \"/usr/bin/crun\"", "docker: other runtimes kept");
	has_substr(out, "\"agentbox\": {\n      \"path\": \"" BIN "\",\n      \"runtimeArgs\": [\n        \"--debug\"",
		   "docker: the entry's path replaced in place, its runtimeArgs kept");
	ok(strstr(out, "\"debug\": true") > strstr(out, "\"runtimes\""), "docker: keys after runtimes stay after it");
	ok(edit(setup_edit_docker, "{\"runtimes\": {\"crun\": {\"path\": \"/usr/bin/crun\"}}}", false, out, sizeof out, &err) == 1 &&
	   strstr(out, "crun") < strstr(out, "agentbox"), "docker: added after the runtimes already there");
	ok(edit(setup_edit_docker, out, true, back, sizeof back, &err) == 1 && strstr(back, "\"runtimes\"") && strstr(back, "crun") &&
	   !strstr(back, "agentbox"), "docker: undo keeps the other runtimes");

	/* refusals */
	ok(edit(setup_edit_docker, "{\"a\": 1,}", false, out, sizeof out, &err) < 0, "docker: invalid JSON refused");
	has_substr(err.msg, "F: invalid JSON", "docker: the refusal names the file");
	ok(edit(setup_edit_docker, "[1]", false, out, sizeof out, &err) < 0, "docker: an array refused");
	ok(edit(setup_edit_docker, "{\"runtimes\": []}", false, out, sizeof out, &err) < 0, "docker: runtimes not an object refused");
	ok(edit(setup_edit_docker, "{\"runtimes\": {\"agentbox\": \"x\"}}", false, out, sizeof out, &err) < 0,
	   "docker: runtimes.agentbox not an object refused");
	ok(edit(setup_edit_docker, "{\"runtimes\": {\"agentbox\": {\"path\": \"/opt/other\"}}}", true, out, sizeof out, &err) < 0,
	   "docker: undo of an entry that runs another binary refused");
	has_substr(err.msg, "/opt/other", "docker: ... naming it");
	ok(edit(setup_edit_docker, "{\"default-runtime\": \"agentbox\", \"runtimes\": {\"agentbox\": {\"path\": \"" BIN "\"}}}",
		true, out, sizeof out, &err) < 0, "docker: undo while default-runtime is agentbox refused");
}

static void containerd_tests(void)
{
	char out[4096], again[4096], back[4096];
	struct ab_err err;
	const char *stock = "version = 2\n\n[plugins]\n  [plugins.\"io.containerd.grpc.v1.cri\"]\n"
			    "    [plugins.\"io.containerd.grpc.v1.cri\".cni]\n      bin_dir = \"/usr/lib/cni\"\n";
	ok(edit(setup_edit_containerd, stock, false, out, sizeof out, &err) == 1, "containerd: add to the stock file");
	ok(strncmp(out, stock, strlen(stock)) == 0, "containerd: the file is kept as it was, the block after it");
	has_substr(out, "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.agentbox]\n  runtime_type = \"io.containerd.runc.v2\"",
		   "containerd: the handler");
	has_substr(out, "BinaryName = \"" BIN "\"", "containerd: its binary");
	ok(edit(setup_edit_containerd, out, false, again, sizeof again, &err) == 0, "containerd: a second run has nothing to change");
	ok(edit(setup_edit_containerd, out, true, back, sizeof back, &err) == 1 && streq(back, stock),
	   "containerd: undo gives the file back byte for byte");
	ok(edit(setup_edit_containerd, NULL, false, out, sizeof out, &err) == 1 && strstr(out, "version = 2\n["),
	   "containerd: no file: a version 2 file with the handler");
	ok(edit(setup_edit_containerd, out, true, back, sizeof back, &err) == 1 && streq(back, ""),
	   "containerd: undo of that removes the file");
	ok(edit(setup_edit_containerd, "[plugins.cri]\n", false, out, sizeof out, &err) < 0, "containerd: a version 1 file refused");
	ok(edit(setup_edit_containerd, "version = 2\n[plugins.'io.containerd.grpc.v1.cri'.containerd.runtimes.agentbox]\n", false,
		out, sizeof out, &err) < 0, "containerd: a handler of the user's refused");
	has_substr(err.msg, "line 2", "containerd: ... naming its line");
}

static void podman_tests(void)
{
	char out[4096], again[4096];
	struct ab_err err;
	ok(edit(setup_edit_podman, NULL, false, out, sizeof out, &err) == 1, "podman: the drop-in is made");
	has_substr(out, "agentbox = [\"" BIN "\"]", "podman: it names the binary");
	has_substr(out, "runtime_supports_json = [\"crun\", \"runc\", \"kata\", \"runsc\", \"krun\", \"agentbox\"]",
		   "podman: Podman's own entries kept in the list it replaces");
	ok(edit(setup_edit_podman, out, false, again, sizeof again, &err) == 0, "podman: a second run has nothing to change");
	ok(edit(setup_edit_podman, out, true, again, sizeof again, &err) == 1 && streq(again, ""), "podman: undo removes it");
	ok(edit(setup_edit_podman, "[engine]\n", false, out, sizeof out, &err) < 0, "podman: a file not ours is left alone");
}

int main(void)
{
	docker_tests();
	containerd_tests();
	podman_tests();
	return tap_done();
}
