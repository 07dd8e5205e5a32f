/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for round trips: the "LT"/"LU" probe on its way out, the reflector's rewrite into
 * "LB"/"LC" (addresses, ports, TTL, probe, checksums verified from scratch), the reflector's
 * sequence rebuilt to 48 bits, incremental checksums, and counting what comes back.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "linerate/flow.h"
#include "linerate/probe.h"
#include "linerate/reflect.h"
#include "tx/frame.h"

static const uint8_t src_mac[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };
static const uint8_t dst_mac[6] = { 0x02, 0x66, 0x77, 0x88, 0x99, 0xaa };
#define SPORT 1234
#define DPORT 4321
#define VLAN_TCI 0xa064	/* PCP 5, VID 100 */

/* What the case at hand is, for failure messages. */
static char ctx[160];

#define EXPECT(cond)                                            \
	do {                                                    \
		if (!(cond))                                    \
			fail_msg("%s: %s", ctx, #cond);         \
	} while (0)

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

static uint64_t rd_be(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static uint64_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 33;
}

/*
 * The UDP checksum verified from scratch: the folded sum over pseudo header, UDP header and
 * payload (the UDP length's worth), checksum field included; 0xffff when it verifies.
 */
static uint16_t ref_udp_sum(const uint8_t *f, unsigned int l3, unsigned int l4, int v6)
{
	unsigned int ulen = rd16(f + l4 + 4);
	uint8_t ph[12] = { 0 };
	uint64_t sum;

	if (v6) {
		sum = ref_sum(0, f + l3 + 8, 32);
		ph[2] = ulen >> 8;
		ph[3] = (uint8_t)ulen;
		ph[7] = 17;
		sum = ref_sum(sum, ph, 8);
	} else {
		sum = ref_sum(0, f + l3 + 12, 8);
		ph[1] = 17;
		ph[2] = ulen >> 8;
		ph[3] = (uint8_t)ulen;
		sum = ref_sum(sum, ph, 4);
	}
	return ref_fold(ref_sum(sum, f + l4, ulen));
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

/* A test frame as a sender puts it on the wire, optionally with one 802.1Q tag. */
struct rframe {
	uint8_t f[LR_MAX_FRAME + 4];
	unsigned int len;	/* no FCS */
	unsigned int l3, l4;
	int v6, vlan;
};

/*
 * Builds a template (TTL @ttl, a payload that is not all zero, the checksum base updated by the
 * reference sum), stamps it with lr_frame_stamp() and inserts the VLAN tag if asked.
 */
static void make_frame(struct rframe *r, int family, unsigned int size, int vlan, uint8_t ttl, uint16_t magic,
		       uint16_t flow, uint64_t seq, uint64_t tail)
{
	struct lr_tmpl *t = calloc(1, sizeof(*t));
	struct lr_frame_spec spec;
	unsigned int pay;
	uint64_t s = size * 131 + ttl;
	uint16_t hc;
	uint8_t *ip;
	int err;

	assert_non_null(t);
	make_spec(&spec, family, size);
	err = lr_frame_build(&spec, t);
	if (err)
		fail_msg("lr_frame_build(%s, %u) = %d", family == AF_INET ? "v4" : "v6", size, err);
	ip = t->data + LR_ETH_HLEN;
	if (family == AF_INET) {
		ip[8] = ttl;
		ip[10] = ip[11] = 0;
		hc = (uint16_t)~ref_fold(ref_sum(0, ip, 20));
		ip[10] = hc >> 8;
		ip[11] = (uint8_t)hc;
	} else {
		ip[7] = ttl;
	}
	/* the payload starts at an even offset in UDP: its words add to the base as they are */
	pay = t->l4_off + 8 + LR_PROBE_LEN;
	for (unsigned int i = pay; i < t->len; i++)
		t->data[i] = (uint8_t)rnd(&s);
	t->csum_base = ref_fold(t->csum_base + ref_sum(0, t->data + pay, t->len - pay));

	memset(r, 0, sizeof(*r));
	memcpy(r->f, t->data, t->len);
	lr_frame_stamp(t, r->f, magic, flow, seq, tail);
	r->len = t->len;
	r->l3 = LR_ETH_HLEN;
	r->l4 = t->l4_off;
	r->v6 = family == AF_INET6;
	r->vlan = vlan;
	if (vlan) {
		memmove(r->f + 16, r->f + 12, r->len - 12);
		r->f[12] = LR_ETH_P_8021Q >> 8;
		r->f[13] = LR_ETH_P_8021Q & 0xff;
		r->f[14] = VLAN_TCI >> 8;
		r->f[15] = VLAN_TCI & 0xff;
		r->len += 4;
		r->l3 += 4;
		r->l4 += 4;
	}
	free(t);
	/* the frame as sent is sound, or nothing below means anything */
	EXPECT(ref_udp_sum(r->f, r->l3, r->l4, r->v6) == 0xffff);
	EXPECT(rd16(r->f + r->l4 + 6) != 0);
	if (!r->v6)
		EXPECT(ref_fold(ref_sum(0, r->f + r->l3, 20)) == 0xffff);
}

/* lr_find_udp() and lr_reflect_rewrite() on @r, as the reflector runs them. */
static void reflect(struct rframe *r, int eot, uint64_t rseq, uint64_t tail)
{
	const uint8_t *l3 = NULL;
	uint8_t *udp;
	int v6 = -1;

	udp = (uint8_t *)lr_find_udp(r->f, r->f + r->len, &l3, &v6);
	EXPECT(udp == r->f + r->l4);
	EXPECT(l3 == r->f + r->l3);
	EXPECT(v6 == r->v6);
	lr_reflect_rewrite(r->f, (uint8_t *)l3, v6, udp, eot, rseq, tail);
}

/*
 * A reflected frame against the frame it was: everything swapped that should be, TTL set,
 * checksums verified from scratch, the tag and the payload untouched. @csum0: the IPv4 UDP
 * checksum was 0 and must stay 0.
 */
static void check_reflected(const struct rframe *o, const struct rframe *r, int csum0)
{
	const uint8_t *a = o->f, *b = r->f;
	unsigned int l3 = r->l3, l4 = r->l4, pay = l4 + 8 + LR_PROBE_LEN;

	EXPECT(r->len == o->len);
	EXPECT(!memcmp(b, a + 6, 6) && !memcmp(b + 6, a, 6));
	EXPECT(!memcmp(b + 12, a + 12, l3 - 12));	/* ethertype, and the VLAN tag if any */
	if (r->vlan)
		EXPECT(rd16(b + 12) == LR_ETH_P_8021Q && rd16(b + 14) == VLAN_TCI);
	if (r->v6) {
		EXPECT(!memcmp(b + l3, a + l3, 7));	/* version, class, label, length, next header */
		EXPECT(b[l3 + 7] == LR_REFLECT_TTL);
		EXPECT(!memcmp(b + l3 + 8, a + l3 + 24, 16) && !memcmp(b + l3 + 24, a + l3 + 8, 16));
	} else {
		EXPECT(!memcmp(b + l3, a + l3, 8));	/* version to fragment offset */
		EXPECT(b[l3 + 8] == LR_REFLECT_TTL);
		EXPECT(b[l3 + 9] == a[l3 + 9]);
		EXPECT(!memcmp(b + l3 + 12, a + l3 + 16, 4) && !memcmp(b + l3 + 16, a + l3 + 12, 4));
		EXPECT(ref_fold(ref_sum(0, b + l3, 20)) == 0xffff);
	}
	EXPECT(rd16(b + l4) == rd16(a + l4 + 2) && rd16(b + l4 + 2) == rd16(a + l4));
	EXPECT(rd16(b + l4 + 4) == rd16(a + l4 + 4));
	if (csum0) {
		EXPECT(rd16(b + l4 + 6) == 0);
	} else {
		EXPECT(rd16(b + l4 + 6) != 0);
		if (ref_udp_sum(b, l3, l4, r->v6) != 0xffff)
			fail_msg("%s: UDP checksum 0x%04x does not verify (sum 0x%04x)", ctx, rd16(b + l4 + 6),
				 ref_udp_sum(b, l3, l4, r->v6));
	}
	EXPECT(!memcmp(b + pay, a + pay, r->len - pay));
}

/* The 48-bit sequence a reflected frame must carry back for reflector sequence @rseq. */
static const struct {
	uint64_t seq, rseq;
} seqs[] = {
	{ 0, 0 },
	{ 1000, 1000 },
	{ 1000, 995 },				/* forward loss */
	{ 1000, 1003 },				/* reordering: the reflector saw more */
	{ 0x100000002ULL, 0xfffffffeULL },	/* the low 32 bits wrapped on the frame, not the reflector */
	{ 0xfffffffeULL, 0x100000001ULL },	/* and the other way */
	{ 0x123456789abcULL, 0x123456789abcULL - 0x7fff0000ULL },	/* loss just under 2^31 */
	{ 2, LR_SEQ_MASK - 2 },			/* across the 48-bit wrap */
	{ LR_SEQ_MASK - 1, 3 },			/* the reflector past the wrap */
	{ LR_SEQ_MASK, LR_SEQ_MASK },
};

static void rtt_data_case(int family, unsigned int size, int vlan, uint16_t flow, uint64_t seq, uint64_t rseq,
			  uint64_t now)
{
	static struct rframe o, r;
	const uint32_t stamp = (uint32_t)now ? (uint32_t)now : 1;
	struct lr_pkt pkt;
	const uint8_t *pr;

	snprintf(ctx, sizeof(ctx), "%s size %u%s flow %u seq %#llx rseq %#llx now %#llx",
		 family == AF_INET ? "v4" : "v6", size, vlan ? " vlan" : "", flow, (unsigned long long)seq,
		 (unsigned long long)rseq, (unsigned long long)now);
	make_frame(&o, family, size, vlan, (uint8_t)(size % 3 ? 1 + size % 200 : 255), LR_MAGIC_RTT, flow, seq,
		   lr_rtt_tail(now));

	/* on its way out: a data frame to reflect, with a 32-bit stamp */
	memset(&pkt, 0xee, sizeof(pkt));
	EXPECT(lr_parse(o.f, o.f + o.len, DPORT, &pkt) == LR_PKT_DATA);
	EXPECT(pkt.rtt == 1 && pkt.reflect == 1);
	EXPECT(pkt.flow == flow && pkt.seq == seq);
	EXPECT(pkt.tail == stamp);
	EXPECT(pkt.len == o.len && pkt.probe_off == o.l4 + 8);
	/* not a back frame to the sender's port */
	EXPECT(lr_parse(o.f, o.f + o.len, (uint16_t)(SPORT + flow), &pkt) == LR_PKT_FOREIGN);

	r = o;
	reflect(&r, 0, rseq, 0);
	check_reflected(&o, &r, 0);
	pr = r.f + r.l4 + 8;
	EXPECT(rd16(pr) == LR_MAGIC_BACK);
	EXPECT(!memcmp(pr + 2, o.f + o.l4 + 8 + 2, 2 + 6 + 4));	/* flow, sequence, stamp */
	EXPECT(rd_be(pr + 14, 4) == (uint32_t)rseq);

	/* on its way back: matched on the source port, the reflector's sequence rebuilt */
	memset(&pkt, 0xee, sizeof(pkt));
	EXPECT(lr_parse(r.f, r.f + r.len, DPORT, &pkt) == LR_PKT_BACK);
	EXPECT(pkt.flow == flow);
	if (pkt.seq != rseq)
		fail_msg("%s: back seq %#llx, want %#llx", ctx, (unsigned long long)pkt.seq,
			 (unsigned long long)rseq);
	EXPECT(pkt.tail == stamp);
	EXPECT(pkt.rtt == 1 && pkt.reflect == 0);
	EXPECT(pkt.len == r.len && pkt.probe_off == r.l4 + 8);
	/* the reflector's own port test: the back frame is not a frame to reflect again */
	EXPECT(lr_parse(r.f, r.f + r.len, (uint16_t)(SPORT + flow), &pkt) == LR_PKT_FOREIGN);
}

static void test_reflect_data(void **state)
{
	static const unsigned int v4sizes[] = { 64, 65, 128, 1518, 9018 };
	static const unsigned int v6sizes[] = { 84, 85, 1518, 9018 };
	static const uint16_t flows[] = { 0, 7, 4095 };
	/* a clock whose low 32 bits are 0 stamps 1 */
	static const uint64_t nows[] = { 123456789, 0x500000000ULL, 0x7fffffffffffffffULL };

	(void)state;
	for (int vlan = 0; vlan < 2; vlan++) {
		for (size_t q = 0; q < sizeof(seqs) / sizeof(seqs[0]); q++) {
			uint16_t flow = flows[q % 3];
			uint64_t now = nows[q % 3];

			for (size_t i = 0; i < sizeof(v4sizes) / sizeof(v4sizes[0]); i++)
				rtt_data_case(AF_INET, v4sizes[i], vlan, flow, seqs[q].seq, seqs[q].rseq, now);
			for (size_t i = 0; i < sizeof(v6sizes) / sizeof(v6sizes[0]); i++)
				rtt_data_case(AF_INET6, v6sizes[i], vlan, flow, seqs[q].seq, seqs[q].rseq, now);
		}
	}
}

/* The reflector's 48-bit sequence from its low 32 bits, for any difference below 2^31 either way. */
static void test_rtt_back_seq(void **state)
{
	uint64_t s = 5;

	(void)state;
	for (size_t q = 0; q < sizeof(seqs) / sizeof(seqs[0]); q++)
		assert_true(lr_rtt_back_seq(seqs[q].seq, (uint32_t)seqs[q].rseq) == seqs[q].rseq);
	/* the extremes of the window */
	assert_true(lr_rtt_back_seq(0x80000000ULL, 1) == 1);
	assert_true(lr_rtt_back_seq(1, 0x80000000U) == 0x80000000ULL);
	assert_true(lr_rtt_back_seq(0, 0x80000001U) == LR_SEQ_MASK - 0x7ffffffeULL);
	assert_true(lr_rtt_back_seq(LR_SEQ_MASK, 0x7ffffffeU) == 0x7ffffffeULL);
	for (int i = 0; i < 200000; i++) {
		uint64_t seq = (rnd(&s) << 31 ^ rnd(&s)) & LR_SEQ_MASK;
		int64_t d = (int64_t)(rnd(&s) & 0x7fffffff) * (rnd(&s) & 1 ? 1 : -1);
		uint64_t rseq;

		if (i % 4 == 0)	/* near a 2^32 boundary, or the 2^48 wrap */
			seq = (i % 8 ? seq & ~0xffffffffULL : 0) + (rnd(&s) % 64) - 32;
		seq &= LR_SEQ_MASK;
		rseq = (seq + (uint64_t)d) & LR_SEQ_MASK;
		if (lr_rtt_back_seq(seq, (uint32_t)rseq) != rseq)
			fail_msg("seq %#llx r %#x: %#llx, want %#llx", (unsigned long long)seq, (uint32_t)rseq,
				 (unsigned long long)lr_rtt_back_seq(seq, (uint32_t)rseq), (unsigned long long)rseq);
	}
}

static void test_rtt_tail(void **state)
{
	(void)state;
	assert_true(lr_rtt_tail(0) == 1ULL << 32);
	assert_true(lr_rtt_tail(1ULL << 32) == 1ULL << 32);
	assert_true(lr_rtt_tail(0x1234567800000000ULL) == 1ULL << 32);
	assert_true(lr_rtt_tail(1) == 1ULL << 32);
	assert_true(lr_rtt_tail(0xabcdef0123456789ULL) == 0x2345678900000000ULL);
	assert_true(lr_rtt_tail(0xffffffffULL) == 0xffffffff00000000ULL);
}

static void test_sat32(void **state)
{
	(void)state;
	assert_true(lr_sat32(0) == 0);
	assert_true(lr_sat32(12345) == 12345);
	assert_true(lr_sat32(0xfffffffeULL) == 0xfffffffeU);
	assert_true(lr_sat32(0xffffffffULL) == 0xffffffffU);
	assert_true(lr_sat32(0x100000000ULL) == 0xffffffffU);
	assert_true(lr_sat32(0x100000005ULL) == 0xffffffffU);
	assert_true(lr_sat32(UINT64_MAX) == 0xffffffffU);
}

/* A marker out ("LU"), reflected with the reflector's totals ("LC"), and counted by the sender. */
static void test_reflect_eot(void **state)
{
	static const struct {
		uint64_t late, dups, rseq, want_seq;
		uint32_t want_late, want_dups;
	} cases[] = {
		{ 5, 7, 0x123456789abcULL, 0x123456789abcULL, 5, 7 },
		{ 0x100000005ULL, 3, 0x123456789abcULL, 0x123456789abcULL, 0xffffffffU, 3 },
		{ 0, 0xffffffffULL, 0, 0, 0, 0xffffffffU },
		{ 9, 0x100000003ULL, 1, 1, 9, 0xffffffffU },
		{ 0xffffffffULL, UINT64_MAX, LR_SEQ_MASK, LR_SEQ_MASK, 0xffffffffU, 0xffffffffU },
		/* bits above the 48 of the sequence are dropped */
		{ 1, 2, 0xffff000000000042ULL, 0x42, 1, 2 },
	};
	static const unsigned int sizes[2][3] = { { 64, 65, 1518 }, { 84, 85, 1518 } };
	static struct rframe o, r;

	(void)state;
	for (int fam = 0; fam < 2; fam++) {
		for (int vlan = 0; vlan < 2; vlan++) {
			for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
				const unsigned int size = sizes[fam][k % 3];
				const uint16_t flow = (uint16_t)(3 + k * 1000);
				const uint64_t sent = 0xfedcba987654ULL + k, flows = 4097;
				struct lr_rx_counters *c = calloc(1, sizeof(*c));
				struct lr_flow_state st = { 0 }, back = { 0 };
				struct lr_pkt pkt;
				uint64_t want_tail;
				const uint8_t *pr;

				assert_non_null(c);
				snprintf(ctx, sizeof(ctx), "marker %s size %u%s case %zu", fam ? "v6" : "v4", size,
					 vlan ? " vlan" : "", k);
				make_frame(&o, fam ? AF_INET6 : AF_INET, size, vlan, 17, LR_MAGIC_RTT_EOT, flow, sent,
					   flows << 48);
				memset(&pkt, 0xee, sizeof(pkt));
				EXPECT(lr_parse(o.f, o.f + o.len, DPORT, &pkt) == LR_PKT_EOT);
				EXPECT(pkt.reflect == 1 && pkt.rtt == 0);
				EXPECT(pkt.flow == flow && pkt.seq == sent && pkt.tail == flows << 48);

				st.late = cases[k].late;
				st.dups = cases[k].dups;
				want_tail = (uint64_t)cases[k].want_late << 32 | cases[k].want_dups;
				EXPECT(lr_reflect_eot_tail(&st) == want_tail);
				r = o;
				reflect(&r, 1, cases[k].rseq, lr_reflect_eot_tail(&st));
				check_reflected(&o, &r, 0);
				pr = r.f + r.l4 + 8;
				EXPECT(rd16(pr) == LR_MAGIC_BACK_EOT && rd16(pr + 2) == flow);
				EXPECT(rd_be(pr + 4, 6) == cases[k].want_seq);
				EXPECT(rd_be(pr + 10, 8) == want_tail);

				memset(&pkt, 0xee, sizeof(pkt));
				EXPECT(lr_parse(r.f, r.f + r.len, DPORT, &pkt) == LR_PKT_BACK_EOT);
				EXPECT(pkt.flow == flow && pkt.seq == cases[k].want_seq && pkt.tail == want_tail);
				EXPECT(pkt.reflect == 0);
				EXPECT(lr_parse(r.f, r.f + r.len, (uint16_t)(SPORT + flow), &pkt) == LR_PKT_FOREIGN);

				/* the sender's count of it */
				EXPECT(lr_parse(r.f, r.f + r.len, DPORT, &pkt) == LR_PKT_BACK_EOT);
				lr_rx_count_back_eot(c, &back, &pkt);
				EXPECT(c->eot == 1 && c->packets == 0);
				EXPECT(back.eot_seen == 1 && back.eot_sent == cases[k].want_seq);
				EXPECT(back.fwd_late == cases[k].want_late && back.fwd_dups == cases[k].want_dups);
				EXPECT(back.packets == 0 && back.eot_flows == 0);
				free(c);
			}
		}
	}
}

/* IPv4 UDP without a checksum (0): the rewrite leaves it 0, data and marker alike. */
static void test_reflect_v4_no_csum(void **state)
{
	static const unsigned int sizes[] = { 64, 65, 1518 };
	static struct rframe o, r;

	(void)state;
	for (int vlan = 0; vlan < 2; vlan++) {
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			for (int eot = 0; eot < 2; eot++) {
				struct lr_pkt pkt = { 0 };

				snprintf(ctx, sizeof(ctx), "no checksum v4 size %u%s%s", sizes[i],
					 vlan ? " vlan" : "", eot ? " marker" : "");
				make_frame(&o, AF_INET, sizes[i], vlan, 200, eot ? LR_MAGIC_RTT_EOT : LR_MAGIC_RTT, 9,
					   0x1234567, eot ? 2ULL << 48 : lr_rtt_tail(0x1122334455ULL));
				o.f[o.l4 + 6] = 0;
				o.f[o.l4 + 7] = 0;
				r = o;
				reflect(&r, eot, 0x7654321, eot ? 0x500000006ULL : 0);
				check_reflected(&o, &r, 1);
				EXPECT(lr_parse(r.f, r.f + r.len, DPORT, &pkt) ==
				       (eot ? LR_PKT_BACK_EOT : LR_PKT_BACK));
				EXPECT(pkt.flow == 9 && pkt.seq == 0x7654321);
				EXPECT(pkt.tail == (eot ? 0x500000006ULL : 0x22334455ULL));
			}
		}
	}
}

