/* How far up a wildcard may fold names (egress_suggest.c): never above the
 * registrable domain, the label below a public suffix. A single label (com,
 * org, test) is a suffix; so are the multi-label suffixes below, a short
 * list of common ones (country second levels, hosting domains whose
 * subdomains belong to different people), not the whole Public Suffix List:
 * a name under a suffix missing here may fold one label too high, which is
 * why egress suggest folds only when asked and says so. */
#include <string.h>

#include "public_suffix.h"

static const char *const multi_label[] = {
	/* country second levels */
	"ac.jp", "ac.uk", "co.at", "co.id", "co.il", "co.in", "co.jp", "co.kr", "co.nz", "co.th", "co.uk", "co.za",
	"com.ar", "com.au", "com.br", "com.cn", "com.co", "com.hk", "com.mx", "com.my", "com.ph", "com.pl",
	"com.pt", "com.sg", "com.tr", "com.tw", "com.ua", "com.vn", "edu.au", "edu.cn", "firm.in", "gen.in",
	"go.jp", "gov.au", "gov.cn", "gov.uk", "ind.in", "ltd.uk", "me.uk", "ne.jp", "net.au", "net.br", "net.cn",
	"net.in", "net.nz", "net.pl", "net.uk", "or.at", "or.jp", "or.kr", "org.au", "org.br", "org.cn", "org.in",
	"org.nz", "org.pl", "org.uk", "org.za", "plc.uk",
	/* hosting: each subdomain someone else's */
	"appspot.com", "azurewebsites.net", "blob.core.windows.net", "cloudfront.net", "compute.amazonaws.com",
	"elasticbeanstalk.com", "firebaseapp.com", "fly.dev", "github.io", "githubusercontent.com", "gitlab.io",
	"herokuapp.com", "netlify.app", "ngrok-free.app", "ngrok.io", "onrender.com", "pages.dev", "r2.dev",
	"readthedocs.io", "s3.amazonaws.com", "trycloudflare.com", "vercel.app", "web.app", "workers.dev",
};

static size_t labels(const char *name)
{
	size_t n = 1;
	for (const char *c = name; *c; c++)
		n += *c == '.';
	return n;
}

/* name is suffix, or ends in ".suffix" */
static bool under_or_is(const char *name, const char *suffix)
{
	size_t n = strlen(name), s = strlen(suffix);
	return n == s ? strcmp(name, suffix) == 0 : n > s && name[n - s - 1] == '.' && strcmp(name + n - s, suffix) == 0;
}

bool egress_suffix_foldable(const char *parent)
{
	size_t suffix = 1;
	for (size_t i = 0; i < sizeof multi_label / sizeof multi_label[0]; i++)
		if (under_or_is(parent, multi_label[i]) && labels(multi_label[i]) > suffix)
			suffix = labels(multi_label[i]);
	return labels(parent) > suffix;
}
