/* SHA-256 over OpenSSL's libcrypto (EVP). */
#ifndef KF_SHA256_H
#define KF_SHA256_H

#include <stddef.h>
#include "buf.h"

struct sha256 {
	void *ctx; /* EVP_MD_CTX, owned */
};

void sha256_init(struct sha256 *h);
void sha256_update(struct sha256 *h, const void *p, size_t n);
/* Writes 64 lowercase hex digits and a NUL into hex[65]; releases the ctx. */
void sha256_final_hex(struct sha256 *h, char hex[65]);
void sha256_release(struct sha256 *h);
void sha256_hex(const void *p, size_t n, char hex[65]);
int sha256_file_hex(const char *path, char hex[65], struct buf *err);

#endif