/*
 * Every value of the reflector's sequence's low 16 bits: the rewritten UDP checksum always
 * verifies, is never 0 (IPv6: illegal; IPv4: "none"), and shows up as 0xffff where it would be 0.
 */
static void test_reflect_csum_never_zero(void **state)
{
	static struct rframe o, r;

	(void)state;
	for (int fam = 0; fam < 2; fam++) {
		unsigned int ffff = 0;

		snprintf(ctx, sizeof(ctx), "checksum sweep %s", fam ? "v6" : "v4");
		make_frame(&o, fam ? AF_INET6 : AF_INET, fam ? 84 : 64, 0, 64, LR_MAGIC_RTT, 1, 77,
			   lr_rtt_tail(99999));
		for (uint64_t rseq = 0; rseq <= 0xffff; rseq++) {
			const uint8_t *l3 = NULL;
			uint8_t *udp;
			int v6 = 0;

			memcpy(r.f, o.f, o.len);
			r.len = o.len;
			udp = (uint8_t *)lr_find_udp(r.f, r.f + r.len, &l3, &v6);
			assert_non_null(udp);
			lr_reflect_rewrite(r.f, (uint8_t *)l3, v6, udp, 0, 0xabcd0000ULL | rseq, 0);
			if (rd16(udp + 6) == 0 || ref_udp_sum(r.f, o.l3, o.l4, fam) != 0xffff)
				fail_msg("%s: rseq %#llx: checksum 0x%04x", ctx, (unsigned long long)rseq,
					 rd16(udp + 6));
			ffff += rd16(udp + 6) == 0xffff;
		}
		assert_true(ffff >= 1);
	}
}

