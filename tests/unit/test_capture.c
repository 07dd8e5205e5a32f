/* SPDX-License-Identifier: MIT */
/* Unit tests for capture.c: pcap writer round trip and cap, sample rings, and the replay reader's errors. */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>
#include <pcap/pcap.h>

#include "util/capture.h"
#include "util/outfile.h"

#define NSEC_PER_SEC	1000000000ULL
#define TS0		(1700000000ULL * NSEC_PER_SEC)

static char dir[64];
static char path[128];
static char err[1024];

/* ---- helpers ---- */

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/lr-capture-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/out.pcap", dir);
	memset(err, 0, sizeof(err));
	return 0;
}

static int teardown(void **state)
{
	struct dirent *de;
	char p[512];
	DIR *d;

	(void)state;
	d = opendir(dir);
	if (d) {
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
			unlink(p);
		}
		closedir(d);
	}
	return rmdir(dir);
}

static unsigned int dir_entries(void)
{
	struct dirent *de;
	unsigned int n = 0;
	DIR *d = opendir(dir);

	assert_non_null(d);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static bool exists(const char *p)
{
	struct stat st;

	return !stat(p, &st);
}

static long file_size(const char *p)
{
	struct stat st;

	assert_int_equal(stat(p, &st), 0);
	return (long)st.st_size;
}

/* Frame i: length and bytes derived from i, so any mix-up shows. */
static unsigned int frame_len(unsigned int i)
{
	static const unsigned int lens[] = { 60, 64, 100, 127, 128, 129, 1514, 9014, 42, 1000 };

	return lens[i % (sizeof(lens) / sizeof(lens[0]))];
}

static void frame_fill(uint8_t *buf, unsigned int i, unsigned int len)
{
	unsigned int k;

	for (k = 0; k < len; k++)
		buf[k] = (uint8_t)(i * 31 + k * 7 + (k >> 8));
}

static uint64_t frame_ts(unsigned int i)
{
	return TS0 + (uint64_t)i * 1234567 + 1;
}

static pcap_t *open_raw(const char *p)
{
	char ebuf[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline_with_tstamp_precision(p, PCAP_TSTAMP_PRECISION_NANO, ebuf);

	if (!pc)
		fail_msg("libpcap cannot read %s: %s", p, ebuf);
	return pc;
}

/* A pcap file written with libpcap itself, @n frames of frame_len(), or a given link type / snap length. */
static void write_ref_pcap(const char *p, int dlt, unsigned int n, const unsigned int *lens, unsigned int snap)
{
	pcap_t *pc = pcap_open_dead_with_tstamp_precision(dlt, 65535, PCAP_TSTAMP_PRECISION_NANO);
	uint8_t buf[9100];
	pcap_dumper_t *d;
	unsigned int i;

	assert_non_null(pc);
	d = pcap_dump_open(pc, p);
	assert_non_null(d);
	for (i = 0; i < n; i++) {
		struct pcap_pkthdr h;
		unsigned int len = lens ? lens[i] : frame_len(i);

		frame_fill(buf, i, len);
		h.ts.tv_sec = frame_ts(i) / NSEC_PER_SEC;
		h.ts.tv_usec = frame_ts(i) % NSEC_PER_SEC;
		h.len = len;
		h.caplen = snap && snap < len ? snap : len;
		pcap_dump((u_char *)d, &h, buf);
	}
	pcap_dump_close(d);
	pcap_close(pc);
}

static void write_bytes(const char *p, const void *data, size_t len)
{
	FILE *f = fopen(p, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static int read_frames(unsigned int max_len, struct lr_pcap_frames *fr)
{
	memset(err, 0, sizeof(err));
	return lr_pcap_read_frames(path, max_len, fr, err, sizeof(err));
}

static void assert_err_has(const char *needle)
{
	if (!strstr(err, needle))
		fail_msg("message '%s' lacks '%s'", err, needle);
	if (strchr(err, '\n'))
		fail_msg("message '%s' is more than one line", err);
}

/* ---- writer ---- */

static void roundtrip(unsigned int snaplen)
{
	struct lr_pcap_writer *w;
	struct pcap_pkthdr *h;
	const u_char *data;
	uint8_t buf[9100];
	unsigned int i, n = 40, want_snap = snaplen ? snaplen : 65535;
	long want_size = 24;
	char tmpname[512];
	struct dirent *de;
	pcap_t *pc;
	DIR *d;

	assert_int_equal(lr_pcap_open(path, 0, snaplen, &w, err, sizeof(err)), 0);
	for (i = 0; i < n; i++) {
		frame_fill(buf, i, frame_len(i));
		assert_int_equal(lr_pcap_write(w, frame_ts(i), buf, frame_len(i), frame_len(i)), 0);
	}
	assert_int_equal(lr_pcap_records(w), n);
	assert_int_equal(lr_pcap_capped(w), 0);

	/* before close: only the temporary file, beside the final name */
	assert_false(exists(path));
	assert_int_equal(dir_entries(), 1);
	d = opendir(dir);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			snprintf(tmpname, sizeof(tmpname), "%s", de->d_name);
	closedir(d);
	assert_memory_equal(tmpname, "out.pcap.", 9);

	assert_int_equal(lr_pcap_close(w, err, sizeof(err)), 0);
	assert_true(exists(path));
	assert_int_equal(dir_entries(), 1);
	{
		struct stat st;

		/* a capture may hold other people's traffic: 0600 less the umask, never wider */
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(st.st_mode & 0777, 0600 & ~lr_umask());
	}

	pc = open_raw(path);
	assert_int_equal(pcap_datalink(pc), DLT_EN10MB);
	assert_int_equal(pcap_snapshot(pc), (int)want_snap);
	for (i = 0; i < n; i++) {
		unsigned int len = frame_len(i), cap = len < want_snap ? len : want_snap;

		assert_int_equal(pcap_next_ex(pc, &h, &data), 1);
		assert_int_equal(h->len, len);
		assert_int_equal(h->caplen, cap);
		assert_int_equal((uint64_t)h->ts.tv_sec * NSEC_PER_SEC + (uint64_t)h->ts.tv_usec, frame_ts(i));
		frame_fill(buf, i, len);
		assert_memory_equal(data, buf, cap);
	}
	assert_int_equal(pcap_next_ex(pc, &h, &data), PCAP_ERROR_BREAK);
	pcap_close(pc);

	/* libpcap's reader cuts records to the snap length itself: check the bytes on disk too */
	for (i = 0; i < n; i++)
		want_size += 16 + (frame_len(i) < want_snap ? frame_len(i) : want_snap);
	assert_int_equal(file_size(path), want_size);
}

static void test_writer_roundtrip(void **state)
{
	(void)state;
	roundtrip(0);
}

static void test_writer_roundtrip_snaplen(void **state)
{
	(void)state;
	roundtrip(128);
}

/* The caller's caplen is honoured too: the record keeps len, carries caplen bytes. */
static void test_writer_caller_caplen(void **state)
{
	struct lr_pcap_writer *w;
	struct pcap_pkthdr *h;
	const u_char *data;
	uint8_t buf[200];
	pcap_t *pc;

	(void)state;
	frame_fill(buf, 3, sizeof(buf));
	assert_int_equal(lr_pcap_open(path, 0, 0, &w, err, sizeof(err)), 0);
	assert_int_equal(lr_pcap_write(w, TS0 + 5, buf, 50, 200), 0);
	assert_int_equal(lr_pcap_close(w, err, sizeof(err)), 0);
	pc = open_raw(path);
	assert_int_equal(pcap_next_ex(pc, &h, &data), 1);
	assert_int_equal(h->caplen, 50);
	assert_int_equal(h->len, 200);
	assert_memory_equal(data, buf, 50);
	pcap_close(pc);
}

static void test_writer_max_bytes(void **state)
{
	const unsigned int rec = 16 + 100;
	struct lr_pcap_writer *w;
	uint8_t buf[100] = { 0 };
	unsigned int i, fits;

	(void)state;
	/* exactly three records fit, the fourth would pass the cap by one byte */
	assert_int_equal(lr_pcap_open(path, 24 + 4 * rec - 1, 0, &w, err, sizeof(err)), 0);
	for (i = 0; i < 10; i++)
		assert_int_equal(lr_pcap_write(w, TS0 + i, buf, sizeof(buf), sizeof(buf)), i < 3 ? 0 : 1);
	/* a smaller record that would fit is not written either: the file ends at the cap */
	assert_int_equal(lr_pcap_write(w, TS0 + 11, buf, 1, 1), 1);
	assert_int_equal(lr_pcap_records(w), 3);
	assert_int_equal(lr_pcap_capped(w), 8);
	assert_int_equal(lr_pcap_close(w, err, sizeof(err)), 0);
	assert_int_equal(file_size(path), 24 + 3 * rec);

	/* a cap met exactly still takes the record */
	fits = 24 + 2 * rec;
	assert_int_equal(lr_pcap_open(path, fits, 0, &w, err, sizeof(err)), 0);
	for (i = 0; i < 3; i++)
		lr_pcap_write(w, TS0 + i, buf, sizeof(buf), sizeof(buf));
	assert_int_equal(lr_pcap_records(w), 2);
	assert_int_equal(lr_pcap_capped(w), 1);
	assert_int_equal(lr_pcap_close(w, err, sizeof(err)), 0);
	assert_int_equal(file_size(path), fits);
}

static void test_writer_abort(void **state)
{
	struct lr_pcap_writer *w;
	uint8_t buf[64] = { 0 };

	(void)state;
	assert_int_equal(lr_pcap_open(path, 0, 0, &w, err, sizeof(err)), 0);
	assert_int_equal(lr_pcap_write(w, TS0, buf, sizeof(buf), sizeof(buf)), 0);
	assert_int_equal(dir_entries(), 1);
	lr_pcap_abort(w);
	assert_int_equal(dir_entries(), 0);
	assert_false(exists(path));
}

static void test_writer_unwritable(void **state)
{
	struct lr_pcap_writer *w = (void *)1;
	char bad[256];

	(void)state;
	snprintf(bad, sizeof(bad), "%s/no-such-dir/x.pcap", dir);
	assert_int_equal(lr_pcap_open(bad, 0, 0, &w, err, sizeof(err)), -ENOENT);
	assert_null(w);
	assert_err_has("cannot write '");
	assert_err_has(bad);
	assert_err_has("No such file or directory");
	assert_int_equal(dir_entries(), 0);
}

/* ---- sampler ---- */

#define K		20000
#define SNAP		128

struct producer {
	struct lr_sampler *s;
	unsigned int id;
	unsigned int ok;
};

/* Payload: producer id and sequence number, then a pattern; length varies around the snap length. */
static unsigned int sample_len(unsigned int seq)
{
	return 60 + (seq * 13) % 200;
}

static void sample_fill(uint8_t *buf, unsigned int id, unsigned int seq, unsigned int len)
{
	unsigned int k;

	memcpy(buf, &id, 4);
	memcpy(buf + 4, &seq, 4);
	for (k = 8; k < len; k++)
		buf[k] = (uint8_t)(id + seq + k);
}

static void *producer_run(void *arg)
{
	struct producer *p = arg;
	uint8_t buf[300];
	unsigned int seq;

	for (seq = 0; seq < K; seq++) {
		unsigned int len = sample_len(seq);

		sample_fill(buf, p->id, seq, len);
		if (lr_sampler_put(p->s, p->id, TS0 + seq, buf, len))
			p->ok++;
		/* now and then let the consumer catch up, so most frames get through */
		if (!(seq % 256)) {
			struct timespec t = { 0, 200000 };

			nanosleep(&t, NULL);
		}
	}
	return NULL;
}

static void test_sampler_two_producers(void **state)
{
	struct producer p[2] = { 0 };
	pthread_t t[2];
	struct lr_pcap_writer *w;
	struct lr_sampler *s;
	struct pcap_pkthdr *h;
	const u_char *data;
	unsigned int i, records = 0, got[2] = { 0 };
	int next[2] = { 0, 0 };
	uint64_t dropped;
	uint8_t buf[300];
	pcap_t *pc;

	(void)state;
	assert_int_equal(lr_pcap_open(path, 0, 0, &w, err, sizeof(err)), 0);
	assert_int_equal(lr_sampler_open(w, 2, SNAP, &s), 0);
	for (i = 0; i < 2; i++) {
		p[i].s = s;
		p[i].id = i;
		assert_int_equal(pthread_create(&t[i], NULL, producer_run, &p[i]), 0);
	}
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	dropped = lr_sampler_dropped(s);
	lr_sampler_close(s);
	assert_int_equal(dropped + p[0].ok + p[1].ok, 2 * K);
	assert_int_equal(lr_pcap_records(w), p[0].ok + p[1].ok);
	assert_int_equal(lr_pcap_close(w, err, sizeof(err)), 0);

	pc = open_raw(path);
	while (pcap_next_ex(pc, &h, &data) == 1) {
		unsigned int id, seq, len;

		records++;
		assert_true(h->caplen >= 8);
		memcpy(&id, data, 4);
		memcpy(&seq, data + 4, 4);
		assert_in_range(id, 0, 1);
		/* in order within a producer; gaps only where a put was refused */
		if ((int)seq < next[id])
			fail_msg("producer %u: seq %u after %d", id, seq, next[id] - 1);
		next[id] = (int)seq + 1;
		got[id]++;
		len = sample_len(seq);
		assert_int_equal(h->len, len);
		assert_int_equal(h->caplen, len < SNAP ? len : SNAP);
		assert_int_equal((uint64_t)h->ts.tv_sec * NSEC_PER_SEC + (uint64_t)h->ts.tv_usec, TS0 + seq);
		sample_fill(buf, id, seq, len);
		assert_memory_equal(data, buf, h->caplen);
	}
	pcap_close(pc);
	assert_int_equal(got[0], p[0].ok);
	assert_int_equal(got[1], p[1].ok);
	assert_int_equal(records + dropped, 2 * K);
}

static void test_sampler_full_ring(void **state)
{
	struct lr_pcap_writer *w;
	struct lr_sampler *s;
	struct pcap_pkthdr *h;
	const u_char *data;
	uint8_t buf[64];
	unsigned int i, seq;
	pcap_t *pc;

	(void)state;
	assert_int_equal(lr_pcap_open(path, 0, 0, &w, err, sizeof(err)), 0);
	assert_int_equal(lr_sampler_open_unstarted(w, 2, 0, 3, &s), -EINVAL);	/* not a power of two */
	assert_int_equal(lr_sampler_open_unstarted(w, 2, 0, 8, &s), 0);
	for (i = 0; i < 8; i++) {
		sample_fill(buf, 0, i, sizeof(buf));
		assert_true(lr_sampler_put(s, 0, TS0 + i, buf, sizeof(buf)));
	}
	assert_int_equal(lr_sampler_dropped(s), 0);
	for (i = 8; i < 12; i++) {
		sample_fill(buf, 0, i, sizeof(buf));
		assert_false(lr_sampler_put(s, 0, TS0 + i, buf, sizeof(buf)));
	}
	assert_int_equal(lr_sampler_dropped(s), 4);
	/* the other producer's ring is its own */
	sample_fill(buf, 1, 0, sizeof(buf));
	assert_true(lr_sampler_put(s, 1, TS0 + 100, buf, sizeof(buf)));
	assert_false(lr_sampler_put(s, 2, TS0, buf, sizeof(buf)));	/* no such producer */
	assert_int_equal(lr_sampler_dropped(s), 4);
	lr_sampler_close(s);
	assert_int_equal(lr_pcap_records(w), 9);
	assert_int_equal(lr_pcap_close(w, err, sizeof(err)), 0);

	pc = open_raw(path);
	for (i = 0; i < 9; i++) {
		unsigned int id;

		assert_int_equal(pcap_next_ex(pc, &h, &data), 1);
		memcpy(&id, data, 4);
		memcpy(&seq, data + 4, 4);
		assert_int_equal(id, i < 8 ? 0 : 1);
		assert_int_equal(seq, i < 8 ? i : 0);
	}
	assert_int_equal(pcap_next_ex(pc, &h, &data), PCAP_ERROR_BREAK);
	pcap_close(pc);
}

static void test_realtime_offset(void **state)
{
	struct timespec mono, real;
	int64_t off = lr_realtime_offset(), diff;

	(void)state;
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	diff = ((int64_t)real.tv_sec * (int64_t)NSEC_PER_SEC + real.tv_nsec) -
	       ((int64_t)mono.tv_sec * (int64_t)NSEC_PER_SEC + mono.tv_nsec + off);
	assert_true(diff > -100000000 && diff < 100000000);
	assert_true(off > 0);
}

/* ---- reader ---- */

static void test_read_pcap(void **state)
{
	struct lr_pcap_frames fr;
	uint8_t buf[9100];
	unsigned int i;

	(void)state;
	write_ref_pcap(path, DLT_EN10MB, 10, NULL, 0);
	assert_int_equal(read_frames(9014, &fr), 0);
	assert_int_equal(fr.n, 10);
	assert_int_equal(fr.oversize, 0);
	for (i = 0; i < fr.n; i++) {
		assert_int_equal(fr.f[i].len, frame_len(i));
		assert_int_equal(fr.f[i].ts_ns, frame_ts(i));
		frame_fill(buf, i, frame_len(i));
		assert_memory_equal(fr.f[i].data, buf, frame_len(i));
	}
	lr_pcap_frames_free(&fr);
	assert_int_equal(fr.n, 0);
	assert_null(fr.f);
}

/* Our writer's output reads back through our reader. */
static void test_read_own_output(void **state)
{
	struct lr_pcap_writer *w;
	struct lr_pcap_frames fr;
	uint8_t buf[9100];
	unsigned int i;

	(void)state;
	assert_int_equal(lr_pcap_open(path, 0, 0, &w, err, sizeof(err)), 0);
	for (i = 0; i < 10; i++) {
		frame_fill(buf, i, frame_len(i));
		assert_int_equal(lr_pcap_write(w, frame_ts(i), buf, frame_len(i), frame_len(i)), 0);
	}
	assert_int_equal(lr_pcap_close(w, err, sizeof(err)), 0);
	assert_int_equal(read_frames(9014, &fr), 0);
	assert_int_equal(fr.n, 10);
	for (i = 0; i < fr.n; i++) {
		frame_fill(buf, i, frame_len(i));
		assert_int_equal(fr.f[i].len, frame_len(i));
		assert_int_equal(fr.f[i].ts_ns, frame_ts(i));
		assert_memory_equal(fr.f[i].data, buf, frame_len(i));
	}
	lr_pcap_frames_free(&fr);
}

static uint8_t *put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
	return p + 4;
}

static uint8_t *put16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, 2);
	return p + 2;
}

/* A minimal pcapng in host byte order: SHB, IDB (Ethernet, if_tsresol = 9), one EPB per frame. */
static size_t make_pcapng(uint8_t *out, unsigned int n)
{
	uint8_t *p = out;
	unsigned int i;

	/* section header block */
	p = put32(p, 0x0a0d0d0a);
	p = put32(p, 28);
	p = put32(p, 0x1a2b3c4d);
	p = put16(p, 1);
	p = put16(p, 0);
	p = put32(p, 0xffffffff);	/* section length -1: unknown */
	p = put32(p, 0xffffffff);
	p = put32(p, 28);
	/* interface description block with if_tsresol (9) = 9: nanoseconds */
	p = put32(p, 1);
	p = put32(p, 32);
	p = put16(p, 1);	/* LINKTYPE_ETHERNET */
	p = put16(p, 0);
	p = put32(p, 65535);
	p = put16(p, 9);
	p = put16(p, 1);
	*p++ = 9;
	*p++ = 0, *p++ = 0, *p++ = 0;
	p = put32(p, 0);	/* opt_endofopt */
	p = put32(p, 32);
	/* enhanced packet blocks */
	for (i = 0; i < n; i++) {
		unsigned int len = frame_len(i), pad = (len + 3) & ~3U;
		uint64_t ts = frame_ts(i);

		p = put32(p, 6);
		p = put32(p, 32 + pad);
		p = put32(p, 0);
		p = put32(p, (uint32_t)(ts >> 32));
		p = put32(p, (uint32_t)ts);
		p = put32(p, len);
		p = put32(p, len);
		frame_fill(p, i, len);
		memset(p + len, 0, pad - len);
		p += pad;
		p = put32(p, 32 + pad);
	}
	return (size_t)(p - out);
}

static void test_read_pcapng(void **state)
{
	static uint8_t file[64 * 1024];
	struct lr_pcap_frames fr;
	uint8_t buf[9100];
	unsigned int i;

	(void)state;
	snprintf(path, sizeof(path), "%s/in.pcapng", dir);
	write_bytes(path, file, make_pcapng(file, 6));
	assert_int_equal(read_frames(9014, &fr), 0);
	assert_int_equal(fr.n, 6);
	for (i = 0; i < fr.n; i++) {
		frame_fill(buf, i, frame_len(i));
		assert_int_equal(fr.f[i].len, frame_len(i));
		assert_int_equal(fr.f[i].ts_ns, frame_ts(i));
		assert_memory_equal(fr.f[i].data, buf, frame_len(i));
	}
	lr_pcap_frames_free(&fr);
}

static void test_read_truncated(void **state)
{
	struct lr_pcap_frames fr;
	long size;

	(void)state;
	write_ref_pcap(path, DLT_EN10MB, 5, NULL, 0);
	size = file_size(path);
	/* the last frame is frame_len(4) = 128 bytes: cut it in half */
	assert_int_equal(truncate(path, size - 64), 0);
	assert_int_equal(read_frames(9014, &fr), -EINVAL);
	assert_err_has(path);
	assert_err_has("truncated or corrupt after frame 4");
	assert_null(fr.f);

	/* cut inside a record header */
	assert_int_equal(truncate(path, size - 128 - 8), 0);
	assert_int_equal(read_frames(9014, &fr), -EINVAL);
	assert_err_has("truncated or corrupt after frame 4");
}

static void test_read_corrupt_header(void **state)
{
	struct lr_pcap_frames fr;
	uint8_t junk[256];
	unsigned int i, seed = 12345;

	(void)state;
	memcpy(junk, "junk", 4);
	for (i = 4; i < sizeof(junk); i++) {
		seed = seed * 1103515245 + 12345;
		junk[i] = (uint8_t)(seed >> 16);
	}
	write_bytes(path, junk, sizeof(junk));
	assert_int_equal(read_frames(9014, &fr), -EINVAL);
	assert_err_has(path);
	assert_err_has("not a pcap or pcapng file");

	/* a file too short for any header */
	write_bytes(path, junk, 3);
	assert_int_equal(read_frames(9014, &fr), -EINVAL);
	assert_err_has("not a pcap or pcapng file");
}

static void test_read_not_ethernet(void **state)
{
	struct lr_pcap_frames fr;

	(void)state;
	write_ref_pcap(path, DLT_RAW, 2, NULL, 0);
	assert_int_equal(read_frames(9014, &fr), -EINVAL);
	assert_err_has(path);
	assert_err_has("link type RAW (");
	assert_err_has("is not Ethernet");
}

static void test_read_oversize(void **state)
{
	static const unsigned int lens[] = { 100, 2000, 100, 3000, 1514 };
	struct lr_pcap_frames fr;
	uint8_t buf[100];

	(void)state;
	write_ref_pcap(path, DLT_EN10MB, 5, lens, 0);
	assert_int_equal(read_frames(1514, &fr), 0);
	assert_int_equal(fr.n, 3);
	assert_int_equal(fr.oversize, 2);
	assert_int_equal(fr.first_oversize, 2);
	assert_int_equal(fr.f[1].len, 100);
	assert_int_equal(fr.f[1].ts_ns, frame_ts(2));
	frame_fill(buf, 2, 100);
	assert_memory_equal(fr.f[1].data, buf, 100);
	assert_int_equal(fr.f[2].len, 1514);
	lr_pcap_frames_free(&fr);

	/* nothing fits */
	assert_int_equal(read_frames(99, &fr), -EINVAL);
	assert_err_has("no frame fits");
	assert_null(fr.f);
}

static void test_read_snapped(void **state)
{
	static const unsigned int lens[] = { 60, 100, 60 };
	struct lr_pcap_frames fr;

	(void)state;
	write_ref_pcap(path, DLT_EN10MB, 3, lens, 64);
	assert_int_equal(read_frames(1514, &fr), -EINVAL);
	assert_err_has("frame 2 was captured truncated (caplen 64 of len 100)");
}

static void test_read_missing(void **state)
{
	struct lr_pcap_frames fr;

	(void)state;
	snprintf(path, sizeof(path), "%s/missing.pcap", dir);
	assert_int_equal(read_frames(1514, &fr), -ENOENT);
	assert_err_has("cannot open '");
	assert_err_has(path);
	assert_err_has("No such file or directory");

	snprintf(path, sizeof(path), "%s", dir);
	assert_int_equal(read_frames(1514, &fr), -EISDIR);
	assert_err_has("Is a directory");
}

/* A record claiming more captured bytes than the frame had: corrupt, not silently cut. */
static void test_read_caplen_over_len(void **state)
{
	struct lr_pcap_frames fr;
	uint8_t file[24 + 16 + 100] = { 0 }, *p = file;

	(void)state;
	p = put32(p, 0xa1b23c4d);	/* nanosecond pcap, host order */
	p = put16(p, 2);
	p = put16(p, 4);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put32(p, 65535);
	p = put32(p, 1);
	p = put32(p, 1700000000);
	p = put32(p, 0);
	p = put32(p, 100);
	p = put32(p, 60);
	write_bytes(path, file, sizeof(file));
	assert_int_equal(read_frames(1514, &fr), -EINVAL);
	assert_err_has("frame 1 is corrupt (caplen 100 > len 60)");
}

static void test_read_empty(void **state)
{
	struct lr_pcap_frames fr;

	(void)state;
	write_ref_pcap(path, DLT_EN10MB, 0, NULL, 0);
	assert_int_equal(read_frames(1514, &fr), -EINVAL);
	assert_err_has("no frames");
}

/* A step of CLOCK_REALTIME between two offset readings: the offset that puts the arrival after the
 * send and before the handover, else the shorter latency, else the newer one. */
static void test_realtime_pick(void **state)
{
	const int64_t before = -1000000000, after = before - 19500000;	/* realtime stepped 19.5 ms ahead */
	const uint64_t sent = 5000000000ULL, read_ns = sent + 50000;
	uint64_t rt;

	(void)state;
	/* stamped 2 us after sending, before the step: the old offset is right, the new one puts it 19.5 ms early */
	rt = sent + 2000 - (uint64_t)before;
	assert_int_equal(lr_realtime_pick(rt, after, before, sent, read_ns), sent + 2000);
	/* stamped after the step: the new offset is right, the old one puts it after the handover */
	rt = sent + 3000 - (uint64_t)after;
	assert_int_equal(lr_realtime_pick(rt, after, before, sent, read_ns), sent + 3000);
	/* a step smaller than the window: both fit, the shorter latency wins */
	assert_int_equal(lr_realtime_pick(sent + 4000 - (uint64_t)before, before - 1000, before, sent, read_ns),
			 sent + 3000);
	/* another host: its stamp + the clock offset is the send time here (lat = now - offset - tail) */
	{
		const int64_t offset = 3600LL * 1000000000LL;	/* the receiver's clock an hour ahead */
		const uint64_t tail = sent - (uint64_t)offset;	/* the sender's stamp, on its own clock */

		rt = tail + (uint64_t)offset + 2000 - (uint64_t)before;	/* arrived 2 us later, before the step */
		assert_int_equal(lr_realtime_pick(rt, after, before, tail + (uint64_t)offset, read_ns), sent + 2000);
	}
	/* neither fits (another host's clock): the new offset, as without a step */
	assert_int_equal(lr_realtime_pick(sent - 100000 - (uint64_t)after, after, before, sent, read_ns),
			 sent - 100000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_realtime_pick),
		cmocka_unit_test_setup_teardown(test_writer_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_writer_roundtrip_snaplen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_writer_caller_caplen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_writer_max_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_writer_abort, setup, teardown),
		cmocka_unit_test_setup_teardown(test_writer_unwritable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sampler_two_producers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sampler_full_ring, setup, teardown),
		cmocka_unit_test(test_realtime_offset),
		cmocka_unit_test_setup_teardown(test_read_pcap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_own_output, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_pcapng, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_truncated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_corrupt_header, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_not_ethernet, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_oversize, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_snapped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_caplen_over_len, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_empty, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
