/* SPDX-License-Identifier: MIT */
/* container:NAME[:IFNAME] specs and the container CLI's inspect answer: pure parsing, no system calls. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sys/container.h"
#include "util/log.h"

/* The first non-empty line of @s, blanks trimmed and control characters replaced, into @line. */
void lr_container_first_line(const char *s, char *line, size_t len)
{
	size_t n = 0;

	while (*s == '\n' || *s == '\r' || *s == ' ' || *s == '\t')
		s++;
	for (; *s && *s != '\n' && *s != '\r' && n + 1 < len; s++)
		line[n++] = isprint((unsigned char)*s) ? *s : '?';
	while (n && line[n - 1] == ' ')
		n--;
	line[n] = '\0';
}

static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '-';
}

bool lr_container_is_spec(const char *s)
{
	return s && !strncmp(s, LR_CONTAINER_PREFIX, strlen(LR_CONTAINER_PREFIX));
}

int lr_container_spec_parse(const char *spec, bool allow_if, struct lr_container_spec *out, char *err,
			    size_t errlen)
{
	const char *name, *colon, *ifname = NULL;
	size_t nlen, i;

	memset(out, 0, sizeof(*out));
	if (!lr_container_is_spec(spec)) {
		lr_msg(err, errlen, "'%s' is not " LR_CONTAINER_PREFIX "NAME", spec ? spec : "");
		return -EINVAL;
	}
	name = spec + strlen(LR_CONTAINER_PREFIX);
	colon = strchr(name, ':');
	nlen = colon ? (size_t)(colon - name) : strlen(name);
	if (!nlen) {
		lr_msg(err, errlen, "'%s' names no container (" LR_CONTAINER_PREFIX "NAME%s)", spec,
		       allow_if ? "[:IFNAME]" : "");
		return -EINVAL;
	}
	if (nlen >= sizeof(out->name)) {
		lr_msg(err, errlen, "container name '%.32s...' is too long (at most %zu characters)", name,
		       sizeof(out->name) - 1);
		return -EINVAL;
	}
	/* Docker's rule for names; IDs are hex. A leading '-' would reach the CLI as an option. */
	for (i = 0; i < nlen; i++) {
		if (!name_char(name[i]) || (!i && !isalnum((unsigned char)name[i]))) {
			lr_msg(err, errlen,
			       "'%.*s' is not a container name or ID (a letter or digit, then letters, digits, "
			       "'_', '.' or '-')", (int)nlen, name);
			return -EINVAL;
		}
	}
	if (colon) {
		ifname = colon + 1;
		if (!allow_if) {
			lr_msg(err, errlen, "'%s': a network namespace is " LR_CONTAINER_PREFIX "NAME, without an "
			       "interface", spec);
			return -EINVAL;
		}
		if (!*ifname || strlen(ifname) >= sizeof(out->ifname) || strpbrk(ifname, "/: \t\n") ||
		    !strcmp(ifname, ".") || !strcmp(ifname, "..")) {
			lr_msg(err, errlen, "'%s': '%s' is not an interface name (1..%zu characters, no '/', ':' "
			       "or blanks)", spec, ifname, sizeof(out->ifname) - 1);
			return -EINVAL;
		}
		memcpy(out->ifname, ifname, strlen(ifname) + 1);
	}
	memcpy(out->name, name, nlen);
	out->name[nlen] = '\0';
	return 0;
}

int lr_container_parse_inspect(const char *name, const char *answer, int *pid, char *err, size_t errlen)
{
	const char *p = answer, *word, *end;
	char shown[64];
	size_t n, wlen;
	long v;

	*pid = 0;
	lr_container_first_line(answer, shown, sizeof(shown));
	n = strlen(answer);
	/* One line: trailing blanks and newlines are the CLI's, anything after them is not. */
	while (n && (answer[n - 1] == '\n' || answer[n - 1] == '\r' || answer[n - 1] == ' '))
		n--;
	if (!n) {
		lr_msg(err, errlen, LR_CONTAINER_PREFIX "%s: the container CLI answered nothing to inspect", name);
		return -EINVAL;
	}
	end = answer + n;
	wlen = strspn(p, "0123456789");
	if (!wlen || wlen > 10 || p + wlen >= end || p[wlen] != ' ')
		goto bad;
	errno = 0;
	v = strtol(p, NULL, 10);
	if (errno || v > INT_MAX)
		goto bad;
	word = p + wlen;
	while (word < end && *word == ' ')
		word++;
	wlen = (size_t)(end - word);
	if (wlen == 4 && !strncmp(word, "true", 4)) {
		if (!v) {
			lr_msg(err, errlen, LR_CONTAINER_PREFIX "%s is not running (it has no process)", name);
			return -ESRCH;
		}
		*pid = (int)v;
		return 0;
	}
	if (wlen == 5 && !strncmp(word, "false", 5)) {
		lr_msg(err, errlen, LR_CONTAINER_PREFIX "%s is not running", name);
		return -ESRCH;
	}
bad:
	lr_msg(err, errlen, LR_CONTAINER_PREFIX "%s: cannot read a PID from the container CLI's answer '%s' "
	       "(want \"PID true\")", name, shown);
	return -EINVAL;
}