/* Replacing words in a random buffer: lr_csum_replace() against the checksum from scratch. */
static void test_csum_replace(void **state)
{
	uint64_t s = 2024;
	unsigned int zeros = 0;

	(void)state;
	for (int i = 0; i < 600; i++) {
		uint16_t w[24], hc, want, got;
		unsigned int n = 2 + rnd(&s) % 22, k = 1 + rnd(&s) % (n <= 9 ? n - 1 : 9), at = 1 + rnd(&s) % (n - k);
		uint64_t sum = 0, old = 0, new_ = 0;

		/* word 0 is never replaced and never 0: the buffer is never all zero */
		for (unsigned int j = 0; j < n; j++) {
			/* some words at the extremes */
			uint64_t v = rnd(&s);

			w[j] = (uint16_t)(v % 7 == 0 ? 0xffff : v % 7 == 1 ? 0 : v);
		}
		if (!w[0])
			w[0] = 1;
		for (unsigned int j = 0; j < n; j++)
			sum += w[j];
		hc = (uint16_t)~ref_fold(sum);
		for (unsigned int j = at; j < at + k; j++) {
			uint64_t v = rnd(&s);

			old += w[j];
			w[j] = (uint16_t)(v % 5 == 0 ? 0xffff : v % 5 == 1 ? 0 : v);
		}
		/* one in four: the last word chosen so the sum folds to 0xffff, a checksum of 0 */
		if (i % 4 == 0) {
			uint64_t rest = 0;

			for (unsigned int j = 0; j < n; j++)
				if (j != at + k - 1)
					rest += w[j];
			w[at + k - 1] = (uint16_t)(0xffff - ref_fold(rest));
		}
		sum = 0;
		for (unsigned int j = 0; j < n; j++)
			sum += w[j];
		for (unsigned int j = at; j < at + k; j++)
			new_ += w[j];
		want = (uint16_t)~ref_fold(sum);
		got = lr_csum_replace(hc, old, new_, k);
		if (got != want)
			fail_msg("case %d: %u words at %u of %u: 0x%04x, want 0x%04x", i, k, at, n, got, want);
		zeros += want == 0;
		/* a UDP checksum of 0 goes on the wire as 0xffff: the same value from there */
		if (hc == 0)
			assert_int_equal(lr_csum_replace(0xffff, old, new_, k), want);
	}
	assert_true(zeros >= 150);
	/* the largest sums the rewrite passes: nine words of 0xffff each way */
	assert_int_equal(lr_csum_replace(0x1234, 9 * 0xffffULL, 9 * 0xffffULL, 9), 0x1234);
	assert_int_equal(lr_csum_replace(0x1234, 0, 9 * 0xffffULL, 9), 0x1234);
	assert_int_equal(lr_csum_replace(0x1234, 0x0001, 0x0002, 1), 0x1233);
	assert_int_equal(lr_csum_replace(0x0000, 0x0002, 0x0001, 1), 0x0001);
	assert_int_equal(lr_csum_fold16(0xffffffffffffULL), 0xffff);
	assert_int_equal(lr_csum_fold16(0x10000), 1);
}

