#!/bin/bash
# helpers.bash for the attack suite: the integration helpers (bundles, state
# dirs, the runtime wrapper, teardown checks) plus what probes share.

SECURITY_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../integration/helpers.bash
. "$SECURITY_ROOT/../integration/helpers.bash"

RUNC=${RUNC:-$(command -v runc || true)}

# requires_runc: skip, saying why, where runc is missing (it is the unprotected
# reference of most probes; scripts/install-deps.sh test installs it).
requires_runc() {
	[ -n "$RUNC" ] && [ -x "$RUNC" ] || skip "needs runc as the unprotected reference"
}

# attack_worked_unprotected CONDITION_DESCRIPTION: fail the test, since the
# attack failed where nothing stops it (the probe would prove nothing).
unprotected_failed() {
	fail "the attack did not work unprotected ($*): the probe proves nothing"
}
