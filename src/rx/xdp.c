/* SPDX-License-Identifier: MIT */
/* XDP receive backend: loads the embedded program, attaches it by bpf_link, reads its maps and sample ring. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "rx/rx.h"
#include "util/capture.h"
#include "util/choose.h"
#include "util/log.h"
#include "recv.skel.h"

#define SAMPLE_RING_BYTES	(4U << 20)	/* 4 MiB: ~28000 samples of 128 bytes in flight */
#define SAMPLE_POLL_MS		100

struct xdp_priv {
	struct recv *skel;
	int link_fd;
	void *flows;	/* mmap of the shared flow array */
	size_t flows_len;
	/* --pcap: the ring buffer's consumer thread is the writer's only user until stop */
	struct ring_buffer *rb;
	int64_t rt_offset;	/* CLOCK_REALTIME - the stamping clock, for the records' stamps */
	pthread_t thread;
	bool started;
	volatile int cap_stop;
};

static int on_sample(void *ctx, void *data, size_t size)
{
	struct lr_rx *rx = ctx;
	struct xdp_priv *x = rx->priv;
	const struct lr_rx_sample *rec = data;
	int ret;

	if (!rx->pcap || rx->pcap_err || size < sizeof(*rec) || rec->caplen > size - sizeof(*rec))
		return 0;
	ret = lr_pcap_write(rx->pcap, rec->ts_ns + (uint64_t)x->rt_offset, rec->data, rec->caplen, rec->len);
	if (ret < 0)
		rx->pcap_err = ret;
	return 0;
}

static void *sample_thread(void *arg)
{
	struct lr_rx *rx = arg;
	struct xdp_priv *x = rx->priv;
	int ret;

	while (!x->cap_stop) {
		ret = ring_buffer__poll(x->rb, SAMPLE_POLL_MS);
		if (ret < 0 && ret != -EINTR) {
			pr_warn("recv: reading the sample ring failed: %s\n", strerror(-ret));
			rx->pcap_err = ret;
			break;
		}
	}
	return NULL;
}

/* Signals stay with the main thread, whose loop turns them into a clean stop. */
static int start_sampling(struct lr_rx *rx, struct xdp_priv *x)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&x->thread, NULL, sample_thread, rx);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!err)
		x->started = true;
	return err;
}

/* The program is detached: drain what it left in the ring, then nothing writes to rx->pcap. */
static void stop_sampling(struct lr_rx *rx, struct xdp_priv *x)
{
	int ret;

	if (x->started) {
		x->cap_stop = 1;
		pthread_join(x->thread, NULL);
		x->started = false;
	}
	if (x->rb && rx->pcap && !rx->pcap_err) {
		ret = ring_buffer__consume(x->rb);
		if (ret < 0)
			rx->pcap_err = ret;
	}
}

static void xdp_close(struct lr_rx *rx)
{
	struct xdp_priv *x = rx->priv;

	if (!x)
		return;
	rx->prog_fd = -1;
	if (x->link_fd >= 0)
		close(x->link_fd);
	stop_sampling(rx, x);
	ring_buffer__free(x->rb);
	if (x->flows)
		munmap(x->flows, x->flows_len);
	recv__destroy(x->skel);
	free(rx->sources);
	free(x);
	rx->sources = NULL;
	rx->flows = NULL;
	rx->priv = NULL;
}

/* Whether a /proc fdinfo file holds "prog_id:\t@id" (a bpf_link's or a program's fd). */
static bool fdinfo_has_prog(int dirfd, const char *name, __u32 id)
{
	char buf[1024], want[32];
	ssize_t n;
	int fd;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	snprintf(want, sizeof(want), "prog_id:\t%u\n", id);
	return strstr(buf, want) != NULL;
}

