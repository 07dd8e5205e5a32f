/* SPDX-License-Identifier: MIT */
/*
 * The agent's policy (docs/protocol.md, "Policy"): which interfaces, namespaces and capture names
 * a request may name, checked before anything is opened.
 */
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "ctl/msg.h"
#include "ctl/policy.h"
#include "sys/netdev.h"
#include "util/log.h"
#include "util/outfile.h"

/* The agent's rule for @ifname (here, in the namespace entered): NULL when it may be served. */
struct json_object *lr_ctl_check_iface(const struct lr_ctl_serve_opts *so, const char *ifname)
{
	char err[256], list[512] = "";
	struct lr_if ifc;
	bool match = !so->nallow;
	size_t off = 0;
	unsigned int i;

	if (!so->policy)
		return NULL;
	if (lr_if_open(ifname, &ifc, err, sizeof(err)))
		return lr_msg_error(LR_EXIT_USAGE, "%s", err);
	for (i = 0; i < so->nallow; i++) {
		match = match || !fnmatch(so->allow[i], ifname, 0);
		if (off < sizeof(list))
			off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s", i ? ", " : "", so->allow[i]);
	}
	if (!match)
		return lr_msg_error(LR_EXIT_USAGE, "interface %s is not served here: it matches none of the agent's --allow patterns (%s)",
				    ifname, list);
	if (ifc.physical && !so->allow_physical)
		return lr_msg_error(LR_EXIT_USAGE, "interface %s is a physical NIC: this agent serves one only with --allow-physical on its own command line",
				    ifname);
	return NULL;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

/* An absolute path with no empty, '.' or '..' component: what a pattern matched is where it leads. */
static bool plain_path(const char *p)
{
	return !strstr(p, "//") && !strstr(p, "/./") && !strstr(p, "/../") &&
	       !ends_with(p, "/.") && !ends_with(p, "/..") && !ends_with(p, "/");
}

/*
 * The agent's rule for a request's namespace, before anything opens it: its spelling must match
 * one of --allow-netns, with FNM_PATHNAME (a star stops at a slash, so a directory's pattern
 * holds no path that leaves it, and no '..' passes plain_path()). NULL when it may be entered.
 */
struct json_object *lr_ctl_check_netns(const struct lr_ctl_serve_opts *so, const char *netns)
{
	char list[512] = "";
	bool match = false;
	size_t off = 0;
	unsigned int i;

	if (!so->policy || !netns[0])
		return NULL;
	if (!so->nallow_netns)
		return lr_msg_error(LR_EXIT_USAGE, "network namespace '%.256s' is not served here: this agent tests only "
				    "in its own namespace (its --allow-netns GLOB lets requests name others)", netns);
	if (netns[0] == '/' && !plain_path(netns))
		return lr_msg_error(LR_EXIT_USAGE, "network namespace '%.256s': not a plain absolute path (an empty, '.' "
				    "or '..' component), which --allow-netns patterns cannot vouch for", netns);
	for (i = 0; i < so->nallow_netns; i++) {
		match = match || !fnmatch(so->allow_netns[i], netns, FNM_PATHNAME);
		if (off < sizeof(list))
			off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s", i ? ", " : "", so->allow_netns[i]);
	}
	if (!match)
		return lr_msg_error(LR_EXIT_USAGE, "network namespace '%.256s' is not served here: it matches none of the "
				    "agent's --allow-netns patterns (%s)", netns, list);
	return NULL;
}

/*
 * A receiver's capture through an agent: a bare name in its --capture-dir, else refused (no
 * controller names a path on this host). NULL, or the error to answer with.
 */
struct json_object *lr_ctl_check_capture(const struct lr_ctl_serve_opts *so, struct lr_rx_spec *rx)
{
	struct stat st;

	if (!so->policy || !rx->pcap[0])
		return NULL;
	if (so->capture_fd < 0)
		return lr_msg_error(LR_EXIT_USAGE, "prepare_rx.pcap: this agent writes no captures: start it with "
				    "--capture-dir DIR to take them there, by a bare file name");
	if (!lr_out_name_ok(rx->pcap))
		return lr_msg_error(LR_EXIT_USAGE, "prepare_rx.pcap: '%.64s' is not a bare file name: the capture goes "
				    "into the agent's --capture-dir, named by 1..%d letters, digits, '.', '_', '-' or "
				    "'+', not starting with '.'", rx->pcap, LR_OUT_NAME_MAX);
	if (!fstatat(so->capture_fd, rx->pcap, &st, AT_SYMLINK_NOFOLLOW))
		return lr_msg_error(LR_EXIT_USAGE, "prepare_rx.pcap: '%s' exists already in the agent's --capture-dir: "
				    "a capture never replaces a file; choose another name", rx->pcap);
	rx->pcap_in_dir = true;
	rx->pcap_dirfd = so->capture_fd;
	return NULL;
}

