/* SPDX-License-Identifier: MIT */
/* Unit tests for the wire probe: byte layout, big-endian helpers, 48-bit seq, parsing hand-made frames. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "linerate/probe.h"

/*
 * A minimal Ethernet/IPv4/UDP frame written byte by byte, independent of
 * frame.c, so a parser failure here is the parser's and not the builder's.
 */
static unsigned int handmade_v4(uint8_t *f, uint16_t dport, uint16_t magic, uint16_t flow,
				uint64_t seq, uint64_t tail)
{
	static const uint8_t hdr[42] = {
		/* Ethernet: dst, src, type IPv4 */
		0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00,
		/* IPv4: 45, tos, len 46, id, DF, ttl 64, UDP, csum (not checked), 198.18.0.1 > 198.18.0.2 */
		0x45, 0x00, 0x00, 0x2e, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00,
		0xc6, 0x12, 0x00, 0x01, 0xc6, 0x12, 0x00, 0x02,
		/* UDP: sport 7000, dport (patched), len 26, csum 0 */
		0x1b, 0x58, 0x00, 0x00, 0x00, 0x1a, 0x00, 0x00,
	};
	uint8_t *p = f + sizeof(hdr);

	memcpy(f, hdr, sizeof(hdr));
	f[36] = dport >> 8;
	f[37] = (uint8_t)dport;
	p[0] = magic >> 8;
	p[1] = (uint8_t)magic;
	p[2] = flow >> 8;
	p[3] = (uint8_t)flow;
	p[4] = (uint8_t)(seq >> 40);
	p[5] = (uint8_t)(seq >> 32);
	p[6] = (uint8_t)(seq >> 24);
	p[7] = (uint8_t)(seq >> 16);
	p[8] = (uint8_t)(seq >> 8);
	p[9] = (uint8_t)seq;
	for (int i = 0; i < 8; i++)
		p[10 + i] = (uint8_t)(tail >> (56 - 8 * i));
	return sizeof(hdr) + 18;
}

static void test_probe_layout(void **state)
{
	(void)state;
	assert_int_equal(sizeof(struct lr_probe), 18);
	assert_int_equal(LR_PROBE_LEN, sizeof(struct lr_probe));
	assert_int_equal(offsetof(struct lr_probe, magic), 0);
	assert_int_equal(offsetof(struct lr_probe, flow), 2);
	assert_int_equal(offsetof(struct lr_probe, seq), 4);
	assert_int_equal(offsetof(struct lr_probe, tail), 10);
	assert_true(LR_SEQ_MASK == 0xffffffffffffULL);
	/* the magics spell "LR" and "LE" on the wire */
	assert_int_equal(LR_MAGIC_DATA, ('L' << 8) | 'R');
	assert_int_equal(LR_MAGIC_EOT, ('L' << 8) | 'E');
}

static void test_probe_encode_bytes(void **state)
{
	static const uint8_t want[18] = {
		'L', 'R',
		0xbe, 0xef,
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06,
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
	};
	static const uint8_t want_eot[18] = {
		'L', 'E',
		0x00, 0x07,
		0x00, 0x00, 0x00, 0x00, 0x30, 0x39,
		0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	};
	struct lr_probe p;

	(void)state;
	memset(&p, 0xa5, sizeof(p));
	lr_probe_encode(&p, LR_MAGIC_DATA, 0xbeef, 0x010203040506ULL, 0x1122334455667788ULL);
	assert_memory_equal(&p, want, sizeof(want));

	memset(&p, 0xa5, sizeof(p));
	lr_probe_encode(&p, LR_MAGIC_EOT, 7, 12345, (uint64_t)8 << 48);
	assert_memory_equal(&p, want_eot, sizeof(want_eot));
}

static void test_probe_seq_masked(void **state)
{
	static const uint8_t ones[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t zeros[6] = { 0 };
	static const uint8_t low[6] = { 0x01, 0x02, 0x03, 0x04, 0x05, 0x06 };
	struct lr_probe p;

	(void)state;
	/* the bits above 48 must neither appear nor spill into the neighbours */
	memset(&p, 0, sizeof(p));
	lr_probe_encode(&p, LR_MAGIC_DATA, 0x0102, 0xabcd010203040506ULL, 0);
	assert_memory_equal(p.seq, low, 6);
	assert_int_equal(p.flow[0], 0x01);
	assert_int_equal(p.flow[1], 0x02);
	assert_memory_equal(p.tail, zeros, 6);
	assert_true(lr_get_be(p.seq, 6) == 0x010203040506ULL);

	lr_probe_encode(&p, LR_MAGIC_DATA, 0, LR_SEQ_MASK, 0);
	assert_memory_equal(p.seq, ones, 6);
	lr_probe_encode(&p, LR_MAGIC_DATA, 0, 1ULL << 48, 0);
	assert_memory_equal(p.seq, zeros, 6);
	lr_probe_encode(&p, LR_MAGIC_DATA, 0, UINT64_MAX, UINT64_MAX);
	assert_memory_equal(p.seq, ones, 6);
	assert_true(lr_get_be(p.tail, 8) == UINT64_MAX);
}

static void test_probe_be_roundtrip(void **state)
{
	static const uint64_t vals[] = {
		0, 1, 0x80, 0xff, 0x100, 0x1234, 0xfedcba9876543210ULL, 0x0123456789abcdefULL,
		UINT64_MAX, 0x8000000000000000ULL, 0x00ff00ff00ff00ffULL,
	};
	uint8_t buf[16];

	(void)state;
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		for (int n = 1; n <= 8; n++) {
			uint64_t mask = n == 8 ? UINT64_MAX : (1ULL << (8 * n)) - 1;
			uint64_t v = vals[i];

			memset(buf, 0xa5, sizeof(buf));
			lr_put_be(buf, v, n);
			/* most significant byte first, nothing written past n */
			for (int k = 0; k < n; k++)
				assert_int_equal(buf[k], (uint8_t)(v >> (8 * (n - 1 - k))));
			for (int k = n; k < (int)sizeof(buf); k++)
				assert_int_equal(buf[k], 0xa5);
			assert_true(lr_get_be(buf, n) == (v & mask));
		}
	}
	/* get reads exactly n bytes */
	memcpy(buf, "\x12\x34\x56\x78\x9a\xbc\xde\xf0\xff\xff", 10);
	assert_true(lr_get_be(buf, 1) == 0x12);
	assert_true(lr_get_be(buf, 2) == 0x1234);
	assert_true(lr_get_be(buf, 3) == 0x123456);
	assert_true(lr_get_be(buf, 6) == 0x123456789abcULL);
	assert_true(lr_get_be(buf, 8) == 0x123456789abcdef0ULL);
}

