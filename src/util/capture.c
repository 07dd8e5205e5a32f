/* SPDX-License-Identifier: MIT */
/* pcap files: atomic writer (temp name + rename), per-producer sample rings drained by one thread, frame reader. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <pcap/pcap.h>
#include "linerate/probe.h"
#include "util/capture.h"
#include "util/clock.h"
#include "util/frame_size.h"
#include "util/log.h"
#include "util/outfile.h"

#define NSEC_PER_SEC		1000000000ULL
#define PCAP_FILE_HDR		24
#define PCAP_REC_HDR		16
#define PCAP_MAX_SNAPLEN	65535
#define CACHELINE		64

/* Ring slots per producer: up to 1024, fewer for big snap lengths so a ring stays near 2 MiB. */
#define SAMPLER_MAX_SLOTS	1024
#define SAMPLER_MIN_SLOTS	64
#define SAMPLER_RING_BYTES	(2U << 20)
#define SAMPLER_IDLE_NS		1000000L

struct lr_pcap_writer {
	pcap_t *pcap;
	pcap_dumper_t *dump;
	FILE *f;
	uint64_t max_bytes;
	uint64_t bytes;
	uint64_t records;
	uint64_t capped;
	unsigned int snaplen;
	int err;	/* first write error, reported by lr_pcap_close() */
	struct lr_out out;	/* the temporary file, renamed into place at the end */
};

struct sample_slot {
	uint64_t ts_ns;
	uint32_t len;
	uint32_t caplen;
	uint8_t data[];
};

/*
 * One single-producer/single-consumer ring. head is written only by the
 * producer, tail only by the consumer; each sits on its own cache line so
 * the two sides do not bounce one line on every frame.
 */
struct sample_ring {
	/* producer's line */
	uint64_t head __attribute__((aligned(CACHELINE)));
	uint64_t cached_tail;	/* producer's last view of tail */
	uint64_t dropped;	/* written by the producer, read by anyone */
	/* consumer's line */
	uint64_t tail __attribute__((aligned(CACHELINE)));
	/* read-only after open */
	uint8_t *slots __attribute__((aligned(CACHELINE)));
};

struct lr_sampler {
	struct sample_ring *rings;
	unsigned int producers;
	unsigned int nslots;	/* power of two */
	unsigned int snaplen;
	size_t slot_size;
	struct lr_pcap_writer *w;
	pthread_t thread;
	bool threaded;
	int stop;
};

/* ---- writer ---- */

static void writer_free(struct lr_pcap_writer *w)
{
	if (w->dump)
		pcap_dump_close(w->dump);	/* closes w->f */
	else if (w->f)
		fclose(w->f);
	if (w->pcap)
		pcap_close(w->pcap);
	free(w);
}

/* ---- sampler ---- */

static struct sample_slot *ring_slot(const struct lr_sampler *s, const struct sample_ring *r, uint64_t idx)
{
	return (struct sample_slot *)(r->slots + (idx & (s->nslots - 1)) * s->slot_size);
}

/* Writes every published slot of every ring to the writer; returns how many. Consumer thread only. */
static unsigned int sampler_drain(struct lr_sampler *s)
{
	unsigned int i, n = 0;

	for (i = 0; i < s->producers; i++) {
		struct sample_ring *r = &s->rings[i];
		uint64_t tail = r->tail;
		/*
		 * Acquire pairs with the producer's release store of head in
		 * lr_sampler_put(): every slot below head is fully written and
		 * visible before we read it.
		 */
		uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);

		while (tail != head) {
			struct sample_slot *sl = ring_slot(s, r, tail);

			/* a write error sticks in the writer and is reported by lr_pcap_close() */
			lr_pcap_write(s->w, sl->ts_ns, sl->data, sl->caplen, sl->len);
			tail++;
			/*
			 * Release: our reads of the slot are done before the
			 * producer, acquiring tail, may overwrite it.
			 */
			__atomic_store_n(&r->tail, tail, __ATOMIC_RELEASE);
			n++;
		}
	}
	return n;
}

static void *sampler_thread(void *arg)
{
	struct lr_sampler *s = arg;
	struct timespec idle = { 0, SAMPLER_IDLE_NS };

	for (;;) {
		/*
		 * Read stop before draining: close sets it after the producers
		 * are done, so a drain that starts after seeing it and finds
		 * nothing has seen every put.
		 */
		int stop = __atomic_load_n(&s->stop, __ATOMIC_ACQUIRE);

		if (sampler_drain(s))
			continue;
		if (stop)
			break;
		nanosleep(&idle, NULL);
	}
	return NULL;
}