/* Only "LB"/"LC" are back frames, and only from the test port. */
static void test_back_needs_magic_and_port(void **state)
{
	static struct rframe o, r;
	struct lr_pkt pkt;
	uint8_t *udp;

	(void)state;
	for (int fam = 0; fam < 2; fam++) {
		for (int eot = 0; eot < 2; eot++) {
			snprintf(ctx, sizeof(ctx), "ports %s%s", fam ? "v6" : "v4", eot ? " marker" : "");
			/* a one-way frame from the test port: ours when both ports are, never a back frame */
			make_frame(&o, fam ? AF_INET6 : AF_INET, 128, 0, 64, eot ? LR_MAGIC_EOT : LR_MAGIC_DATA, 2, 50,
				   eot ? 1ULL << 48 : 12345);
			udp = o.f + o.l4;
			udp[0] = DPORT >> 8;
			udp[1] = DPORT & 0xff;
			EXPECT(lr_parse(o.f, o.f + o.len, DPORT, &pkt) == (eot ? LR_PKT_EOT : LR_PKT_DATA));
			EXPECT(pkt.reflect == 0 && pkt.rtt == 0);
			udp[2] = (DPORT + 1) >> 8;
			udp[3] = (DPORT + 1) & 0xff;
			EXPECT(lr_parse(o.f, o.f + o.len, DPORT, &pkt) == LR_PKT_FOREIGN);
			/* a round-trip frame on its way out, seen from its source port: not ours */
			make_frame(&o, fam ? AF_INET6 : AF_INET, 128, 0, 64, eot ? LR_MAGIC_RTT_EOT : LR_MAGIC_RTT, 2,
				   50, eot ? 1ULL << 48 : lr_rtt_tail(12345));
			udp = o.f + o.l4;
			udp[0] = DPORT >> 8;
			udp[1] = DPORT & 0xff;
			udp[2] = (DPORT + 1) >> 8;
			udp[3] = (DPORT + 1) & 0xff;
			EXPECT(lr_parse(o.f, o.f + o.len, DPORT, &pkt) == LR_PKT_FOREIGN);

			/* a back frame from another port, even to the test port, is not ours */
			make_frame(&o, fam ? AF_INET6 : AF_INET, 128, 0, 64, eot ? LR_MAGIC_RTT_EOT : LR_MAGIC_RTT, 2,
				   50, eot ? 1ULL << 48 : lr_rtt_tail(12345));
			r = o;
			reflect(&r, eot, 49, 0);
			EXPECT(lr_parse(r.f, r.f + r.len, DPORT, &pkt) == (eot ? LR_PKT_BACK_EOT : LR_PKT_BACK));
			udp = r.f + r.l4;
			udp[0] = (DPORT + 1) >> 8;
			udp[1] = (DPORT + 1) & 0xff;
			EXPECT(lr_parse(r.f, r.f + r.len, DPORT, &pkt) == LR_PKT_FOREIGN);
			udp[2] = DPORT >> 8;
			udp[3] = DPORT & 0xff;
			EXPECT(lr_parse(r.f, r.f + r.len, DPORT, &pkt) == LR_PKT_FOREIGN);
			EXPECT(lr_parse(r.f, r.f + r.len, DPORT + 1, &pkt) == (eot ? LR_PKT_BACK_EOT : LR_PKT_BACK));
			/* an unknown magic next to ours */
			r.f[r.l4 + 9] = 'D';
			EXPECT(lr_parse(r.f, r.f + r.len, DPORT + 1, &pkt) == LR_PKT_FOREIGN);
		}
	}
}

