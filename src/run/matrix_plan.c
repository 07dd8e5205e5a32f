/* SPDX-License-Identifier: MIT */
/* The matrix's plan: agents from names and addresses, the pairs, the ordered cells, the verdicts. */
#define _GNU_SOURCE	/* EAI_ADDRFAMILY */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include "ctl/net.h"
#include "run/matrix.h"
#include "tx/frame.h"

static size_t addr_len(int family)
{
	return family == AF_INET ? 4 : 16;
}

static const char *family_name(int family)
{
	return family == AF_INET ? "IPv4" : "IPv6";
}

int lr_matrix_resolve(const char *host, int family, struct lr_matrix_addr *out, unsigned int max, unsigned int *n,
		      char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_family = family, .ai_socktype = SOCK_STREAM }, *res, *ai;
	int ret;

	*n = 0;
	/* no AI_ADDRCONFIG: which addresses this host has says nothing of where the agents are */
	ret = getaddrinfo(host, NULL, &hints, &res);
	if (ret) {
		snprintf(err, errlen, "'%s': %s", host,
			 ret == EAI_SYSTEM ? strerror(errno) :
			 ret == EAI_ADDRFAMILY || (ret == EAI_NONAME && family != AF_UNSPEC) ?
					     (family == AF_INET ? "no IPv4 address" : "no IPv6 address") :
					     gai_strerror(ret));
		return -ENOENT;
	}
	for (ai = res; ai && *n < max; ai = ai->ai_next) {
		struct lr_matrix_addr a = { .family = ai->ai_family };
		unsigned int i;

		if (ai->ai_family == AF_INET)
			memcpy(&a.addr, &((const struct sockaddr_in *)ai->ai_addr)->sin_addr, 4);
		else if (ai->ai_family == AF_INET6)
			memcpy(&a.addr, &((const struct sockaddr_in6 *)ai->ai_addr)->sin6_addr, 16);
		else
			continue;
		for (i = 0; i < *n; i++)
			if (out[i].family == a.family && !memcmp(&out[i].addr, &a.addr, addr_len(a.family)))
				break;
		if (i == *n)
			out[(*n)++] = a;
	}
	freeaddrinfo(res);
	if (!*n) {
		snprintf(err, errlen, "'%s': no IPv4 or IPv6 address", host);
		return -ENOENT;
	}
	return 0;
}

static int agent_cmp(const void *x, const void *y)
{
	const struct lr_matrix_agent *a = x, *b = y;
	int d;

	if (a->a.family != b->a.family)
		return a->a.family == AF_INET ? -1 : 1;
	d = memcmp(&a->a.addr, &b->a.addr, addr_len(a->a.family));
	if (d)
		return d;
	return (int)a->port - (int)b->port;
}

/* The agent at @a and @port, or -1. */
static int find_agent(const struct lr_matrix_plan *p, const struct lr_matrix_addr *a, uint16_t port)
{
	unsigned int i;

	for (i = 0; i < p->nagents; i++)
		if (p->agents[i].a.family == a->family && p->agents[i].port == port &&
		    !memcmp(&p->agents[i].a.addr, &a->addr, addr_len(a->family)))
			return (int)i;
	return -1;
}

static int resolver_family(int family)
{
	return family == LR_MATRIX_FAMILY_IPV4 ? AF_INET : family == LR_MATRIX_FAMILY_IPV6 ? AF_INET6 : AF_UNSPEC;
}

static void agent_fill(struct lr_matrix_agent *g, const struct lr_matrix_addr *a, uint16_t port, const char *entry)
{
	struct lr_ctl_addr ca;

	memset(g, 0, sizeof(*g));
	g->a = *a;
	g->port = port;
	inet_ntop(a->family, &a->addr, g->address, sizeof(g->address));
	snprintf(ca.host, sizeof(ca.host), "%s", g->address);
	ca.port = port;
	lr_ctl_addr_name(&ca, g->name, sizeof(g->name));
	snprintf(g->entry, sizeof(g->entry), "%s", entry);
}

