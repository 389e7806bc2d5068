/* hash.c: SHA-256 through OpenSSL's EVP interface. */
#include "hash.h"

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hash_ctx {
	EVP_MD_CTX *md;
};

struct hash_ctx *hash_begin(void)
{
	struct hash_ctx *h = malloc(sizeof(*h));
	if (!h || !(h->md = EVP_MD_CTX_new()) ||
	    EVP_DigestInit_ex(h->md, EVP_sha256(), NULL) != 1) {
		fputs("egg: error: cannot initialise sha-256\n", stderr);
		abort();
	}
	return h;
}

void hash_update(struct hash_ctx *h, const void *data, size_t len)
{
	EVP_DigestUpdate(h->md, data, len);
}

void hash_field(struct hash_ctx *h, const char *s)
{
	hash_update(h, s ? s : "", strlen(s ? s : "") + 1);
}

void hash_final(struct hash_ctx *h, char hex[HASH_HEX_LEN + 1])
{
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	EVP_DigestFinal_ex(h->md, d, &n);
	for (unsigned int i = 0; i < n && i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
	hex[HASH_HEX_LEN] = '\0';
	EVP_MD_CTX_free(h->md);
	free(h);
}

void hash_hex(const void *data, size_t len, char hex[HASH_HEX_LEN + 1])
{
	struct hash_ctx *h = hash_begin();
	hash_update(h, data, len);
	hash_final(h, hex);
}

void hash_hmac_hex(const void *key, size_t key_len, const void *data, size_t len, char hex[HASH_HEX_LEN + 1])
{
	unsigned char mac[EVP_MAX_MD_SIZE];
	size_t n = 0;
	if (!EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, key, key_len, data, len, mac, sizeof(mac), &n)) {
		fputs("egg: error: cannot compute hmac-sha-256\n", stderr);
		abort();
	}
	for (size_t i = 0; i < n && i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", mac[i]);
	hex[64] = '\0';
}

int hash_random(void *out, size_t n)
{
	return RAND_bytes(out, (int)n) == 1 ? 0 : -1;
}
