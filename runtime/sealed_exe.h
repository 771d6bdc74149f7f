/* Run from an unwritable view or copy of ourselves (CVE-2019-5736); see sealed_exe.c. */
#ifndef AGENTBOX_SEALED_EXE_H
#define AGENTBOX_SEALED_EXE_H

#include "error.h"

/* Returns 0 when already sealed; otherwise re-executes (does not return) or fails. */
int sealed_exe_ensure(char **argv, struct ab_err *err);

#endif
