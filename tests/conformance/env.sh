# Sourced by the conformance runners: where things are.
#   ABCF_WORK      the suites, their helpers and the results (default: ./work here)
#   ABCF_AGENTBOX  the agentbox binary under test (default: the repository's build)
#   ABCF_CONFIG    its agent config (default: permissive.yaml here)
ABCF_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ABCF_REPO=$(cd "$ABCF_DIR/../.." && pwd)
export ABCF_DIR ABCF_REPO
export ABCF_WORK=${ABCF_WORK:-$ABCF_DIR/work}
export ABCF_AGENTBOX=${ABCF_AGENTBOX:-$ABCF_REPO/agentbox}
export ABCF_CONFIG=${ABCF_CONFIG:-$ABCF_DIR/permissive.yaml}
export ABCF_RESULTS=${ABCF_RESULTS:-$ABCF_WORK/results}
# The suites' commits this directory was written against (docs/conformance.md).
ABCF_RUNTIME_TOOLS_COMMIT=260e151
ABCF_CRUN_COMMIT=ba38286f
ABCF_RUNC_TAG=v1.1.5
