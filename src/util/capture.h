/* SPDX-License-Identifier: MIT */
/* pcap files: an atomic writer, a lock-free sample channel from hot paths to it, and a frame reader for replay. */
#ifndef LINERATE_CAPTURE_H
#define LINERATE_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LR_PCAP_DEFAULT_COUNT	1000
#define LR_PCAP_DEFAULT_SNAPLEN	128

/*
 * A pcap file (Ethernet, nanosecond timestamps) written to a temporary name
 * beside @path and renamed into place by lr_pcap_close(): a crash never
 * leaves a truncated file under the final name. Once a record would take
 * the file past @max_bytes (0 = no cap) nothing more is written.
 */
struct lr_pcap_writer;

int lr_pcap_open(const char *path, uint64_t max_bytes, unsigned int snaplen, struct lr_pcap_writer **out, char *err,
		 size_t errlen);
/*
 * The same, into the bare name @name in the directory @dirfd (an agent's --capture-dir): refused
 * when @name is not a bare name or a file of that name is there; never replaces one (lr_out_openat).
 */
int lr_pcap_openat(int dirfd, const char *name, uint64_t max_bytes, unsigned int snaplen,
		   struct lr_pcap_writer **out, char *err, size_t errlen);
/* One record, @ts_ns on CLOCK_REALTIME. 0 written, 1 skipped (cap reached), -errno. Not thread-safe. */
int lr_pcap_write(struct lr_pcap_writer *w, uint64_t ts_ns, const void *data, unsigned int caplen, unsigned int len);
/* Flush, fsync, close, rename into place. 0 or -errno with a message. Frees @w either way. */
int lr_pcap_close(struct lr_pcap_writer *w, char *err, size_t errlen);
/* Remove the temporary file and free @w (on an error path). */
void lr_pcap_abort(struct lr_pcap_writer *w);
uint64_t lr_pcap_records(const struct lr_pcap_writer *w);
uint64_t lr_pcap_capped(const struct lr_pcap_writer *w);	/* records skipped by the size cap */

/*
 * Samples from hot paths: each producer (a worker thread) has its own
 * single-producer ring of fixed-size slots; lr_sampler_put() copies a frame
 * in with no lock, syscall or allocation and never waits (a full ring
 * counts a drop). One thread of the sampler's own drains the rings into
 * the writer.
 */
struct lr_sampler;

int lr_sampler_open(struct lr_pcap_writer *w, unsigned int producers, unsigned int snaplen, struct lr_sampler **out);
bool lr_sampler_put(struct lr_sampler *s, unsigned int producer, uint64_t ts_ns, const void *data, unsigned int len);
/* Drains what is left, stops the thread, frees the sampler (not the writer). */
void lr_sampler_close(struct lr_sampler *s);
uint64_t lr_sampler_dropped(const struct lr_sampler *s);
/*
 * For tests: rings of @slots (a power of two) and no consumer thread, so a
 * ring fills deterministically; lr_sampler_close() drains in the caller.
 */
int lr_sampler_open_unstarted(struct lr_pcap_writer *w, unsigned int producers, unsigned int snaplen,
			      unsigned int slots, struct lr_sampler **out);

/* CLOCK_REALTIME minus the stamping clock (util/clock.h), for stamping pcap records with wall-clock time. */
int64_t lr_realtime_offset(void);
/*
 * A kernel receive stamp @rt_ns (CLOCK_REALTIME) on the stamping clock, when CLOCK_REALTIME was
 * stepped between two readings of the offset (stamping clock - realtime): @off_new now, @off_old
 * before. The frame was sent at @sent and handed over by @read_ns (both on this receiver's
 * stamping clock: a sender's stamp plus the clock offset, lat = now - offset - tail), so
 * the right offset puts its arrival between the two; if both do, the shorter latency wins (a
 * path's latency is far below a step); with neither, @off_new.
 */
uint64_t lr_realtime_pick(uint64_t rt_ns, int64_t off_new, int64_t off_old, uint64_t sent, uint64_t read_ns);

/* Frames of a pcap or pcapng file, in order, for replay. */
struct lr_pcap_frame {
	uint64_t ts_ns;	/* as in the file */
	unsigned int len;
	uint8_t *data;
};

struct lr_pcap_frames {
	unsigned int n;
	struct lr_pcap_frame *f;
	unsigned int oversize;	/* frames longer than max_len, skipped */
	unsigned int first_oversize;	/* 1-based index of the first, for the message */
};

/*
 * Reads every frame of @path (libpcap reads pcap and pcapng). The link type
 * must be Ethernet; a truncated or corrupt file, or one with no frame that
 * fits, is an error with one line in @err. Frames longer than @max_len
 * (MTU + 14) are skipped and counted, never truncated.
 */
int lr_pcap_read_frames(const char *path, unsigned int max_len, struct lr_pcap_frames *out, char *err, size_t errlen);
void lr_pcap_frames_free(struct lr_pcap_frames *fr);

/*
 * Samples lost on their way to @producer's ring (a BPF ring buffer that was
 * full), counted with its own drops in lr_sampler_dropped(). From the
 * producer's thread only, like lr_sampler_put().
 */
void lr_sampler_add_dropped(struct lr_sampler *s, unsigned int producer, uint64_t n);

#endif
