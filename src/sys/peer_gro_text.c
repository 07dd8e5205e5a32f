/* SPDX-License-Identifier: MIT */
/* --prepare-peer's pure text: a peer's record, /proc/locks's lines, and the lines a run prints. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sys/peer_gro.h"

#define STATE_MAGIC	"linerate-peer-gro 1\n"

/* ---- the state file (pure: tests/unit/test_peer_gro.c) ---------------------------------------- */

int lr_peer_gro_state_parse(const char *text, size_t len, struct lr_peer_gro_state *st)
{
	char buf[256], dev[LR_PREP_DEVICE_MAX + 1], gro[8], extra;
	size_t m = sizeof(STATE_MAGIC) - 1;
	int n = 0;

	memset(st, 0, sizeof(*st));
	if (!len)
		return -ENODATA;
	if (len >= sizeof(buf) || memchr(text, '\0', len) || len < m || memcmp(text, STATE_MAGIC, m))
		return -EBADMSG;
	memcpy(buf, text + m, len - m);
	buf[len - m] = '\0';
	if (sscanf(buf, "device %16s\nnetns_cookie %" SCNu64 "\ngro %7s\n%n%c", dev, &st->netns_cookie, gro, &n,
		   &extra) != 3 || !n || (size_t)n != len - m || strlen(dev) >= sizeof(st->device))
		return -EBADMSG;
	if (!strcmp(gro, "on"))
		st->gro = true;
	else if (strcmp(gro, "off"))
		return -EBADMSG;
	memcpy(st->device, dev, strlen(dev) + 1);
	return 0;
}

int lr_peer_gro_state_format(const struct lr_peer_gro_state *st, char *buf, size_t len)
{
	int n = snprintf(buf, len, STATE_MAGIC "device %s\nnetns_cookie %" PRIu64 "\ngro %s\n", st->device,
			 st->netns_cookie, st->gro ? "on" : "off");

	return n < 0 || (size_t)n >= len ? -ENOSPC : n;
}

bool lr_peer_gro_state_fits(const struct lr_peer_gro_state *st, uint64_t cookie, const char *device, bool gro,
			    bool xdp)
{
	if (cookie && st->netns_cookie && st->netns_cookie != cookie)
		return false;
	return !strcmp(st->device, device) && gro && !xdp;
}

unsigned int lr_peer_gro_count_holders(const char *locks, unsigned int major, unsigned int minor,
				       unsigned long ino)
{
	unsigned int n = 0, ma, mi;
	unsigned long in;
	const char *line;

	for (line = locks; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		char one[256], id[24], t1[16], t2[16], t3[16], dev[64];
		size_t len = strcspn(line, "\n");
		int pid;

		if (len >= sizeof(one))
			continue;
		memcpy(one, line, len);
		one[len] = '\0';
		/* "1: FLOCK  ADVISORY  READ  1234 00:1a:5678 0 EOF"; a waiter's line has "->" after the id */
		if (sscanf(one, "%23s %15s %15s %15s %d %63s", id, t1, t2, t3, &pid, dev) != 6)
			continue;
		if (strcmp(t1, "FLOCK") || strcmp(t3, "READ"))
			continue;
		if (sscanf(dev, "%x:%x:%lu", &ma, &mi, &in) == 3 && ma == major && mi == minor && in == ino)
			n++;
	}
	return n;
}

/* ---- the lines ------------------------------------------------------------------------------ */

/* "vc1 (netns lrlab-bridge-host)", or "vc1" when it is in the sender's own namespace. */
static void peer_label(const struct lr_prep_result *r, char *buf, size_t len)
{
	if (r->netns[0])
		snprintf(buf, len, "%s (netns %s)", r->device, r->netns);
	else
		snprintf(buf, len, "%s", r->device);
}

void lr_peer_gro_start_line(const struct lr_prep_result *r, const char *ifname, char *buf, size_t len)
{
	char at[LR_PREP_DEVICE_MAX + LR_PREP_NETNS_MAX + 16];

	peer_label(r, at, sizeof(at));
	switch (r->action) {
	case LR_PREP_NOT_VETH:
		snprintf(buf, len, "--prepare-peer has nothing to do: %s is no veth", ifname);
		break;
	case LR_PREP_NONE:
		snprintf(buf, len, "--prepare-peer: nothing to do: %s, the first hop's veth peer, %s; left as it is", at,
			 r->xdp ? "runs an XDP program" : "has GRO on already");
		break;
	case LR_PREP_SWITCHED:
		snprintf(buf, len, "--prepare-peer: GRO switched on at %s, the first hop's veth peer, for this test; it "
			 "was %s", at, r->gro_before ? "on" : "off");
		break;
	case LR_PREP_JOINED:
		snprintf(buf, len, "--prepare-peer: GRO at %s, the first hop's veth peer, is on for another linerate run "
			 "already; held on for this test too (it was %s before them)", at, r->gro_before ? "on" : "off");
		break;
	}
}

void lr_peer_gro_end_line(const struct lr_prep_result *r, char *buf, size_t len)
{
	char at[LR_PREP_DEVICE_MAX + LR_PREP_NETNS_MAX + 16];

	buf[0] = '\0';
	if (!r->asked)
		return;
	peer_label(r, at, sizeof(at));
	if (r->action == LR_PREP_NOT_VETH)
		snprintf(buf, len, "nothing to do: the interface is no veth");
	else if (r->action == LR_PREP_NONE)
		snprintf(buf, len, "nothing to do: %s %s", at, r->xdp ? "runs an XDP program" : "had GRO on already");
	else if (!r->released)
		snprintf(buf, len, "GRO on at %s for this test", at);
	else if (r->restored)
		snprintf(buf, len, "GRO put back %s at %s", r->gro_before ? "on" : "off", at);
	else if (r->error[0])
		snprintf(buf, len, "GRO at %s may still be on: %s", at, r->error);
	else if (r->left_on_for)
		snprintf(buf, len, "GRO left on at %s for %u other linerate run%s; the last one puts it back", at,
			 r->left_on_for, r->left_on_for == 1 ? "" : "s");
	else
		snprintf(buf, len, "GRO left on at %s for other linerate runs; the last one puts it back", at);
}