int lr_matrix_agents(struct lr_matrix_plan *p, const char (*entries)[LR_HOSTPORT_MAX], unsigned int n,
		     int family, lr_matrix_resolve_fn resolve, char *err, size_t errlen)
{
	struct lr_matrix_addr *addrs = malloc(sizeof(*addrs) * LR_MATRIX_MAX_ADDRS);
	unsigned int i, k, na, v4 = 0;
	int ret = 0;

	p->nagents = 0;
	if (!addrs) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < n && !ret; i++) {
		struct lr_ctl_addr ca;
		char why[512];

		if (lr_ctl_addr_parse(entries[i], false, &ca, why, sizeof(why))) {
			snprintf(err, errlen, "--agents: %s", why);
			ret = -EINVAL;
			break;
		}
		ret = resolve(ca.host, resolver_family(family), addrs, LR_MATRIX_MAX_ADDRS, &na, why, sizeof(why));
		if (ret) {
			snprintf(err, errlen, "--agents: %s", why);
			break;
		}
		for (k = 0; k < na; k++) {
			if (find_agent(p, &addrs[k], ca.port) >= 0)
				continue;
			if (p->nagents >= LR_MATRIX_MAX_AGENTS) {
				snprintf(err, errlen, "--agents: more than %d agents (at '%s')", LR_MATRIX_MAX_AGENTS,
					 entries[i]);
				ret = -EINVAL;
				break;
			}
			agent_fill(&p->agents[p->nagents++], &addrs[k], ca.port, entries[i]);
		}
	}
	free(addrs);
	if (ret)
		return ret;
	qsort(p->agents, p->nagents, sizeof(p->agents[0]), agent_cmp);
	for (i = 0; i < p->nagents; i++)
		v4 += p->agents[i].a.family == AF_INET;
	if (v4 && v4 < p->nagents) {
		/* sorted: IPv4 first, so the last one is an IPv6 agent */
		snprintf(err, errlen, "--agents: %s is IPv4 but %s is IPv6, and a pair needs one family: give "
			 "--family ipv4 or ipv6", p->agents[0].name, p->agents[p->nagents - 1].name);
		return -EINVAL;
	}
	if (p->nagents < 2) {
		snprintf(err, errlen, "--agents: %s; a pair needs two agents",
			 p->nagents ? "one agent only" : "no agent");
		return -EINVAL;
	}
	p->family = p->agents[0].a.family;
	return 0;
}

int lr_matrix_pairs_all(struct lr_matrix_plan *p, char *err, size_t errlen)
{
	unsigned int a, b, k = 0;

	free(p->pairs);
	p->npairs = p->nagents * (p->nagents - 1) / 2;
	p->pairs = calloc(p->npairs, sizeof(*p->pairs));
	if (!p->pairs) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (a = 0; a < p->nagents; a++)
		for (b = a + 1; b < p->nagents; b++)
			p->pairs[k++] = (struct lr_matrix_pair){ .a = a, .b = b };
	return 0;
}

/* Whether "HOST[:PORT]" @s gives its port (a bare IPv6 address does not). */
static bool port_given(const char *s)
{
	const char *c;

	if (s[0] == '[')
		return (c = strchr(s, ']')) && c[1] == ':';
	c = strchr(s, ':');
	return c && !strchr(c + 1, ':');
}

/* Whether agent @g is at one of the @na addresses of @addrs, on @port unless @any_port. */
static bool agent_at(const struct lr_matrix_agent *g, const struct lr_matrix_addr *addrs, unsigned int na,
		     bool any_port, uint16_t port)
{
	unsigned int k;

	if (!any_port && g->port != port)
		return false;
	for (k = 0; k < na; k++)
		if (addrs[k].family == g->a.family && !memcmp(&addrs[k].addr, &g->a.addr, addr_len(g->a.family)))
			return true;
	return false;
}

