/* SPDX-License-Identifier: MIT */
/* Unit tests for frame templates: layout, lengths, independent checksums, stamping, parsing back. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "linerate/probe.h"
#include "tx/frame.h"

static const uint8_t src_mac[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };
static const uint8_t dst_mac[6] = { 0x02, 0x66, 0x77, 0x88, 0x99, 0xaa };
#define SPORT 1234
#define DPORT 4321

/* RFC 1071, written out plainly: big-endian 16-bit words, odd byte padded, end-around carry. */
static uint64_t ref_sum(uint64_t sum, const uint8_t *b, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint64_t)b[i] << 8 | b[i + 1];
	if (len & 1)
		sum += (uint64_t)b[len - 1] << 8;
	return sum;
}

static uint16_t ref_fold(uint64_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint64_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 33;
}

static void make_spec(struct lr_frame_spec *s, int family, unsigned int size)
{
	memset(s, 0, sizeof(*s));
	s->family = family;
	memcpy(s->src_mac, src_mac, 6);
	memcpy(s->dst_mac, dst_mac, 6);
	if (family == AF_INET) {
		assert_int_equal(inet_pton(AF_INET, "198.18.1.10", &s->src_ip), 1);
		assert_int_equal(inet_pton(AF_INET, "198.19.2.20", &s->dst_ip), 1);
	} else {
		assert_int_equal(inet_pton(AF_INET6, "2001:db8::a:1", &s->src_ip), 1);
		assert_int_equal(inet_pton(AF_INET6, "2001:db8:1::b:2", &s->dst_ip), 1);
	}
	s->src_port = SPORT;
	s->dst_port = DPORT;
	s->size = size;
}

static struct lr_tmpl *build(int family, unsigned int size, struct lr_frame_spec *spec)
{
	struct lr_tmpl *t = calloc(1, sizeof(*t));
	int err;

	assert_non_null(t);
	make_spec(spec, family, size);
	err = lr_frame_build(spec, t);
	if (err)
		fail_msg("lr_frame_build(%s, %u) = %d", family == AF_INET ? "v4" : "v6", size, err);
	return t;
}

/* UDP checksum over the pseudo header, verified from scratch. */
static void check_udp_csum(const uint8_t *f, int family, unsigned int l3, unsigned int l4, unsigned int ulen)
{
	uint8_t ph[40];
	uint64_t sum;

	memset(ph, 0, sizeof(ph));
	if (family == AF_INET) {
		memcpy(ph, f + l3 + 12, 8);
		ph[9] = 17;
		ph[10] = ulen >> 8;
		ph[11] = (uint8_t)ulen;
		sum = ref_sum(0, ph, 12);
	} else {
		memcpy(ph, f + l3 + 8, 32);
		sum = ref_sum(0, ph, 32);
		ph[0] = 0;
		ph[1] = 0;
		ph[2] = ulen >> 8;
		ph[3] = (uint8_t)ulen;
		ph[4] = 0;
		ph[5] = 0;
		ph[6] = 0;
		ph[7] = 17;
		sum = ref_sum(sum, ph, 8);
	}
	sum = ref_sum(sum, f + l4, ulen);
	/* 0 would mean "no checksum" (and is illegal over IPv6) */
	assert_int_not_equal(rd16(f + l4 + 6), 0);
	if (ref_fold(sum) != 0xffff)
		fail_msg("UDP checksum 0x%04x does not verify (sum 0x%04x)", rd16(f + l4 + 6), ref_fold(sum));
}

