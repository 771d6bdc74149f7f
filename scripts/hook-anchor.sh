# Sourced by scripts/demo.sh, tests/run-all.sh and bench/run.sh. agentbox pins a
# netfilter hook anchor (agentbox-egress(7)); hook_anchor_cleanup removes what
# was not there when this was sourced: the mount, and the directory (a run in a
# private mount namespace leaves only its empty pin file).
hook_anchor=/run/agentbox-netfilter/anchor
hook_anchor_pinned() { [ "$(stat -f -c %T "$hook_anchor" 2>/dev/null)" = nsfs ]; }
hook_anchor_pinned && hook_anchor_before=yes || hook_anchor_before=no
[ -e "${hook_anchor%/*}" ] && hook_anchor_dir_before=yes || hook_anchor_dir_before=no

hook_anchor_cleanup() {
	[ "$hook_anchor_before" = no ] && hook_anchor_pinned && umount "$hook_anchor"
	[ "$hook_anchor_dir_before" = no ] && ! hook_anchor_pinned && rm -rf "${hook_anchor%/*}"
	return 0
}