static unsigned int ring_slots_for(size_t slot_size)
{
	unsigned int n = SAMPLER_MAX_SLOTS;

	while (n > SAMPLER_MIN_SLOTS && (size_t)n * slot_size > SAMPLER_RING_BYTES)
		n /= 2;
	return n;
}

static int sampler_create(struct lr_pcap_writer *w, unsigned int producers, unsigned int snaplen,
			  unsigned int nslots, bool start, struct lr_sampler **out)
{
	struct lr_sampler *s;
	sigset_t all, old;
	unsigned int i;
	int err;

	*out = NULL;
	if (!w || !producers || (nslots & (nslots - 1)))
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->w = w;
	s->producers = producers;
	s->snaplen = snaplen ? snaplen : LR_PCAP_DEFAULT_SNAPLEN;
	if (s->snaplen > LR_MAX_FRAME)
		s->snaplen = LR_MAX_FRAME;
	/* keep every slot header 8-byte aligned */
	s->slot_size = (sizeof(struct sample_slot) + s->snaplen + 7) & ~(size_t)7;
	s->nslots = nslots ? nslots : ring_slots_for(s->slot_size);
	err = posix_memalign((void **)&s->rings, CACHELINE, producers * sizeof(*s->rings));
	if (err) {
		s->rings = NULL;
		err = -err;
		goto fail;
	}
	memset(s->rings, 0, producers * sizeof(*s->rings));
	for (i = 0; i < producers; i++) {
		err = posix_memalign((void **)&s->rings[i].slots, CACHELINE, s->nslots * s->slot_size);
		if (err) {
			s->rings[i].slots = NULL;
			err = -err;
			goto fail;
		}
	}
	if (start) {
		/* the thread inherits a full mask: SIGINT/SIGTERM belong to the main thread */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		err = -pthread_create(&s->thread, NULL, sampler_thread, s);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (err)
			goto fail;
		pthread_setname_np(s->thread, "lr-sampler");
		s->threaded = true;
	}
	*out = s;
	return 0;
fail:
	lr_sampler_close(s);
	return err;
}

/* ---- public: writer ---- */

/* The writer, its file opened at @dirfd's @name (@dirfd >= 0) or at the path @name, header written. */
static int writer_open(int dirfd, const char *name, uint64_t max_bytes, unsigned int snaplen,
		       struct lr_pcap_writer **out, char *err, size_t errlen)
{
	struct lr_pcap_writer *w;
	int fd, ret;

	w = calloc(1, sizeof(*w));
	if (!w) {
		lr_msg(err, errlen, "cannot write '%s': %s", name, strerror(ENOMEM));
		return -ENOMEM;
	}
	w->snaplen = snaplen && snaplen < PCAP_MAX_SNAPLEN ? snaplen : PCAP_MAX_SNAPLEN;
	w->max_bytes = max_bytes;
	w->bytes = PCAP_FILE_HDR;

	/* captures may hold foreign traffic: readable by the owner only, unless the umask says less */
	if (dirfd >= 0)
		ret = lr_out_openat(dirfd, name, LR_OUT_MODE_PCAP, &w->out, err, errlen);
	else
		ret = lr_out_open(name, LR_OUT_MODE_PCAP, &w->out, err, errlen);
	if (ret) {
		free(w);
		return ret;
	}
	fd = w->out.fd;
	if (!(w->f = fdopen(fd, "wb"))) {
		ret = -errno;
		lr_msg(err, errlen, "cannot write '%s': %s", name, strerror(-ret));
		goto fail;
	}
	w->out.fd = -1;	/* the FILE owns it now */
	w->pcap = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, (int)w->snaplen, PCAP_TSTAMP_PRECISION_NANO);
	if (!w->pcap) {
		ret = -ENOMEM;
		lr_msg(err, errlen, "cannot write '%s': %s", name, strerror(-ret));
		goto fail;
	}
	/* writes the file header at once */
	w->dump = pcap_dump_fopen(w->pcap, w->f);
	if (!w->dump) {
		ret = -EIO;
		lr_msg(err, errlen, "cannot write '%s': %s", name, pcap_geterr(w->pcap));
		goto fail;
	}
	*out = w;
	return 0;
