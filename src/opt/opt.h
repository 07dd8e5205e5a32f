/* SPDX-License-Identifier: MIT */
/* The one option table: every command-line option and INI key, and the parser that fills its field. */
#ifndef LINERATE_OPT_H
#define LINERATE_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a value is; each type has one message format (see lr_opt_set()). */
enum lr_opt_type {
	LR_T_FLAG,	/* no value: a bool set to true */
	LR_T_COUNTER,	/* no value: an int counted up (-vv) */
	LR_T_STRING,	/* non-empty text that fits the char array */
	LR_T_IFNAME,	/* what the kernel takes as an interface name */
	LR_T_NETNS,	/* a name under /run/netns, pid:PID, container:NAME or an absolute path */
	LR_T_COUNT,	/* 1500, 64k, 1M: an unsigned field of 1, 2, 4 or 8 bytes, min..max */
	LR_T_DURATION,	/* 500ms, 2s: uint64_t nanoseconds, min..max */
	LR_T_RATE,	/* max, 1Mpps, 2.5Gbit: struct lr_rate */
	LR_T_PERCENT,	/* 12.5 or 12.5%: a double fraction; min..max in units of 1e-9 % */
	LR_T_STEP,	/* 1% (a double fraction) or 1000 pps (uint64_t at aux): the search's resolution */
	LR_T_IP,	/* struct in6_addr (IPv4 in its first 4 bytes); the family, an int, at aux */
	LR_T_MAC,	/* uint8_t[6], unicast */
	LR_T_IDLIST,	/* 0-3, 0,2: unsigned int[]; their number, an unsigned int, at aux */
	LR_T_CHOICE,	/* one word of choices: its index, an int */
};

struct lr_opt_choice {
	const char *name;
	const char *help;	/* NULL: the name says it all */
};

/* A kind of value: its type, its bounds and the words of its messages, written once. */
struct lr_kind {
	enum lr_opt_type type;
	uint64_t min, max;	/* COUNT: the value; DURATION: ns; PERCENT: 1e-9 %; IDLIST: max is the largest number */
	const char *what;	/* "a frame size": messages say "'x' is not a frame size" */
	const char *unit;	/* after a range: "bytes"; IDLIST: what one number is ("queue") */
	const char *hint;	/* examples or a rule, in messages and help: "10s, 500ms, 2m" */
	const char *limit;	/* DURATION, RATE: the largest value in words ("a year") */
	const struct lr_opt_choice *choices;	/* CHOICE: ended by an entry without a name */
	unsigned int items;	/* IDLIST: at most this many numbers */
	bool unique;	/* IDLIST: no number twice */
	bool pow2;	/* COUNT: a power of two only */
};

/* Sections of a `linerate run` file, as bits of struct lr_opt.secs. */
enum lr_ini_sec { LR_SEC_TEST = 1 << 0, LR_SEC_TX = 1 << 1, LR_SEC_RX = 1 << 2, LR_SEC_STREAM = 1 << 3 };

struct lr_ini_section {
	unsigned int sec;
	const char *title;	/* "[tx]" */
	const char *about;
};
extern const struct lr_ini_section lr_ini_sections[4];

/* One option: what the user types and reads about it, on the command line and in the INI file. */
struct lr_opt {
	const char *name;	/* --name, without the dashes; NULL: INI only */
	char short_name;	/* 0: none */
	const char *metavar;	/* the value's placeholder ("BYTES"); NULL for flags */
	const char *key;	/* INI key; NULL: command line only */
	const char *alias;	/* a second spelling of the key, same sections; giving both is a conflict */
	unsigned int secs;	/* LR_SEC_* where the key belongs */
	unsigned int list;	/* in the INI: up to this many values, comma-separated; 0: one */
	const struct lr_kind *kind;
	const char *help;
	const char *def;	/* the default as a value this option takes: applied before parsing */
	const char *def_text;	/* the default in words where it is not one value (shown instead of def) */
	const char *ini_note;	/* what only the INI file has to say of it (lists, streams) */
	bool required;	/* a command refuses to run without it (in the INI file, its section) */
	bool repeat;	/* a list on the command line too: each use adds to it (--allow A --allow B) */
};

