/* Text helpers the engines' edits share, and the preview of an edit. */
#ifndef AGENTBOX_SETUP_TEXT_H
#define AGENTBOX_SETUP_TEXT_H

#include <stdbool.h>

/* NULL, empty or only white space */
bool setup_blank_text(const char *s);
/* One unified diff hunk from before to after on stdout (NULL: no file). */
void setup_print_diff(const char *path, const char *before, const char *after);

#endif