/* One round-trip frame back at the sender: the stamp is 32 bits, the latency modulo 2^32. */
static void count_rtt(struct lr_rx_counters *c, struct lr_flow_state *st, uint64_t tail, uint64_t now, int64_t off)
{
	struct lr_pkt pkt = { .seq = st->packets, .tail = tail, .len = 60, .rtt = 1 };

	lr_rx_count_data(c, st, &pkt, pkt.len, 0, now, off);
}

static void test_rx_count_rtt(void **state)
{
	struct lr_rx_counters *c = calloc(1, sizeof(*c));
	struct lr_flow_state st = { 0 };
	struct lr_pkt pkt = { .seq = 0, .tail = 0xfffffff0, .len = 60 };

	(void)state;
	assert_non_null(c);
	/* the clock's low 32 bits wrapped between stamp and arrival */
	count_rtt(c, &st, 0xfffffff0, 0x100000010ULL, 0);
	assert_true(c->lat_count == 1 && c->lat_min == 32 && c->lat_max == 32 && c->lat_sum == 32);
	assert_true(c->lat_hist[lr_lat_bucket(32)] == 1 && c->lat_future == 0);
	/* far past the first wrap */
	count_rtt(c, &st, 0x10, 0x700000030ULL, 0);
	assert_true(c->lat_count == 2 && c->lat_sum == 64 && c->lat_max == 32);
	/* with an offset */
	count_rtt(c, &st, 0xffffff00, 0x300000000ULL + 1000 + 500, 1000);
	assert_true(c->lat_count == 3 && c->lat_max == 756 && c->lat_sum == 64 + 756);
	/* stamped "after" it came back: aliases to nearly 2^32, never a future stamp */
	count_rtt(c, &st, 100, 0x200000000ULL + 50, 0);
	assert_true(c->lat_count == 4 && c->lat_future == 0 && c->lat_max == 0xffffffceULL);
	/* no stamp: no sample */
	count_rtt(c, &st, 0, 0x200000000ULL + 60, 0);
	assert_true(c->lat_count == 4 && c->packets == 5 && st.packets == 5);
	assert_true(c->lat_min == 32);

	/* the same frame as a one-way one: the full 64-bit difference */
	memset(c, 0, sizeof(*c));
	memset(&st, 0, sizeof(st));
	lr_rx_count_data(c, &st, &pkt, pkt.len, 0, 0x500000010ULL, 0);
	assert_true(c->lat_count == 1 && c->lat_max == 0x400000020ULL);
	free(c);
}

