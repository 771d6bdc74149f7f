/* memhog MIB: allocate and touch MIB mebibytes, one at a time, then exit 0.
 * Built static by abuse.bats and copied into the test rootfs: under a memory
 * limit it is the process the OOM killer picks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	long want = argc > 1 ? atol(argv[1]) : 256;
	for (long i = 0; i < want; i++) {
		char *p = malloc(1 << 20);
		if (!p) {
			printf("memhog: malloc failed after %ld MiB\n", i);
			return 1;
		}
		memset(p, 0x5a, 1 << 20);
	}
	printf("memhog: got %ld MiB\n", want);
	return 0;
}