/* Everything a stamped frame must be, checked field by field against the spec. */
static void check_frame(const struct lr_frame_spec *spec, const struct lr_tmpl *t, const uint8_t *f,
			uint16_t magic, uint16_t flow, uint64_t seq, uint64_t tail)
{
	const unsigned int l3 = 14;
	unsigned int l4, ulen;
	struct lr_pkt pkt;
	const uint8_t *pr;

	assert_int_equal(t->len, spec->size - 4);
	assert_memory_equal(f, spec->dst_mac, 6);
	assert_memory_equal(f + 6, spec->src_mac, 6);
	if (spec->family == AF_INET) {
		l4 = l3 + 20;
		assert_int_equal(rd16(f + 12), 0x0800);
		assert_int_equal(f[l3], 0x45);
		assert_int_equal(rd16(f + l3 + 2), t->len - l3);
		assert_int_equal(rd16(f + l3 + 6) & 0x3fff, 0);	/* neither MF nor an offset */
		assert_int_not_equal(f[l3 + 8], 0);		/* TTL */
		assert_int_equal(f[l3 + 9], 17);
		assert_memory_equal(f + l3 + 12, &spec->src_ip, 4);
		assert_memory_equal(f + l3 + 16, &spec->dst_ip, 4);
		assert_int_equal(ref_fold(ref_sum(0, f + l3, 20)), 0xffff);
	} else {
		l4 = l3 + 40;
		assert_int_equal(rd16(f + 12), 0x86dd);
		assert_int_equal(f[l3] >> 4, 6);
		assert_int_equal(rd16(f + l3 + 4), t->len - l4);
		assert_int_equal(f[l3 + 6], 17);
		assert_int_not_equal(f[l3 + 7], 0);		/* hop limit */
		assert_memory_equal(f + l3 + 8, &spec->src_ip, 16);
		assert_memory_equal(f + l3 + 24, &spec->dst_ip, 16);
	}
	assert_int_equal(t->l4_off, l4);
	ulen = t->len - l4;
	assert_int_equal(rd16(f + l4), (uint16_t)(spec->src_port + flow));
	assert_int_equal(rd16(f + l4 + 2), spec->dst_port);
	assert_int_equal(rd16(f + l4 + 4), ulen);
	check_udp_csum(f, spec->family, l3, l4, ulen);

	pr = f + l4 + 8;
	assert_int_equal(rd16(pr), magic);
	assert_int_equal(rd16(pr + 2), flow);
	assert_true(lr_get_be(pr + 4, 6) == (seq & LR_SEQ_MASK));
	assert_true(lr_get_be(pr + 10, 8) == tail);

	memset(&pkt, 0xee, sizeof(pkt));
	assert_int_equal(lr_parse(f, f + t->len, spec->dst_port, &pkt),
			 magic == LR_MAGIC_EOT ? LR_PKT_EOT : LR_PKT_DATA);
	assert_int_equal(pkt.flow, flow);
	assert_true(pkt.seq == (seq & LR_SEQ_MASK));
	assert_true(pkt.tail == tail);
	assert_int_equal(pkt.len, t->len);
	assert_int_equal(pkt.probe_off, l4 + 8);
}

static void test_frame_min_size(void **state)
{
	(void)state;
	assert_int_equal(lr_frame_min_size(AF_INET), 64);
	assert_int_equal(lr_frame_min_size(AF_INET6), 84);
}

static void test_csum_known_vectors(void **state)
{
	/* the classic IPv4 header example, checksum field zeroed; its checksum is 0xb861 */
	uint8_t ip[20] = {
		0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
		0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
	};
	/* RFC 1071 section 3 numerical example: ones' complement sum 0xddf2 */
	static const uint8_t rfc[8] = { 0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7 };

	(void)state;
	assert_int_equal((uint16_t)~ref_fold(ref_sum(0, ip, 20)), 0xb861);
	assert_int_equal(lr_csum_fold(lr_csum_add(0, ip, sizeof(ip))), 0xb861);
	ip[10] = 0xb8;
	ip[11] = 0x61;
	assert_int_equal(ref_fold(ref_sum(0, ip, 20)), 0xffff);
	assert_int_equal(lr_csum_fold(lr_csum_add(0, ip, sizeof(ip))), 0);

	assert_int_equal(ref_fold(ref_sum(0, rfc, 8)), 0xddf2);
	assert_int_equal(lr_csum_fold(lr_csum_add(0, rfc, sizeof(rfc))), (uint16_t)~0xddf2);
	/* odd length: the last byte is the high half of a zero-padded word */
	assert_int_equal(lr_csum_fold(lr_csum_add(0, "\x01\x02\x03", 3)), (uint16_t)~0x0402);
}