/* Stamp, reflect, parse, count: the round trip of a frame whose clock wrapped its low 32 bits. */
static void test_rtt_end_to_end(void **state)
{
	static struct rframe o;
	struct lr_rx_counters *c = calloc(1, sizeof(*c));
	struct lr_flow_state st = { 0 };
	const uint64_t sent = 0x3fffffff0ULL;
	struct lr_pkt pkt = { 0 };

	(void)state;
	assert_non_null(c);
	snprintf(ctx, sizeof(ctx), "end to end");
	make_frame(&o, AF_INET, 64, 1, 64, LR_MAGIC_RTT, 5, 41, lr_rtt_tail(sent));
	reflect(&o, 0, 40, 0);
	EXPECT(lr_parse(o.f, o.f + o.len, DPORT, &pkt) == LR_PKT_BACK);
	EXPECT(pkt.flow == 5 && pkt.seq == 40 && pkt.tail == 0xfffffff0ULL && pkt.rtt == 1);
	lr_rx_count_data(c, &st, &pkt, pkt.len, 0, sent + 12345, 0);
	EXPECT(c->lat_count == 1 && c->lat_min == 12345 && c->lat_max == 12345);
	/* counted on the reflector's sequence: 40 frames before it lost on the way back */
	EXPECT(st.packets == 1 && st.gaps == 40 && st.next == 41);
	free(c);
}