fail:
	lr_out_abort(&w->out);
	writer_free(w);
	return ret;
}

int lr_pcap_open(const char *path, uint64_t max_bytes, unsigned int snaplen, struct lr_pcap_writer **out, char *err,
		 size_t errlen)
{
	int ret;

	*out = NULL;
	/* the whole path is checked before anything is created (a directory, a device, no such directory) */
	ret = lr_out_check("--pcap", path, false, err, errlen);
	if (ret) {
		/* the caller names the option */
		if (!strncmp(err, "--pcap: ", 8))
			memmove(err, err + 8, strlen(err + 8) + 1);
		return ret;
	}
	return writer_open(-1, path, max_bytes, snaplen, out, err, errlen);
}

int lr_pcap_openat(int dirfd, const char *name, uint64_t max_bytes, unsigned int snaplen,
		   struct lr_pcap_writer **out, char *err, size_t errlen)
{
	*out = NULL;
	return writer_open(dirfd, name, max_bytes, snaplen, out, err, errlen);
}

int lr_pcap_write(struct lr_pcap_writer *w, uint64_t ts_ns, const void *data, unsigned int caplen, unsigned int len)
{
	struct pcap_pkthdr h;

	if (caplen > len)
		caplen = len;
	if (caplen > w->snaplen)
		caplen = w->snaplen;
	/* once one record did not fit, nothing more is written: the file ends where the cap stopped it */
	if (w->capped || (w->max_bytes && w->bytes + PCAP_REC_HDR + caplen > w->max_bytes)) {
		w->capped++;
		return 1;
	}
	h.ts.tv_sec = (time_t)(ts_ns / NSEC_PER_SEC);
	h.ts.tv_usec = (suseconds_t)(ts_ns % NSEC_PER_SEC);	/* nanoseconds: the dumper is in nano mode */
	h.caplen = caplen;
	h.len = len;
	errno = 0;
	pcap_dump((u_char *)w->dump, &h, data);
	if (ferror(w->f)) {
		if (!w->err)
			w->err = errno ? -errno : -EIO;
		return w->err;
	}
	w->bytes += PCAP_REC_HDR + caplen;
	w->records++;
	return 0;
}

int lr_pcap_close(struct lr_pcap_writer *w, char *err, size_t errlen)
{
	const char *what = "cannot write";
	int ret;

	if (!w)
		return 0;
	ret = w->err;
	errno = 0;
	if (!ret && (pcap_dump_flush(w->dump) || ferror(w->f)))
		ret = errno ? -errno : -EIO;
	if (!ret && fsync(fileno(w->f))) {
		what = "cannot sync";
		ret = -errno;
	}
	pcap_dump_close(w->dump);	/* fclose: nothing left to flush after the above */
	w->dump = NULL;
	w->f = NULL;
	if (ret) {
		lr_msg(err, errlen, "%s: %s: %s", w->out.path, what, strerror(-ret));
		lr_out_abort(&w->out);
	} else {
		ret = lr_out_commit(&w->out, err, errlen);
	}
	writer_free(w);
	return ret;
}

void lr_pcap_abort(struct lr_pcap_writer *w)
{
	if (!w)
		return;
	lr_out_abort(&w->out);
	writer_free(w);
}

uint64_t lr_pcap_records(const struct lr_pcap_writer *w)
{
	return w->records;
}

uint64_t lr_pcap_capped(const struct lr_pcap_writer *w)
{
	return w->capped;
}

/* ---- public: sampler ---- */

int lr_sampler_open(struct lr_pcap_writer *w, unsigned int producers, unsigned int snaplen, struct lr_sampler **out)
{
	return sampler_create(w, producers, snaplen, 0, true, out);
}

int lr_sampler_open_unstarted(struct lr_pcap_writer *w, unsigned int producers, unsigned int snaplen,
			      unsigned int slots, struct lr_sampler **out)
{
	if (!slots)
		return -EINVAL;
	return sampler_create(w, producers, snaplen, slots, false, out);
}

