/* Test hooks: environment variables through which the test suites inject
 * faults (AGENTBOX_FAULT_*), force the fallbacks of new kernel features
 * (AGENTBOX_FORCE_FALLBACKS), point the cgroup layout elsewhere
 * (AGENTBOX_CGROUP_ROOT) and switch the runtime back to reaching procfs by
 * the container's paths, so an attack can be shown working first
 * (AGENTBOX_TEST_PROC_BY_PATH, runtime/linux/procfs.h). They are compiled in only by a test build
 * (`make TEST_HOOKS=yes`, what `make check` runs); in any other build
 * test_hook() is NULL at compile time and the code behind it is gone, so an
 * installed agentbox reads none of them. */
#ifndef AGENTBOX_TEST_HOOKS_H
#define AGENTBOX_TEST_HOOKS_H

#include <stdlib.h>

#ifdef AGENTBOX_TEST_HOOKS
#define test_hook(name) secure_getenv(name)
#else
#define test_hook(name) ((const char *)NULL)
#endif

#endif
