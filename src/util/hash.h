/* hash.h: SHA-256 digests (OpenSSL's libcrypto), as lowercase hex. */
#ifndef EGG_HASH_H
#define EGG_HASH_H

#include <stddef.h>

#define HASH_HEX_LEN 64

/* Incremental SHA-256; hash_final writes 64 hex digits and a NUL to `hex`. */
struct hash_ctx;
struct hash_ctx *hash_begin(void);
void hash_update(struct hash_ctx *h, const void *data, size_t len);
/* Adds a string followed by a NUL separator, so fields cannot run together. */
void hash_field(struct hash_ctx *h, const char *s);
void hash_final(struct hash_ctx *h, char hex[HASH_HEX_LEN + 1]);

void hash_hex(const void *data, size_t len, char hex[HASH_HEX_LEN + 1]);
/* HMAC-SHA-256 of `data` under `key`, as 64 hex digits. */
void hash_hmac_hex(const void *key, size_t key_len, const void *data, size_t len, char hex[HASH_HEX_LEN + 1]);
/* `n` cryptographically random bytes; 0, or -1 when the source failed. */
int hash_random(void *out, size_t n);

#endif
