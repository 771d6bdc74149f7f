/* The fuzz targets' regression inputs and seed corpus, replayed without
 * libFuzzer in the normal unit run: see tests/fuzz/replay.c. */
#include "../fuzz/replay.c"