static void test_csum_against_reference(void **state)
{
	static uint8_t buf[9100];
	uint64_t s = 1;

	(void)state;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)rnd(&s);
	for (size_t len = 0; len < 300; len++) {
		uint32_t init = (uint32_t)rnd(&s) & 0xffffff;

		assert_int_equal(lr_csum_fold(lr_csum_add(init, buf + len, len)),
				 (uint16_t)~ref_fold(ref_sum(init, buf + len, len)));
	}
	/* chaining over even pieces equals one pass */
	assert_int_equal(lr_csum_fold(lr_csum_add(lr_csum_add(0, buf, 100), buf + 100, 51)),
			 (uint16_t)~ref_fold(ref_sum(0, buf, 151)));
	/* a jumbo frame of 0xff bytes must not overflow the accumulator */
	memset(buf, 0xff, sizeof(buf));
	assert_int_equal(lr_csum_fold(lr_csum_add(0, buf, 9014)), (uint16_t)~ref_fold(ref_sum(0, buf, 9014)));
	memset(buf, 0, sizeof(buf));
	assert_int_equal(lr_csum_fold(lr_csum_add(0, buf, 64)), 0xffff);
}

static void test_csum_fold(void **state)
{
	static const uint32_t sums[] = {
		0, 1, 0xfffe, 0xffff, 0x10000, 0x1fffe, 0x1ffff, 0x2fffd, 0xfffeffff, 0xffff0000,
		0xffffffff, 0x12345678, 0x80008000,
	};
	uint64_t s = 3;

	(void)state;
	for (size_t i = 0; i < sizeof(sums) / sizeof(sums[0]); i++)
		assert_int_equal(lr_csum_fold(sums[i]), (uint16_t)~ref_fold(sums[i]));
	for (int i = 0; i < 100000; i++) {
		uint32_t v = (uint32_t)(rnd(&s) << 1 ^ rnd(&s));

		assert_int_equal(lr_csum_fold(v), (uint16_t)~ref_fold(v));
	}
}

static void build_and_stamp(int family, unsigned int size)
{
	static const uint16_t flows[] = { 0, 1, 7, 255, 4095 };
	static const uint64_t seqs[] = {
		0, 1, 0xffff, 0x10000, 0x123456789abcULL, LR_SEQ_MASK, (1ULL << 48) | 7,
	};
	static const uint64_t tails[] = { 0, 1, 0x0123456789abcdefULL, UINT64_MAX };
	struct lr_frame_spec spec;
	struct lr_tmpl *t = build(family, size, &spec);
	uint8_t *pkt = malloc(LR_MAX_FRAME), *again = malloc(LR_MAX_FRAME);

	assert_non_null(pkt);
	assert_non_null(again);
	assert_int_equal(t->len, size - 4);
	assert_int_equal(t->family, family);
	assert_int_equal(t->src_port, SPORT);
	/* a worker re-stamps the same buffer over and over: no step may depend on what was there */
	memcpy(again, t->data, t->len);
	for (size_t f = 0; f < sizeof(flows) / sizeof(flows[0]); f++) {
		for (size_t q = 0; q < sizeof(seqs) / sizeof(seqs[0]); q++) {
			for (size_t k = 0; k < sizeof(tails) / sizeof(tails[0]); k++) {
				memcpy(pkt, t->data, t->len);
				lr_frame_stamp(t, pkt, LR_MAGIC_DATA, flows[f], seqs[q], tails[k]);
				check_frame(&spec, t, pkt, LR_MAGIC_DATA, flows[f], seqs[q], tails[k]);
				lr_frame_stamp(t, again, LR_MAGIC_DATA, flows[f], seqs[q], tails[k]);
				assert_memory_equal(again, pkt, t->len);
			}
		}
	}
	memcpy(pkt, t->data, t->len);
	lr_frame_stamp(t, pkt, LR_MAGIC_EOT, 3, 123456, (uint64_t)8 << 48);
	check_frame(&spec, t, pkt, LR_MAGIC_EOT, 3, 123456, (uint64_t)8 << 48);
	free(again);
	free(pkt);
	free(t);
}

static void test_frame_ipv4_sizes(void **state)
{
	static const unsigned int sizes[] = { 64, 65, 128, 511, 1024, 1518, 9018 };

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		build_and_stamp(AF_INET, sizes[i]);
}

static void test_frame_ipv6_sizes(void **state)
{
	static const unsigned int sizes[] = { 84, 85, 128, 1518, 9018 };

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		build_and_stamp(AF_INET6, sizes[i]);
}