/* In the order the man page and the "unknown key" message list the INI keys of a section. */
enum lr_opt_id {
	LR_O_TX_IFACE, LR_O_RX_IFACE, LR_O_NETNS,
	/* send, [tx] and [stream] (some shared with recv) */
	LR_O_DST_IP, LR_O_SRC_IP, LR_O_DST_MAC, LR_O_SRC_MAC, LR_O_SRC_PORT, LR_O_DST_PORT, LR_O_SIZE, LR_O_FLOWS,
	LR_O_RATE, LR_O_COUNT, LR_O_TX_DURATION, LR_O_QUEUES, LR_O_CPUS, LR_O_TX_ENGINE, LR_O_XSK_MODE, LR_O_BATCH,
	LR_O_JSON, LR_O_QUIET, LR_O_VERBOSE, LR_O_ALLOW_PHYSICAL, LR_O_TX_PCAP, LR_O_PCAP_COUNT, LR_O_TX_PCAP_EVERY,
	LR_O_PCAP_MAX_BYTES, LR_O_REPLAY, LR_O_REPLAY_TIMING, LR_O_LOOPS, LR_O_STAMP, LR_O_LATENCY_EVERY, LR_O_RTT,
	LR_O_PREPARE_PEER,
	/* recv and [rx] */
	LR_O_RX_DURATION, LR_O_ONCE, LR_O_IDLE_TIMEOUT, LR_O_PASS, LR_O_RX_ENGINE, LR_O_XDP_MODE, LR_O_WORKERS, LR_O_READY_FILE,
	LR_O_RX_PCAP, LR_O_RX_PCAP_EVERY, LR_O_PCAP_FOREIGN, LR_O_SNAPLEN, LR_O_PROG_STATS,
	/* run, probe, veth */
	LR_O_RUN_FILE, LR_O_CHECK, LR_O_RUN_JSON, LR_O_CSV, LR_O_RUN_QUIET,
	LR_O_PROBE_IFACE, LR_O_PROBE_JSON, LR_O_PROBE_VERBOSE,
	LR_O_VETH_TARGET, LR_O_VETH_NETNS, LR_O_VETH_JSON, LR_O_VETH_VERBOSE,
	/* reflect */
	LR_O_REFLECT_IFACE, LR_O_REFLECT_MODE, LR_O_REFLECT_DURATION, LR_O_REFLECT_ONCE,
	/* send --peer, and agent */
	LR_O_PEER, LR_O_PEER_IFACE, LR_O_PEER_NETNS, LR_O_REVERSE, LR_O_TOKEN_FILE, LR_O_CLOCK,
	LR_O_LISTEN, LR_O_AGENT_TOKEN_FILE, LR_O_INSECURE, LR_O_AGENT_NETNS, LR_O_ALLOW, LR_O_AGENT_PHYSICAL,
	LR_O_AGENT_READY_FILE, LR_O_METRICS, LR_O_CAPTURE_DIR, LR_O_ALLOW_NETNS,
	/* matrix */
	LR_O_MATRIX_AGENTS, LR_O_MATRIX_PAIRS, LR_O_MATRIX_SIZES, LR_O_MATRIX_DURATION, LR_O_MATRIX_COUNT,
	LR_O_MATRIX_FAMILY, LR_O_MATRIX_TOKEN_FILE, LR_O_MATRIX_MAX_LOSS, LR_O_MATRIX_MIN_PPS, LR_O_MATRIX_JSON,
	LR_O_MATRIX_CSV,
	/* INI only */
	LR_O_NAME, LR_O_MODE, LR_O_DURATION, LR_O_WARMUP, LR_O_REPEAT, LR_O_MAX_LOSS, LR_O_MAX_P99, LR_O_TRIAL,
	LR_O_MAX_RTT_P99, LR_O_RESOLUTION, LR_O_MAX_TRIALS, LR_O_STREAM_SIZE, LR_O_SHARE, LR_O_RUN_AGENT, LR_O_RUN_TOKEN_FILE,
	LR_O_RUN_CLOCK, LR_O_RUN_PREPARE_PEER, LR_O_COST, LR_O_SENDER_LIMITED,
	LR_O_COUNT_ALL
};

extern const struct lr_opt lr_opts[LR_O_COUNT_ALL];

/*
 * Where one option's value lands in a caller's struct. @aux and @given are
 * 1 + an offset, so 0 means none: @aux holds the second part of the value
 * (IP family, IDLIST count, STEP pps, the count of an INI list); @given a
 * bool set when the user gives the option (never by a default).
 */
struct lr_bind {
	enum lr_opt_id id;
	unsigned int size;	/* of the field; of one element for an INI list */
	size_t off;
	size_t aux;
	size_t given;
};

#define LR_FIELD(type, f)	sizeof(((type *)0)->f), offsetof(type, f)
#define LR_ELEMS(type, f)	sizeof(((type *)0)->f[0]), offsetof(type, f)
#define LR_AT(type, f)		(offsetof(type, f) + 1)

/*
 * Parses @arg (NULL for flags) into the field @b names in @base, and sets
 * its given flag. @name is the option as the user wrote it ("--size",
 * "[tx] sizes") and starts the one-line message in @err: 0 or -EINVAL.
 */
int lr_opt_set(const struct lr_bind *b, void *base, const char *name, const char *arg, char *err, size_t errlen);
/*
 * The same for a value its caller holds typed (the agent protocol's JSON numbers and arrays), with
 * the same bounds and messages and no text form: lr_opt_set_uint() for a COUNT or a DURATION (in
 * ns), lr_opt_set_ids() for an IDLIST. A list of the INI file is not a single value: -EINVAL.
 */
int lr_opt_set_uint(const struct lr_bind *b, void *base, const char *name, uint64_t x, char *err, size_t errlen);
int lr_opt_set_ids(const struct lr_bind *b, void *base, const char *name, const uint64_t *ids, unsigned int n,
		   char *err, size_t errlen);
/* Applies the default of every binding that has one; given flags stay false. */
void lr_opt_defaults(const struct lr_bind *b, unsigned int n, void *base);
/* The bounds in words ("64..9018 bytes", "more than 0, at most a year"), "" when there are none to say. */
void lr_opt_bounds(const struct lr_kind *k, char *buf, size_t len);
/*
 * What --help and the man page say of @o: its help text, its choices, then
 * "(HINT; BOUNDS; default: DEF)" or "(...; required)" with the parts there are.
 */
void lr_opt_describe(const struct lr_opt *o, char *buf, size_t len);

#endif
