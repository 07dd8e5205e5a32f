/* SPDX-License-Identifier: MIT */
/*
 * Challenge-response over a shared token (docs/protocol.md, "auth"): the token file, its key, the
 * nonces and the proofs, all through libsodium. No secret ever crosses the connection.
 */
#ifndef LINERATE_CTL_AUTH_H
#define LINERATE_CTL_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LR_AUTH_KEY_LEN	32	/* crypto_auth_KEYBYTES, and BLAKE2b-256 */
#define LR_AUTH_HEX	64	/* hex digits of a nonce (32 bytes) and of a proof (crypto_auth_BYTES) */
#define LR_AUTH_TOKEN_MAX	4096	/* a token file longer than this is no token */
#define LR_AUTH_MODE	"hmac-sha512-256"

struct lr_auth_key {
	unsigned char k[LR_AUTH_KEY_LEN];
};

/* libsodium's one-time set-up: 0, or -EIO when it cannot run (no randomness). */
int lr_auth_init(void);
/*
 * Reads a token file as ssh reads a private key: a regular file owned by root or by this user,
 * neither readable nor writable by group or others, holding at most LR_AUTH_TOKEN_MAX bytes, not
 * only white space. 0, or -errno with one line in @err that says what to do about it.
 */
int lr_auth_load(const char *path, struct lr_auth_key *key, char *err, size_t errlen);
/* The key of a token: BLAKE2b-256 of its bytes, trailing white space removed. -EINVAL when none is left. */
int lr_auth_key(const void *token, size_t len, struct lr_auth_key *key);
/* 32 random bytes as hex, NUL-terminated. */
void lr_auth_nonce(char hex[LR_AUTH_HEX + 1]);
/* True for exactly LR_AUTH_HEX lower-case hex digits. */
bool lr_auth_hex_ok(const char *s);
/*
 * The proof of @role ("agent" or "controller"): HMAC-SHA-512-256 under @key of
 * "linerate-v1 ROLE " @first @second, the two nonces in hex, as hex.
 */
void lr_auth_proof(const struct lr_auth_key *key, const char *role, const char *first, const char *second,
		   char hex[LR_AUTH_HEX + 1]);
/* Whether @proof is @role's proof over the nonces, compared in constant time (crypto_auth_verify). */
bool lr_auth_check(const struct lr_auth_key *key, const char *role, const char *first, const char *second,
		   const char *proof);

#endif