static void test_frame_bad_sizes(void **state)
{
	static const struct {
		int family;
		unsigned int size;
	} bad[] = {
		{ AF_INET, 0 }, { AF_INET, 60 }, { AF_INET, 63 }, { AF_INET, LR_MAX_FRAME + 1 },
		{ AF_INET, 65536 }, { AF_INET6, 64 }, { AF_INET6, 83 }, { AF_INET6, LR_MAX_FRAME + 1 },
		{ AF_UNIX, 128 },
	};
	struct lr_frame_spec spec;
	struct lr_tmpl *t = calloc(1, sizeof(*t));

	(void)state;
	assert_non_null(t);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int err;

		make_spec(&spec, bad[i].family == AF_INET6 ? AF_INET6 : AF_INET, bad[i].size);
		spec.family = bad[i].family;
		err = lr_frame_build(&spec, t);
		if (err >= 0)
			fail_msg("family %d size %u: lr_frame_build() = %d, want -errno", bad[i].family,
				 bad[i].size, err);
		assert_true(err > -4096);
	}
	free(t);
}

/* Every 16-bit value of the sequence's low word: the written checksum is never 0, and 0xffff shows up. */
static void test_frame_csum_never_zero(void **state)
{
	static const int fams[] = { AF_INET, AF_INET6 };

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		struct lr_frame_spec spec;
		struct lr_tmpl *t = build(fams[i], lr_frame_min_size(fams[i]), &spec);
		uint8_t pkt[128];
		unsigned int ffff = 0;

		memcpy(pkt, t->data, t->len);
		for (uint64_t seq = 0; seq <= 0xffff; seq++) {
			lr_frame_stamp(t, pkt, LR_MAGIC_DATA, 2, seq, 0x55);
			check_udp_csum(pkt, fams[i], 14, t->l4_off, t->len - t->l4_off);
			ffff += rd16(pkt + t->l4_off + 6) == 0xffff;
		}
		assert_true(ffff >= 1);
		free(t);
	}
}

/* Pages with an inaccessible page right after: a read past @end faults. */
struct guard {
	uint8_t *base;
	uint8_t *end;
	size_t size;
};

static void guard_map(struct guard *g)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t data = (LR_MAX_FRAME + 64 + pg - 1) / pg * pg;

	g->size = data + pg;
	g->base = mmap(NULL, g->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(g->base != MAP_FAILED);
	assert_int_equal(mprotect(g->base + data, pg, PROT_NONE), 0);
	g->end = g->base + data;
}

static void guard_unmap(struct guard *g)
{
	munmap(g->base, g->size);
}

/* Parses every prefix of @f placed flush against the guard page. */
static void check_truncations(struct guard *g, const uint8_t *f, unsigned int len, unsigned int probe_end)
{
	for (unsigned int n = 0; n < len; n++) {
		uint8_t *p = g->end - n;
		struct lr_pkt pkt;
		int kind;

		memcpy(p, f, n);
		kind = lr_parse(p, g->end, DPORT, &pkt);
		if (n < probe_end && kind != LR_PKT_FOREIGN)
			fail_msg("frame cut to %u bytes (probe ends at %u) parsed as %d", n, probe_end, kind);
		if (kind != LR_PKT_FOREIGN)
			assert_int_equal(pkt.len, n);
	}
}

static void test_parse_truncated(void **state)
{
	static const struct {
		int family;
		unsigned int size;
	} cases[] = { { AF_INET, 64 }, { AF_INET, 1518 }, { AF_INET6, 84 }, { AF_INET6, 300 } };
	struct guard g;

	(void)state;
	guard_map(&g);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lr_frame_spec spec;
		struct lr_tmpl *t = build(cases[i].family, cases[i].size, &spec);
		uint8_t *pkt = malloc(LR_MAX_FRAME + 4);
		struct lr_pkt out;

		assert_non_null(pkt);
		memcpy(pkt, t->data, t->len);
		lr_frame_stamp(t, pkt, LR_MAGIC_DATA, 1, 99, 1234);
		check_truncations(&g, pkt, t->len, t->l4_off + 8 + LR_PROBE_LEN);
		/* the whole frame at the guard still parses */
		memcpy(g.end - t->len, pkt, t->len);
		assert_int_equal(lr_parse(g.end - t->len, g.end, DPORT, &out), LR_PKT_DATA);

		/* same with an 802.1Q tag */
		memmove(pkt + 16, pkt + 12, t->len - 12);
		pkt[12] = 0x81;
		pkt[13] = 0x00;
		pkt[14] = 0x00;
		pkt[15] = 0x64;
		check_truncations(&g, pkt, t->len + 4, t->l4_off + 4 + 8 + LR_PROBE_LEN);
		free(pkt);
		free(t);
	}
	guard_unmap(&g);
}

