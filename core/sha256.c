#include "sha256.h"
#include "xalloc.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sha256_init(struct sha256 *h)
{
	h->ctx = xcheck(EVP_MD_CTX_new(), "an OpenSSL digest context");
	if (!EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL)) {
		fputs("kforge: OpenSSL SHA-256 init failed\n", stderr);
		abort(); /* invariant: SHA-256 is in every OpenSSL provider set */
	}
}

void sha256_update(struct sha256 *h, const void *p, size_t n)
{
	EVP_DigestUpdate(h->ctx, p, n);
}

void sha256_final_hex(struct sha256 *h, char hex[65])
{
	unsigned char md[32];
	unsigned int n = 0;
	EVP_DigestFinal_ex(h->ctx, md, &n);
	for (unsigned i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	sha256_release(h);
}

void sha256_release(struct sha256 *h)
{
	if (h->ctx)
		EVP_MD_CTX_free(h->ctx);
	h->ctx = NULL;
}

void sha256_hex(const void *p, size_t n, char hex[65])
{
	struct sha256 h;
	sha256_init(&h);
	sha256_update(&h, p, n);
	sha256_final_hex(&h, hex);
}

int sha256_file_hex(const char *path, char hex[65], struct buf *err)
{
	FILE *f = fopen(path, "rb");
	unsigned char tmp[1 << 16];
	size_t n;
	struct sha256 h;

	if (!f)
		return kf_err(err, "%s: %s", path, strerror(errno));
	sha256_init(&h);
	while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0)
		sha256_update(&h, tmp, n);
	if (ferror(f)) {
		fclose(f);
		sha256_release(&h);
		return kf_err(err, "%s: read error", path);
	}
	fclose(f);
	sha256_final_hex(&h, hex);
	return 0;
}