/*
 * A frame of another test (another id) starts a flow over at the reflector, data or marker; frames
 * of the same test, late ones after the markers included, count on.
 */
static void test_reflect_flow_renew(void **state)
{
	struct lr_flow_state st, keep, zero;
	struct lr_rx_counters *c = calloc(1, sizeof(*c));
	struct lr_pkt pkt = { .len = 60, .rtt = 1, .reflect = 1 };

	(void)state;
	assert_non_null(c);
	memset(&zero, 0, sizeof(zero));
	/* the same id: left byte for byte as it was, markers seen or not */
	memset(&st, 0x5a, sizeof(st));
	st.test_id = 7;
	keep = st;
	lr_reflect_flow_renew(&st, 7);
	assert_memory_equal(&st, &keep, sizeof(st));
	/* another id: zeroed, and the new id kept */
	lr_reflect_flow_renew(&st, 8);
	zero.test_id = 8;
	assert_memory_equal(&st, &zero, sizeof(st));

	/* test 8: ten frames, a marker, then a late frame of the same test: it counts on, as late */
	for (uint64_t i = 0; i < 10; i++) {
		if (i == 4)
			continue;
		lr_reflect_flow_renew(&st, 8);
		pkt.seq = i;
		lr_rx_count_data(c, &st, &pkt, pkt.len, 0, 0, 0);
	}
	pkt.seq = 10;
	pkt.tail = (1ULL << 48) | 8;
	lr_reflect_flow_renew(&st, 8);
	lr_rx_count_eot(c, &st, &pkt);
	assert_true(st.eot_seen == 1 && st.packets == 9 && st.eot_sent == 10);
	lr_reflect_flow_renew(&st, 8);
	pkt.seq = 4;
	lr_rx_count_data(c, &st, &pkt, pkt.len, 0, 0, 0);
	assert_true(st.packets == 10 && st.late == 1 && st.eot_seen == 1);
	assert_int_equal(lr_flow_lost(&st), 0);

	/* test 9 with no data on this flow: its marker alone starts the flow over, 0 reflected */
	lr_reflect_flow_renew(&st, 9);
	pkt.seq = 0;
	pkt.tail = (1ULL << 48) | 9;
	lr_rx_count_eot(c, &st, &pkt);
	assert_true(st.packets == 0 && st.eot_seen == 1 && st.test_id == 9);

	/* test 10 after a test whose markers never came: starts over all the same */
	lr_reflect_flow_renew(&st, 10);
	pkt.seq = 0;
	pkt.tail = 0;
	lr_rx_count_data(c, &st, &pkt, pkt.len, 0, 0, 0);
	lr_reflect_flow_renew(&st, 11);
	assert_true(st.packets == 0 && st.eot_seen == 0 && st.test_id == 11);
	assert_int_equal(lr_flow_update(&st, 0, 60), LR_FLOW_IN_ORDER);
	assert_true(st.packets == 1 && st.gaps == 0 && st.late == 0 && st.dups == 0);
	free(c);
}