/* The one agent token @tok of a pairs file names: its index, or -1 with why in @why. */
static int pair_side(const struct lr_matrix_plan *p, const char *tok, lr_matrix_resolve_fn resolve, char *why,
		     size_t len)
{
	struct lr_matrix_addr addrs[LR_MATRIX_MAX_ADDRS];
	bool any_port = !port_given(tok);
	unsigned int i, na, found = 0;
	struct lr_ctl_addr ca;
	int match = -1;
	size_t off;

	if (lr_ctl_addr_parse(tok, false, &ca, why, len))
		return -1;
	if (resolve(ca.host, p->family, addrs, LR_MATRIX_MAX_ADDRS, &na, why, len))
		return -1;
	for (i = 0; i < p->nagents; i++)
		if (agent_at(&p->agents[i], addrs, na, any_port, ca.port) && !found++)
			match = (int)i;
	if (found == 1)
		return match;
	if (!found) {
		char first[INET6_ADDRSTRLEN];

		inet_ntop(addrs[0].family, &addrs[0].addr, first, sizeof(first));
		if (strcmp(first, ca.host))
			snprintf(why, len, "'%s' (%s%s) is none of the agents", tok, first, na > 1 ? ", ..." : "");
		else
			snprintf(why, len, "'%s' is none of the agents", tok);
		return -1;
	}
	off = (size_t)snprintf(why, len, "'%s' stands for %u agents (", tok, found);
	for (i = 0, found = 0; i < p->nagents && off < len; i++)
		if (agent_at(&p->agents[i], addrs, na, any_port, ca.port))
			off += (size_t)snprintf(why + off, len - off, "%s%s", found++ ? ", " : "", p->agents[i].name);
	if (off < len)
		snprintf(why + off, len - off, "): a pair names one agent on each side");
	return -1;
}

/* Line @line (NUL-terminated, comment and CR gone) into its tokens: their number, at most @max. */
static unsigned int split_tokens(char *line, char **tok, unsigned int max)
{
	unsigned int n = 0;
	char *s = line;

	for (;;) {
		s += strspn(s, " \t");
		if (!*s)
			return n;
		if (n < max)
			tok[n] = s;
		n++;
		s += strcspn(s, " \t");
		if (*s)
			*s++ = '\0';
	}
}

static int line_fail(const char *path, int line, char *err, size_t errlen, const char *why)
{
	snprintf(err, errlen, "%s:%d: %s", path, line, why);
	return -EINVAL;
}

int lr_matrix_pairs_parse(struct lr_matrix_plan *p, const char *path, const char *text, size_t len,
			  lr_matrix_resolve_fn resolve, char *err, size_t errlen)
{
	unsigned int cap = 16;
	size_t pos = 0;
	int line = 0;

	free(p->pairs);
	p->npairs = 0;
	p->pairs = malloc(cap * sizeof(*p->pairs));
	if (!p->pairs) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	while (pos < len) {
		char buf[LR_MATRIX_LINE_MAX + 1], why[512], *tok[2], *hash;
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		int side[2];
		unsigned int i, nt;
		size_t len;

		line++;
		if (n > LR_MATRIX_LINE_MAX) {
			snprintf(why, sizeof(why), "a line of more than %d characters", LR_MATRIX_LINE_MAX);
			return line_fail(path, line, err, errlen, why);
		}
		memcpy(buf, text + pos, n);
		buf[n] = '\0';
		pos += n + (nl ? 1 : 0);
		if (strlen(buf) != n)
			return line_fail(path, line, err, errlen, "a NUL character: not a text file");
		hash = strchr(buf, '#');
		if (hash)
			*hash = '\0';
		len = strlen(buf);	/* 0 after a comment that takes the whole line */
		if (len && buf[len - 1] == '\r')
			buf[len - 1] = '\0';
		nt = split_tokens(buf, tok, 2);
		if (!nt)
			continue;
		if (nt != 2) {
			snprintf(why, sizeof(why), "%u agent%s where a pair names two, as 'A B'", nt, nt == 1 ? "" : "s");
			return line_fail(path, line, err, errlen, why);
		}
		for (i = 0; i < 2; i++) {
			side[i] = pair_side(p, tok[i], resolve, why, sizeof(why));
			if (side[i] < 0)
				return line_fail(path, line, err, errlen, why);
		}
		if (side[0] == side[1]) {
			snprintf(why, sizeof(why), "'%s' and '%s' are one agent, %s: a pair needs two", tok[0], tok[1],
				 p->agents[side[0]].name);
			return line_fail(path, line, err, errlen, why);
		}
		for (i = 0; i < p->npairs; i++) {
			const struct lr_matrix_pair *q = &p->pairs[i];

			if ((q->a == (unsigned int)side[0] && q->b == (unsigned int)side[1]) ||
			    (q->a == (unsigned int)side[1] && q->b == (unsigned int)side[0])) {
				snprintf(why, sizeof(why), "the pair %s %s was named on line %d already",
					 p->agents[side[0]].name, p->agents[side[1]].name, q->line);
				return line_fail(path, line, err, errlen, why);
			}
		}
		if (p->npairs == cap) {
			struct lr_matrix_pair *more = realloc(p->pairs, 2 * cap * sizeof(*p->pairs));

			if (!more) {
				snprintf(err, errlen, "out of memory");
				return -ENOMEM;
			}
			p->pairs = more;
			cap *= 2;
		}
		p->pairs[p->npairs++] = (struct lr_matrix_pair){ (unsigned int)side[0], (unsigned int)side[1], line };
	}
	if (!p->npairs) {
		snprintf(err, errlen, "%s: no pair in it (one a line, 'A B')", path);
		return -EINVAL;
	}
	return 0;
}