/* A process (visible from here) holding an fd of program @id, its link's most often; 0 if none is. */
static int prog_holder_pid(__u32 id)
{
	DIR *proc = opendir("/proc"), *d;
	struct dirent *p, *e;
	char path[300];
	int pid = 0;

	if (!proc)
		return 0;
	while (!pid && (p = readdir(proc))) {
		if (p->d_name[0] < '1' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fdinfo", p->d_name);
		d = opendir(path);
		if (!d)
			continue;
		while ((e = readdir(d)))
			if (e->d_name[0] != '.' && fdinfo_has_prog(dirfd(d), e->d_name, id)) {
				pid = atoi(p->d_name);
				break;
			}
		closedir(d);
	}
	closedir(proc);
	return pid;
}

/*
 * What holds @ifindex's XDP hook, for the user: "linerate's receiver
 * (program xdp_count, id 42, pid 1234 linerate)", or another program's
 * name and id; "" when the hook cannot be read.
 */
void lr_rx_xdp_holder(int ifindex, char *buf, size_t len)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct bpf_prog_info info;
	__u32 ilen = sizeof(info), id;
	char comm[32] = "", who[80] = "", path[48];
	int fd, pid;

	buf[0] = '\0';
	if (bpf_xdp_query(ifindex, 0, &q))
		return;
	id = q.prog_id ? q.prog_id : q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id ? q.skb_prog_id : q.hw_prog_id;
	if (!id)
		return;
	memset(&info, 0, sizeof(info));
	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &ilen))
		info.name[0] = '\0';
	if (fd >= 0)
		close(fd);
	pid = prog_holder_pid(id);
	if (pid) {
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		f = fopen(path, "r");
		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
		snprintf(who, sizeof(who), ", pid %d%s%s", pid, comm[0] ? " " : "", comm);
	}
	snprintf(buf, len, "%s(program %s, id %u%s)", !strcmp(info.name, "xdp_count") ? "linerate's receiver " :
		 !strcmp(info.name, "xdp_reflect") ? "linerate's reflector " : "", info.name[0] ? info.name : "?", id,
		 who);
}

/* bpf_link in native mode, else generic; a killed process leaves nothing attached. */
static int attach(struct lr_rx *rx, struct xdp_priv *x, char *why, size_t len)
{
	const struct lr_rx_spec *o = rx->o;
	int prog_fd = bpf_program__fd(x->skel->progs.xdp_count);
	LIBBPF_OPTS(bpf_link_create_opts, lopts);
	int err = 0;

	if (o->xdp_mode != LR_XDP_GENERIC) {
		lopts.flags = XDP_FLAGS_DRV_MODE;
		x->link_fd = bpf_link_create(prog_fd, rx->ifc.ifindex, BPF_XDP, &lopts);
		if (x->link_fd >= 0) {
			rx->mode = "native";
			return 0;
		}
		err = -errno;
		if (o->xdp_mode == LR_XDP_NATIVE || err == -EBUSY || err == -EEXIST || err == -EPERM)
			goto fail;
		snprintf(rx->note, sizeof(rx->note), "native XDP unavailable on %s (%s); generic mode in use",
			 o->ifname, strerror(-err));
	}
	lopts.flags = XDP_FLAGS_SKB_MODE;
	x->link_fd = bpf_link_create(prog_fd, rx->ifc.ifindex, BPF_XDP, &lopts);
	if (x->link_fd >= 0) {
		rx->mode = "generic";
		return 0;
	}
	err = -errno;
fail:
	if (err == -EBUSY || err == -EEXIST) {
		char holder[192];

		lr_rx_xdp_holder(rx->ifc.ifindex, holder, sizeof(holder));
		snprintf(why, len, "%s already has an XDP program attached%s%s; detach it first (ip link set dev %s xdp "
			 "off)", o->ifname, holder[0] ? ": " : "", holder, o->ifname);
		/* busy in one mode is busy in the other: the program holds the interface */
		err = -EBUSY;
	}
	else if (err == -EPERM)
		snprintf(why, len, "attaching XDP to %s needs root (CAP_NET_ADMIN, CAP_BPF)", o->ifname);
	else
		snprintf(why, len, "cannot attach XDP (%s mode) to %s: %s",
			 o->xdp_mode == LR_XDP_NATIVE ? "native" : "generic", o->ifname, strerror(-err));
	return err;
}