static void test_probe_parse_handmade(void **state)
{
	uint8_t f[128];
	struct lr_pkt pkt;
	unsigned int len;

	(void)state;
	len = handmade_v4(f, 7447, LR_MAGIC_DATA, 0x0203, 0x0000a1b2c3d4e5f6ULL, 0x1122334455667788ULL);
	memset(&pkt, 0, sizeof(pkt));
	assert_int_equal(lr_parse(f, f + len, 7447, &pkt), LR_PKT_DATA);
	assert_int_equal(pkt.flow, 0x0203);
	assert_true(pkt.seq == 0xa1b2c3d4e5f6ULL);
	assert_true(pkt.tail == 0x1122334455667788ULL);
	assert_int_equal(pkt.len, len);
	assert_int_equal(pkt.probe_off, 42);

	/* the destination port selects, not the source port (7000) */
	assert_int_equal(lr_parse(f, f + len, 7000, &pkt), LR_PKT_FOREIGN);
	assert_int_equal(lr_parse(f, f + len, 7448, &pkt), LR_PKT_FOREIGN);

	len = handmade_v4(f, 9000, LR_MAGIC_EOT, 4, 999, (uint64_t)4 << 48);
	memset(&pkt, 0, sizeof(pkt));
	assert_int_equal(lr_parse(f, f + len, 9000, &pkt), LR_PKT_EOT);
	assert_int_equal(pkt.flow, 4);
	assert_true(pkt.seq == 999);
	assert_true(pkt.tail >> 48 == 4);
	assert_int_equal(pkt.tid, 0);	/* a marker from a sender before run ids */

	/* the run id in the marker's low 32 bits */
	len = handmade_v4(f, 9000, LR_MAGIC_EOT, 4, 999, ((uint64_t)4 << 48) | 0xdeadbeefULL);
	assert_int_equal(lr_parse(f, f + len, 9000, &pkt), LR_PKT_EOT);
	assert_int_equal(lr_eot_flows(pkt.tail), 4);
	assert_true(pkt.tid == 0xdeadbeefU);
	assert_int_equal(pkt.reflect, 0);

	len = handmade_v4(f, 9000, 0x4c53, 4, 999, 0);
	assert_int_equal(lr_parse(f, f + len, 9000, &pkt), LR_PKT_FOREIGN);
	len = handmade_v4(f, 9000, 0, 4, 999, 0);
	assert_int_equal(lr_parse(f, f + len, 9000, &pkt), LR_PKT_FOREIGN);
}

static void test_probe_parse_ipv4_options(void **state)
{
	uint8_t f[128], g[128];
	struct lr_pkt pkt;
	unsigned int len;

	(void)state;
	/* IHL 7: 8 bytes of options (NOPs, then end of list) between IP and UDP */
	len = handmade_v4(f, 7447, LR_MAGIC_DATA, 9, 77, 5);
	memcpy(g, f, 34);
	memset(g + 34, 0x01, 7);
	g[41] = 0x00;
	memcpy(g + 42, f + 34, len - 34);
	g[14] = 0x47;
	g[17] += 8;
	memset(&pkt, 0, sizeof(pkt));
	assert_int_equal(lr_parse(g, g + len + 8, 7447, &pkt), LR_PKT_DATA);
	assert_int_equal(pkt.probe_off, 14 + 28 + 8);
	assert_int_equal(pkt.flow, 9);
	assert_true(pkt.seq == 77);
	assert_true(pkt.tail == 5);
	assert_int_equal(pkt.len, len + 8);

	/* IHL below 5 is malformed; IHL 15 runs past this frame */
	g[14] = 0x44;
	assert_int_equal(lr_parse(g, g + len + 8, 7447, &pkt), LR_PKT_FOREIGN);
	g[14] = 0x4f;
	assert_int_equal(lr_parse(g, g + len + 8, 7447, &pkt), LR_PKT_FOREIGN);
	/* a version nibble that does not match the ethertype */
	f[14] = 0x65;
	assert_int_equal(lr_parse(f, f + len, 7447, &pkt), LR_PKT_FOREIGN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe_layout),
		cmocka_unit_test(test_probe_encode_bytes),
		cmocka_unit_test(test_probe_seq_masked),
		cmocka_unit_test(test_probe_be_roundtrip),
		cmocka_unit_test(test_probe_parse_handmade),
		cmocka_unit_test(test_probe_parse_ipv4_options),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