/* Random bytes behind plausible headers: never a fault, never a probe claimed past the end. */
static void test_parse_fuzz(void **state)
{
	static const uint16_t types[] = { 0x0800, 0x86dd, 0x8100, 0x88a8, 0x0806 };
	struct guard g;
	uint64_t s = 99;

	(void)state;
	guard_map(&g);
	for (int i = 0; i < 300000; i++) {
		unsigned int n = (unsigned int)(rnd(&s) % 160);
		uint8_t *p = g.end - n;
		struct lr_pkt pkt;
		unsigned int l3;
		int kind;

		for (unsigned int k = 0; k < n; k++)
			p[k] = (uint8_t)rnd(&s);
		if (n >= 14) {
			uint16_t ty = types[rnd(&s) % 5];

			p[12] = ty >> 8;
			p[13] = (uint8_t)ty;
			l3 = 14;
			if ((ty == 0x8100 || ty == 0x88a8) && n >= 18) {
				ty = rnd(&s) & 1 ? 0x0800 : 0x86dd;
				p[16] = ty >> 8;
				p[17] = (uint8_t)ty;
				l3 = 18;
			}
			if (n > l3 + 9) {
				p[l3] = ty == 0x0800 ? 0x40 | (uint8_t)(rnd(&s) % 16) : 0x60;
				p[l3 + (ty == 0x0800 ? 9 : 6)] = 17;
				if (ty == 0x0800) {
					p[l3 + 6] &= 0xe0;
					p[l3 + 7] = 0;
				}
			}
			if (n > l3 + 43 && rnd(&s) & 1) {
				unsigned int l4 = l3 + (ty == 0x0800 ? (p[l3] & 0xf) * 4u : 40u);

				if (l4 + 4 <= n) {
					p[l4 + 2] = DPORT >> 8;
					p[l4 + 3] = DPORT & 0xff;
				}
				if (l4 + 10 <= n) {
					p[l4 + 8] = 'L';
					p[l4 + 9] = rnd(&s) & 1 ? 'R' : 'E';
				}
			}
		}
		kind = lr_parse(p, g.end, DPORT, &pkt);
		assert_true(kind == LR_PKT_FOREIGN || kind == LR_PKT_DATA || kind == LR_PKT_EOT);
		if (kind != LR_PKT_FOREIGN) {
			assert_true(pkt.probe_off + LR_PROBE_LEN <= n);
			assert_int_equal(pkt.len, n);
		}
	}
	guard_unmap(&g);
}

static void test_parse_foreign(void **state)
{
	static const int fams[] = { AF_INET, AF_INET6 };
	struct lr_pkt out;

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		struct lr_frame_spec spec;
		struct lr_tmpl *t = build(fams[i], 128, &spec);
		unsigned int po = t->l4_off + 8, len = t->len;
		uint8_t good[256], f[256];

		memcpy(good, t->data, len);
		lr_frame_stamp(t, good, LR_MAGIC_DATA, 5, 1000, 42);
		assert_int_equal(lr_parse(good, good + len, DPORT, &out), LR_PKT_DATA);

		/* another port, or the source port, is not ours */
		assert_int_equal(lr_parse(good, good + len, DPORT + 1, &out), LR_PKT_FOREIGN);
		assert_int_equal(lr_parse(good, good + len, SPORT + 5, &out), LR_PKT_FOREIGN);

		/* wrong magic */
		memcpy(f, good, len);
		f[po + 1] ^= 0x01;
		assert_int_equal(lr_parse(f, f + len, DPORT, &out), LR_PKT_FOREIGN);
		memcpy(f, good, len);
		f[po] = 0;
		f[po + 1] = 0;
		assert_int_equal(lr_parse(f, f + len, DPORT, &out), LR_PKT_FOREIGN);

		/* TCP, and (IPv6) a hop-by-hop extension header in front of UDP */
		memcpy(f, good, len);
		f[14 + (fams[i] == AF_INET ? 9 : 6)] = 6;
		assert_int_equal(lr_parse(f, f + len, DPORT, &out), LR_PKT_FOREIGN);
		if (fams[i] == AF_INET6) {
			memcpy(f, good, len);
			f[14 + 6] = 0;
			assert_int_equal(lr_parse(f, f + len, DPORT, &out), LR_PKT_FOREIGN);
		}

		/* not IP at all, and an ethertype that does not match the version */
		memcpy(f, good, len);
		f[12] = 0x08;
		f[13] = 0x06;
		assert_int_equal(lr_parse(f, f + len, DPORT, &out), LR_PKT_FOREIGN);
		memcpy(f, good, len);
		f[12] = fams[i] == AF_INET ? 0x86 : 0x08;
		f[13] = fams[i] == AF_INET ? 0xdd : 0x00;
		assert_int_equal(lr_parse(f, f + len, DPORT, &out), LR_PKT_FOREIGN);
		free(t);
	}
}