bool lr_sampler_put(struct lr_sampler *s, unsigned int producer, uint64_t ts_ns, const void *data, unsigned int len)
{
	struct sample_ring *r;
	struct sample_slot *sl;
	unsigned int caplen;
	uint64_t head;

	if (producer >= s->producers)
		return false;
	r = &s->rings[producer];
	head = r->head;	/* ours alone to write */
	if (head - r->cached_tail >= s->nslots) {
		/*
		 * Acquire pairs with the consumer's release store of tail in
		 * sampler_drain(): it has finished reading every slot below
		 * tail, so those may be overwritten.
		 */
		r->cached_tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
		if (head - r->cached_tail >= s->nslots) {
			__atomic_store_n(&r->dropped, r->dropped + 1, __ATOMIC_RELAXED);
			return false;
		}
	}
	caplen = len < s->snaplen ? len : s->snaplen;
	sl = ring_slot(s, r, head);
	sl->ts_ns = ts_ns;
	sl->len = len;
	sl->caplen = caplen;
	memcpy(sl->data, data, caplen);
	/* Release: the slot's contents are visible before the consumer sees the new head. */
	__atomic_store_n(&r->head, head + 1, __ATOMIC_RELEASE);
	return true;
}

void lr_sampler_close(struct lr_sampler *s)
{
	unsigned int i;

	if (!s)
		return;
	if (s->threaded) {
		/*
		 * The caller has stopped the producers; release makes their
		 * puts visible to the drain that follows the thread's acquire
		 * of stop, so nothing published is left behind.
		 */
		__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
		pthread_join(s->thread, NULL);
	} else if (s->rings) {
		sampler_drain(s);
	}
	if (s->rings) {
		for (i = 0; i < s->producers; i++)
			free(s->rings[i].slots);
		free(s->rings);
	}
	free(s);
}

uint64_t lr_sampler_dropped(const struct lr_sampler *s)
{
	uint64_t n = 0;
	unsigned int i;

	for (i = 0; i < s->producers; i++)
		n += __atomic_load_n(&s->rings[i].dropped, __ATOMIC_RELAXED);
	return n;
}

/* Against the stamping clock, not CLOCK_MONOTONIC: in a time namespace the two differ, CLOCK_REALTIME never shifts. */
uint64_t lr_realtime_pick(uint64_t rt_ns, int64_t off_new, int64_t off_old, uint64_t sent, uint64_t read_ns)
{
	uint64_t now = rt_ns + (uint64_t)off_new, alt = rt_ns + (uint64_t)off_old;
	bool ok_now = now >= sent && now <= read_ns, ok_alt = alt >= sent && alt <= read_ns;

	if (ok_now && ok_alt)
		return alt - sent < now - sent ? alt : now;
	return ok_alt ? alt : now;
}

int64_t lr_realtime_offset(void)
{
	uint64_t width = UINT64_MAX;
	int64_t best = 0;
	unsigned int i;

	/*
	 * The realtime reading bracketed by two stamping-clock readings, and
	 * of a few tries the narrowest bracket's midpoint: a thread preempted
	 * between two reads would otherwise put its delay into every latency
	 * the offset converts (AF_PACKET's receive times), on a path whose
	 * latency is a microsecond or two.
	 */
	for (i = 0; i < 5; i++) {
		struct timespec real;
		uint64_t a, b;

		a = lr_now_bpf_ns();
		clock_gettime(CLOCK_REALTIME, &real);
		b = lr_now_bpf_ns();
		if (b - a < width) {
			width = b - a;
			best = (int64_t)real.tv_sec * (int64_t)NSEC_PER_SEC + real.tv_nsec - (int64_t)(a + (b - a) / 2);
		}
	}
	return best;
}

/* ---- public: reader ---- */

