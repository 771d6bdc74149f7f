/* The credential gateway's response scan (netfilter/gateway/scan.c): any
 * bytes, in any pieces, with pauses anywhere, come out as long as they went
 * in, changed only to the mask, never holding the secret; and the same
 * whatever the pieces, unless a pause let the start of a copy go, which
 * must then cut the stream. */
#include "fuzz.h"

#include "gateway_scan_sources.h"

#define FZ_SCAN_SECRET "fz-Secret+0123/456789"

static struct gw_matcher *fz_scan_m;

FUZZ_INIT(gateway_scan)
{
	if (fz_scan_m)
		return 0;
	fz_scan_m = gw_matcher_new();
	gw_matcher_add_secret(fz_scan_m, (const uint8_t *)FZ_SCAN_SECRET, strlen(FZ_SCAN_SECRET),
			      "Basic dXNlcjpwYXNzd29yZC0xMjM0NQ==", 0);
	gw_matcher_add_secret(fz_scan_m, (const uint8_t *)"a%41b\\u0043c&amp;d", 17, NULL, 1);
	if (gw_matcher_build(fz_scan_m) < 0)
		abort();
	return 0;
}

/* the stream through a scan in pieces of `piece`, pausing after each when
 * `pause`; *cut when it had to cut */
static struct gw_buf fz_scan_run(const uint8_t *d, size_t n, size_t piece, bool pause, bool *cut)
{
	struct gw_scan s;
	struct gw_buf out = {0}, all = {0};
	gw_scan_init(&s, fz_scan_m);
	int r = 0;
	for (size_t off = 0; r == 0 && off < n; off += piece) {
		size_t k = n - off < piece ? n - off : piece;
		r = gw_scan_feed(&s, d + off, k, &out);
		if (r == 0 && pause)
			r = gw_scan_drain(&s, &out);
		gw_buf_put(&all, gw_buf_data(&out), out.len);
		gw_buf_drop(&out, out.len);
	}
	if (r == 0)
		r = gw_scan_flush(&s, &out);
	gw_buf_put(&all, gw_buf_data(&out), out.len);
	*cut = r < 0;
	FUZZ_CHECK(!*cut || s.cut, "a failure that is no cut");
	gw_buf_free(&out);
	gw_scan_free(&s);
	return all;
}

FUZZ_TARGET(gateway_scan)
{
	if (size < 2 || size > 65536)
		return 0;
	size_t piece = data[0] % 29 + 1;
	bool pause = data[1] & 1;
	data += 2;
	size -= 2;
	bool cut_whole, cut;
	struct gw_buf whole = fz_scan_run(data, size, size ? size : 1, false, &cut_whole);
	struct gw_buf pieces = fz_scan_run(data, size, piece, pause, &cut);
	FUZZ_CHECK(!cut_whole && whole.len == size, "one piece: %zu of %zu bytes out", whole.len, size);
	for (size_t i = 0; i < size; i++)
		FUZZ_CHECK(whole.b[whole.off + i] == data[i] || whole.b[whole.off + i] == GW_SCAN_MASK,
			   "byte %zu changed to something else than the mask", i);
	FUZZ_CHECK(!(whole.len && memmem(whole.b + whole.off, whole.len, FZ_SCAN_SECRET, strlen(FZ_SCAN_SECRET))),
		   "the secret went through");
	if (!pause)
		FUZZ_CHECK(!cut && pieces.len == size && (!size || memcmp(gw_buf_data(&pieces), gw_buf_data(&whole), size) == 0),
			   "in pieces of %zu, not the same output", piece);
	else if (!cut)
		FUZZ_CHECK(pieces.len == size && !(size && memmem(pieces.b + pieces.off, pieces.len, FZ_SCAN_SECRET,
								  strlen(FZ_SCAN_SECRET))),
			   "with pauses, the secret went through");
	gw_buf_free(&whole);
	gw_buf_free(&pieces);
	return 0;
}