static int xdp_open(struct lr_rx *rx, char *why, size_t len)
{
	const struct lr_rx_spec *o = rx->o;
	struct xdp_priv *x;
	int ret, ncpus;

	if (lr_test_disabled("xdp")) {
		snprintf(why, len, "disabled by LINERATE_TEST_DISABLE");
		return -EPERM;
	}
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0) {
		snprintf(why, len, "cannot count CPUs");
		return ncpus < 0 ? ncpus : -EINVAL;
	}
	x = calloc(1, sizeof(*x));
	rx->sources = calloc((size_t)ncpus, sizeof(*rx->sources));
	if (!x || !rx->sources) {
		free(x);
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	x->link_fd = -1;
	rx->priv = x;
	rx->nsources = ncpus;

	x->skel = recv__open();
	if (!x->skel) {
		ret = -errno;
		snprintf(why, len, "cannot open the embedded BPF object: %s", strerror(-ret));
		goto fail;
	}
	x->skel->rodata->cfg_dport = o->dst_port;
	x->skel->rodata->cfg_pass_test = o->pass;
	x->skel->rodata->cfg_clock_offset = o->clock_offset_ns;
	if (rx->pcap) {
		x->skel->rodata->cfg_sample_every = o->pcap_every ? o->pcap_every : 1;
		x->skel->rodata->cfg_sample_foreign = o->pcap_foreign;
		x->skel->rodata->cfg_snaplen = o->snaplen;
		ret = bpf_map__set_max_entries(x->skel->maps.samples, SAMPLE_RING_BYTES);
	} else {
		/* unused: the smallest ring the kernel accepts */
		ret = bpf_map__set_max_entries(x->skel->maps.samples, (__u32)sysconf(_SC_PAGESIZE));
	}
	if (ret) {
		snprintf(why, len, "cannot size the sample ring: %s", strerror(-ret));
		goto fail;
	}
	ret = recv__load(x->skel);
	if (ret) {
		/* EACCES is the verifier's refusal as often as a missing capability */
		if (ret == -EPERM || (ret == -EACCES && geteuid() != 0))
			snprintf(why, len, "loading the XDP program needs root (CAP_BPF, CAP_NET_ADMIN)");
		else
			snprintf(why, len, "cannot load the XDP program: %s (run with -vv for the verifier log)",
				 strerror(-ret));
		goto fail;
	}
	x->flows_len = sizeof(struct lr_flow_state) * LR_MAX_FLOWS;
	/* writable only for reset between tests; counting writes happen in the program */
	x->flows = mmap(NULL, x->flows_len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(x->skel->maps.flows), 0);
	if (x->flows == MAP_FAILED) {
		ret = -errno;
		x->flows = NULL;
		snprintf(why, len, "cannot map the flow table: %s", strerror(-ret));
		goto fail;
	}
	rx->flows = x->flows;
	if (rx->pcap) {
		x->rt_offset = lr_realtime_offset();
		x->rb = ring_buffer__new(bpf_map__fd(x->skel->maps.samples), on_sample, rx, NULL);
		if (!x->rb) {
			ret = -errno;
			snprintf(why, len, "cannot open the sample ring buffer: %s", strerror(-ret));
			goto fail;
		}
	}
	ret = attach(rx, x, why, len);
	if (ret)
		goto fail;
	rx->prog_fd = bpf_program__fd(x->skel->progs.xdp_count);
	if (x->rb) {
		ret = start_sampling(rx, x);
		if (ret) {
			snprintf(why, len, "cannot start the sample thread: %s", strerror(-ret));
			goto fail;
		}
	}
	return 0;
fail:
	xdp_close(rx);
	return ret;
}

static int xdp_read(struct lr_rx *rx)
{
	struct xdp_priv *x = rx->priv;
	__u32 key = 0;

	if (bpf_map__lookup_elem(x->skel->maps.rx_counters, &key, sizeof(key), rx->sources,
				 sizeof(*rx->sources) * (size_t)rx->nsources, 0))
		return -errno;
	return 0;
}

/* Detaching first makes the numbers read afterwards final, and the samples in the ring the last ones. */
static void xdp_stop(struct lr_rx *rx)
{
	struct xdp_priv *x = rx->priv;

	if (x->link_fd >= 0) {
		close(x->link_fd);
		x->link_fd = -1;
	}
	stop_sampling(rx, x);
}

static void xdp_reset(struct lr_rx *rx)
{
	struct xdp_priv *x = rx->priv;
	__u32 key = 0;

	memset(rx->sources, 0, sizeof(*rx->sources) * (size_t)rx->nsources);
	if (bpf_map__update_elem(x->skel->maps.rx_counters, &key, sizeof(key), rx->sources,
				 sizeof(*rx->sources) * (size_t)rx->nsources, BPF_ANY))
		pr_warn("recv: cannot zero the XDP counters: %s\n", strerror(errno));
	memset(x->flows, 0, x->flows_len);
}

const struct lr_rx_ops lr_rx_xdp = {
	.name = "xdp",
	.open = xdp_open,
	.read = xdp_read,
	.stop = xdp_stop,
	.reset = xdp_reset,
	.close = xdp_close,
};