int lr_pcap_read_frames(const char *path, unsigned int max_len, struct lr_pcap_frames *out, char *err, size_t errlen)
{
	char errbuf[PCAP_ERRBUF_SIZE] = "";
	struct lr_pcap_frames fr = { 0 };
	struct pcap_pkthdr *h;
	const u_char *data;
	unsigned int idx = 0, cap = 0;
	pcap_t *p = NULL;
	struct stat st = { 0 };
	FILE *f;
	int fd, ret, dlt;

	memset(out, 0, sizeof(*out));
	/*
	 * Our own open, so a missing file reports its errno rather than a
	 * libpcap string; O_NONBLOCK so that a FIFO (or a device) is refused
	 * below instead of blocking the open until a writer comes.
	 */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		ret = -errno;
		lr_msg(err, errlen, "cannot open '%s': %s", path, strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		ret = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		close(fd);
		lr_msg(err, errlen, "cannot open '%s': %s", path,
		       ret == -EISDIR ? strerror(EISDIR) : "not a regular file (a FIFO, device or socket)");
		return ret;
	}
	f = fdopen(fd, "rb");
	if (!f) {
		ret = -errno;
		close(fd);
		lr_msg(err, errlen, "cannot open '%s': %s", path, strerror(-ret));
		return ret;
	}
	p = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_NANO, errbuf);
	if (!p) {
		fclose(f);	/* libpcap leaves it to us on failure */
		lr_msg(err, errlen, "%s: not a pcap or pcapng file: %s", path, errbuf);
		return -EINVAL;
	}
	dlt = pcap_datalink(p);
	if (dlt != DLT_EN10MB) {
		const char *name = pcap_datalink_val_to_name(dlt);

		lr_msg(err, errlen, "%s: link type %s (%d) is not Ethernet", path, name ? name : "unknown", dlt);
		ret = -EINVAL;
		goto fail;
	}
	while ((ret = pcap_next_ex(p, &h, &data)) == 1) {
		struct lr_pcap_frame *fp;

		idx++;
		if (h->len > max_len) {
			if (!fr.oversize++)
				fr.first_oversize = idx;
			continue;
		}
		if (h->caplen > h->len) {
			lr_msg(err, errlen, "%s: frame %u is corrupt (caplen %u > len %u)", path, idx, h->caplen, h->len);
			ret = -EINVAL;
			goto fail;
		}
		if (h->len < LR_ETH_HLEN) {
			lr_msg(err, errlen, "%s: frame %u is %u bytes, shorter than an Ethernet header (%u); replay needs whole frames",
			       path, idx, h->len, LR_ETH_HLEN);
			ret = -EINVAL;
			goto fail;
		}
		if (h->caplen < h->len) {
			lr_msg(err, errlen,
			       "%s: frame %u was captured truncated (caplen %u of len %u); replay needs whole frames",
			       path, idx, h->caplen, h->len);
			ret = -EINVAL;
			goto fail;
		}
		if (fr.n == cap) {
			unsigned int ncap = cap ? cap * 2 : 64;
			struct lr_pcap_frame *nf = realloc(fr.f, ncap * sizeof(*nf));

			if (!nf)
				goto nomem;
			fr.f = nf;
			cap = ncap;
		}
		fp = &fr.f[fr.n];
		fp->data = malloc(h->len ? h->len : 1);
		if (!fp->data)
			goto nomem;
		memcpy(fp->data, data, h->len);
		fp->len = h->len;
		fp->ts_ns = (uint64_t)h->ts.tv_sec * NSEC_PER_SEC + (uint64_t)h->ts.tv_usec;
		fr.n++;
	}
	if (ret == PCAP_ERROR) {
		lr_msg(err, errlen, "%s: truncated or corrupt after frame %u: %s", path, idx, pcap_geterr(p));
		ret = -EINVAL;
		goto fail;
	}
	if (!idx) {
		lr_msg(err, errlen, "%s: no frames", path);
		ret = -EINVAL;
		goto fail;
	}
	if (!fr.n) {
		lr_msg(err, errlen, "%s: no frame fits: all %u are longer than %u bytes", path, idx, max_len);
		ret = -EINVAL;
		goto fail;
	}
	pcap_close(p);
	*out = fr;
	return 0;
nomem:
	lr_msg(err, errlen, "%s: %s", path, strerror(ENOMEM));
	ret = -ENOMEM;
fail:
	pcap_close(p);	/* closes f */
	lr_pcap_frames_free(&fr);
	return ret;
}

void lr_pcap_frames_free(struct lr_pcap_frames *fr)
{
	unsigned int i;

	for (i = 0; i < fr->n; i++)
		free(fr->f[i].data);
	free(fr->f);
	memset(fr, 0, sizeof(*fr));
}

void lr_sampler_add_dropped(struct lr_sampler *s, unsigned int producer, uint64_t n)
{
	struct sample_ring *r;

	if (producer >= s->producers)
		return;
	r = &s->rings[producer];
	/* the producer's own counter, which only it writes (as in lr_sampler_put()) */
	__atomic_store_n(&r->dropped, r->dropped + n, __ATOMIC_RELAXED);
}
