/* The linux.resources payload of `update` (oci_resources_parse). */
#include "fuzz.h"

#include "config.h"

FUZZ_TARGET(resources)
{
	char *text = fuzz_cstr(data, size);
	struct arena a = {0};
	struct oci_resources r;
	struct ab_err err = {0};
	if (oci_resources_parse(text, "resources", &a, &r, &err) < 0) {
		FUZZ_CHECK_ERR(&err);
	} else {
		for (size_t i = 0; i < r.n_devices; i++)
			FUZZ_CHECK(strlen(r.devices[i].access) <= 3, "device access \"%s\"", r.devices[i].access);
	}
	arena_free(&a);
	free(text);
	return 0;
}
