/* SPDX-License-Identifier: MIT */
/* The shared token: the file's checks, its key, nonces and proofs (libsodium; no crypto of our own). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sodium.h>
#include "ctl/auth.h"

#define PREFIX	"linerate-v1 "

_Static_assert(crypto_auth_BYTES * 2 == LR_AUTH_HEX && crypto_auth_KEYBYTES == LR_AUTH_KEY_LEN,
	       "a proof is 64 hex digits, a key 32 bytes");

int lr_auth_init(void)
{
	return sodium_init() < 0 ? -EIO : 0;
}

/* What ssh refuses in a key file: another owner, group or other access, not a plain file. */
static int check_file(const char *path, const struct stat *st, char *err, size_t errlen)
{
	if (!S_ISREG(st->st_mode)) {
		snprintf(err, errlen, "'%s' is not a regular file", path);
		return -EINVAL;
	}
	if (st->st_uid != 0 && st->st_uid != geteuid()) {
		snprintf(err, errlen, "'%s' is owned by uid %u, neither root nor this user (uid %u): whoever owns it "
			 "can change the token", path, (unsigned int)st->st_uid, (unsigned int)geteuid());
		return -EPERM;
	}
	if (st->st_mode & (S_IRWXG | S_IRWXO)) {
		snprintf(err, errlen, "'%s' has mode %04o: group and others must have no access to a token (chmod 600 "
			 "'%s')", path, (unsigned int)(st->st_mode & 07777), path);
		return -EPERM;
	}
	return 0;
}

int lr_auth_load(const char *path, struct lr_auth_key *key, char *err, size_t errlen)
{
	unsigned char buf[LR_AUTH_TOKEN_MAX + 1];
	struct stat st;
	size_t len = 0;
	ssize_t n;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot open '%s': %s", path, strerror(-ret));
		return ret;
	}
	/* the file that was opened is the one checked: no window to swap it in between */
	if (fstat(fd, &st)) {
		ret = -errno;
		snprintf(err, errlen, "cannot stat '%s': %s", path, strerror(-ret));
		goto out;
	}
	ret = check_file(path, &st, err, errlen);
	if (ret)
		goto out;
	while (len < sizeof(buf)) {
		n = read(fd, buf + len, sizeof(buf) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			snprintf(err, errlen, "cannot read '%s': %s", path, strerror(-ret));
			goto out;
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	if (len > LR_AUTH_TOKEN_MAX) {
		snprintf(err, errlen, "'%s' holds more than %d bytes: not a token", path, LR_AUTH_TOKEN_MAX);
		ret = -EINVAL;
	} else if (lr_auth_key(buf, len, key)) {
		snprintf(err, errlen, "'%s' holds no token (it is empty or white space)", path);
		ret = -EINVAL;
	}
out:
	sodium_memzero(buf, sizeof(buf));
	close(fd);
	return ret;
}

int lr_auth_key(const void *token, size_t len, struct lr_auth_key *key)
{
	const unsigned char *t = token;

	/* an editor's final newline is not part of the secret */
	while (len && (t[len - 1] == ' ' || t[len - 1] == '\t' || t[len - 1] == '\n' || t[len - 1] == '\r'))
		len--;
	if (!len)
		return -EINVAL;
	crypto_generichash(key->k, sizeof(key->k), t, len, NULL, 0);
	return 0;
}

void lr_auth_nonce(char hex[LR_AUTH_HEX + 1])
{
	unsigned char n[LR_AUTH_HEX / 2];

	/* every session's first use, with a token or without (run's child): idempotent and thread-safe */
	lr_auth_init();
	randombytes_buf(n, sizeof(n));
	sodium_bin2hex(hex, LR_AUTH_HEX + 1, n, sizeof(n));
}

bool lr_auth_hex_ok(const char *s)
{
	size_t i;

	for (i = 0; i < LR_AUTH_HEX; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return s[i] == '\0';
}

/* "linerate-v1 ROLE FIRSTSECOND": what a proof authenticates; 0, or -EINVAL for a bad nonce or role. */
static int proof_text(const char *role, const char *first, const char *second, char *out, size_t len)
{
	int n;

	if (!lr_auth_hex_ok(first) || !lr_auth_hex_ok(second))
		return -EINVAL;
	n = snprintf(out, len, PREFIX "%s %s%s", role, first, second);
	return n < 0 || (size_t)n >= len ? -EINVAL : 0;
}

void lr_auth_proof(const struct lr_auth_key *key, const char *role, const char *first, const char *second,
		   char hex[LR_AUTH_HEX + 1])
{
	unsigned char mac[crypto_auth_BYTES];
	char text[2 * LR_AUTH_HEX + 64];

	if (proof_text(role, first, second, text, sizeof(text))) {
		hex[0] = '\0';
		return;
	}
	crypto_auth(mac, (const unsigned char *)text, strlen(text), key->k);
	sodium_bin2hex(hex, LR_AUTH_HEX + 1, mac, sizeof(mac));
}

bool lr_auth_check(const struct lr_auth_key *key, const char *role, const char *first, const char *second,
		   const char *proof)
{
	unsigned char mac[crypto_auth_BYTES];
	char text[2 * LR_AUTH_HEX + 64];
	size_t got;

	if (!lr_auth_hex_ok(proof) || proof_text(role, first, second, text, sizeof(text)))
		return false;
	if (sodium_hex2bin(mac, sizeof(mac), proof, LR_AUTH_HEX, NULL, &got, NULL) || got != sizeof(mac))
		return false;
	return !crypto_auth_verify(mac, (const unsigned char *)text, strlen(text), key->k);
}
