# Sourced by scripts/demo.sh, tests/run-all.sh and bench/run.sh. agentbox keeps
# three things per host: a netfilter hook anchor (agentbox-egress(7)), a
# read-only copy of its binary for the containers' processes (agentbox(8),
# "The runtime binary") and a pool of network namespaces made ahead of time
# (agentbox-config(5), runtime.netns_pool). host_pins_cleanup removes what was not there when this
# was sourced: the mounts, and their directories (a run in a private mount
# namespace leaves only unmounted files behind).
hook_anchor=/run/agentbox-netfilter/anchor
exe_cache=/run/agentbox-exe
netns_pool=/run/agentbox-netns
hook_anchor_pinned() { [ "$(stat -f -c %T "$hook_anchor" 2>/dev/null)" = nsfs ]; }
hook_anchor_pinned && hook_anchor_before=yes || hook_anchor_before=no
[ -e "${hook_anchor%/*}" ] && hook_anchor_dir_before=yes || hook_anchor_dir_before=no
[ -e "$exe_cache" ] && exe_cache_before=yes || exe_cache_before=no
[ -e "$netns_pool" ] && netns_pool_before=yes || netns_pool_before=no

host_pins_cleanup() {
	local f
	[ "$hook_anchor_before" = no ] && hook_anchor_pinned && umount "$hook_anchor"
	[ "$hook_anchor_dir_before" = no ] && ! hook_anchor_pinned && rm -rf "${hook_anchor%/*}"
	if [ "$exe_cache_before" = no ] && [ -d "$exe_cache" ]; then
		for f in "$exe_cache"/agentbox-*; do
			[ -e "$f" ] || continue
			while umount "$f" 2>/dev/null; do :; done
		done
		rm -rf "$exe_cache"
	fi
	if [ "$netns_pool_before" = no ] && [ -d "$netns_pool" ]; then
		# a filler the last create started may still be pinning (5 s at most)
		for f in $(seq 100); do
			pgrep -f -- '__netns-pool-fill' >/dev/null || break
			sleep 0.05
		done
		for f in "$netns_pool"/ns-* "$netns_pool"/fw-*; do
			[ -e "$f" ] || continue
			while umount "$f" 2>/dev/null; do :; done
		done
		rm -rf "$netns_pool"
	fi
	return 0
}