int lr_matrix_pairs_load(struct lr_matrix_plan *p, const char *path, lr_matrix_resolve_fn resolve, char *err,
			 size_t errlen)
{
	struct stat st;
	char *text;
	ssize_t got;
	size_t len = 0;
	int fd, ret;

	/* O_NONBLOCK: a FIFO named by mistake is refused below rather than waited on */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "--pairs: cannot open '%s': %s", path, strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > LR_MATRIX_PAIRS_MAX_BYTES) {
		snprintf(err, errlen, "--pairs: '%s' is not a regular file of at most %u bytes", path,
			 LR_MATRIX_PAIRS_MAX_BYTES);
		close(fd);
		return -EINVAL;
	}
	text = malloc((size_t)st.st_size + 1);
	if (!text) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	while (len < (size_t)st.st_size && (got = read(fd, text + len, (size_t)st.st_size - len)) > 0)
		len += (size_t)got;
	close(fd);
	ret = lr_matrix_pairs_parse(p, path, text, len, resolve, err, errlen);
	free(text);
	return ret;
}

int lr_matrix_cells(struct lr_matrix_plan *p, const unsigned int *sizes, unsigned int nsizes, char *err,
		    size_t errlen)
{
	uint64_t want = (uint64_t)p->npairs * 2 * nsizes;
	unsigned int i, d, s, k = 0, min = lr_frame_min_size(p->family);

	for (s = 0; s < nsizes; s++)
		if (sizes[s] < min) {
			snprintf(err, errlen, "--sizes: %u bytes cannot carry the probe over %s; the minimum is %u",
				 sizes[s], family_name(p->family), min);
			return -EINVAL;
		}
	if (want > LR_MATRIX_MAX_CELLS) {
		snprintf(err, errlen, "%u pair%s x 2 directions x %u size%s make %llu cells, more than %d: name fewer "
			 "pairs with --pairs, or fewer sizes", p->npairs, p->npairs == 1 ? "" : "s", nsizes,
			 nsizes == 1 ? "" : "s", (unsigned long long)want, LR_MATRIX_MAX_CELLS);
		return -EINVAL;
	}
	free(p->cells);
	p->ncells = (unsigned int)want;
	p->cells = calloc(p->ncells ? p->ncells : 1, sizeof(*p->cells));
	if (!p->cells) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < p->npairs; i++)
		for (d = 0; d < 2; d++)
			for (s = 0; s < nsizes; s++)
				p->cells[k++] = (struct lr_matrix_cell_id){
					.tx = d ? p->pairs[i].b : p->pairs[i].a,
					.rx = d ? p->pairs[i].a : p->pairs[i].b,
					.size = sizes[s],
					.pair = i,
				};
	return 0;
}

void lr_matrix_plan_free(struct lr_matrix_plan *p)
{
	free(p->pairs);
	free(p->cells);
	p->pairs = NULL;
	p->cells = NULL;
	p->npairs = p->ncells = 0;
}

bool lr_matrix_judge(const struct lr_matrix_limits *l, bool complete, double loss_pct, double rx_pps, char *why,
		     size_t len)
{
	why[0] = '\0';
	if (l->max_loss_set && !complete) {
		snprintf(why, len, "the end-of-test markers did not all come: loss not settled");
		return false;
	}
	/* the loss is a percentage of the frames sent; the limit is kept as a fraction */
	if (l->max_loss_set && loss_pct > l->max_loss * 100 + 1e-9) {
		snprintf(why, len, "loss %.3f%% > %.4g%%", loss_pct, l->max_loss * 100);
		return false;
	}
	if (l->min_pps_set && rx_pps < (double)l->min_pps) {
		snprintf(why, len, "rx %.0f pps < %llu pps", rx_pps, (unsigned long long)l->min_pps);
		return false;
	}
	return true;
}