/* The test id travels in the low half of an outgoing tail: data and markers, and not back. */
static void test_rtt_tid(void **state)
{
	struct lr_pkt pkt = { 0 };
	uint8_t f[64] = { 0 };
	struct lr_probe *p = (struct lr_probe *)(f + 42);

	(void)state;
	/* an IPv4 UDP frame to the test port, by hand */
	f[12] = 0x08;
	f[14] = 0x45;
	f[23] = 17;
	f[36] = LR_DEFAULT_DST_PORT >> 8;
	f[37] = LR_DEFAULT_DST_PORT & 0xff;
	lr_probe_encode(p, LR_MAGIC_RTT, 3, 99, lr_rtt_tail(12345) | 0xdeadbeef);
	assert_int_equal(lr_parse(f, f + 60, LR_DEFAULT_DST_PORT, &pkt), LR_PKT_DATA);
	assert_int_equal(pkt.tid, 0xdeadbeef);
	assert_int_equal(pkt.tail, 12345);
	lr_probe_encode(p, LR_MAGIC_RTT_EOT, 3, 99, (2ULL << 48) | 0xdeadbeef);
	assert_int_equal(lr_parse(f, f + 60, LR_DEFAULT_DST_PORT, &pkt), LR_PKT_EOT);
	assert_int_equal(pkt.tid, 0xdeadbeef);
	assert_int_equal(pkt.tail >> 48, 2);
	lr_probe_encode(p, LR_MAGIC_DATA, 3, 99, 0xdeadbeef);
	assert_int_equal(lr_parse(f, f + 60, LR_DEFAULT_DST_PORT, &pkt), LR_PKT_DATA);
	assert_int_equal(pkt.tid, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rtt_tail),
		cmocka_unit_test(test_rtt_tid),
		cmocka_unit_test(test_sat32),
		cmocka_unit_test(test_rtt_back_seq),
		cmocka_unit_test(test_reflect_data),
		cmocka_unit_test(test_reflect_eot),
		cmocka_unit_test(test_reflect_v4_no_csum),
		cmocka_unit_test(test_reflect_csum_never_zero),
		cmocka_unit_test(test_csum_replace),
		cmocka_unit_test(test_back_needs_magic_and_port),
		cmocka_unit_test(test_rx_count_rtt),
		cmocka_unit_test(test_rtt_end_to_end),
		cmocka_unit_test(test_reflect_flow_renew),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