static void test_parse_ipv4_fragments(void **state)
{
	struct lr_frame_spec spec;
	struct lr_tmpl *t = build(AF_INET, 128, &spec);
	uint8_t good[256], f[256];
	struct lr_pkt out;

	(void)state;
	memcpy(good, t->data, t->len);
	lr_frame_stamp(t, good, LR_MAGIC_DATA, 0, 7, 8);

	/* non-first fragments carry no UDP header: offset 185 (1480 bytes), with and without MF */
	memcpy(f, good, t->len);
	f[20] = (f[20] & 0xe0) | 0x00;
	f[21] = 0xb9;
	assert_int_equal(lr_parse(f, f + t->len, DPORT, &out), LR_PKT_FOREIGN);
	f[20] |= 0x20;
	assert_int_equal(lr_parse(f, f + t->len, DPORT, &out), LR_PKT_FOREIGN);
	/* an offset only in the high bits of the field */
	memcpy(f, good, t->len);
	f[20] = (f[20] & 0xe0) | 0x10;
	f[21] = 0;
	assert_int_equal(lr_parse(f, f + t->len, DPORT, &out), LR_PKT_FOREIGN);
	/* DF alone is not a fragment */
	memcpy(f, good, t->len);
	f[20] = 0x40;
	f[21] = 0;
	assert_int_equal(lr_parse(f, f + t->len, DPORT, &out), LR_PKT_DATA);
	free(t);
}

static void test_parse_vlan(void **state)
{
	static const uint16_t tpids[] = { 0x8100, 0x88a8 };
	static const int fams[] = { AF_INET, AF_INET6 };

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		for (size_t k = 0; k < 2; k++) {
			struct lr_frame_spec spec;
			struct lr_tmpl *t = build(fams[i], 100, &spec);
			uint8_t plain[128], f[132];
			struct lr_pkt out;

			memcpy(plain, t->data, t->len);
			lr_frame_stamp(t, plain, LR_MAGIC_DATA, 12, 0xabcdef, 777);
			memcpy(f, plain, 12);
			f[12] = tpids[k] >> 8;
			f[13] = tpids[k] & 0xff;
			f[14] = 0x20;	/* PCP 1, VID 100 */
			f[15] = 0x64;
			memcpy(f + 16, plain + 12, t->len - 12);
			memset(&out, 0, sizeof(out));
			assert_int_equal(lr_parse(f, f + t->len + 4, DPORT, &out), LR_PKT_DATA);
			assert_int_equal(out.flow, 12);
			assert_true(out.seq == 0xabcdef);
			assert_true(out.tail == 777);
			assert_int_equal(out.len, t->len + 4);
			assert_int_equal(out.probe_off, t->l4_off + 4 + 8);
			/* the tag hides the ethertype: the inner one must be an IP type */
			f[16] = 0x08;
			f[17] = 0x06;
			assert_int_equal(lr_parse(f, f + t->len + 4, DPORT, &out), LR_PKT_FOREIGN);
			free(t);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frame_min_size),
		cmocka_unit_test(test_csum_known_vectors),
		cmocka_unit_test(test_csum_against_reference),
		cmocka_unit_test(test_csum_fold),
		cmocka_unit_test(test_frame_ipv4_sizes),
		cmocka_unit_test(test_frame_ipv6_sizes),
		cmocka_unit_test(test_frame_bad_sizes),
		cmocka_unit_test(test_frame_csum_never_zero),
		cmocka_unit_test(test_parse_truncated),
		cmocka_unit_test(test_parse_fuzz),
		cmocka_unit_test(test_parse_foreign),
		cmocka_unit_test(test_parse_ipv4_fragments),
		cmocka_unit_test(test_parse_vlan),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
