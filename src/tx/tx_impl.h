/* SPDX-License-Identifier: MIT */
/* The sender's state, shared by the files of tx/ only (tx.c runs it, summary.c words its result). */
#ifndef LINERATE_TX_IMPL_H
#define LINERATE_TX_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "sys/cost.h"
#include "sys/counters.h"
#include "tx/engine.h"
#include "tx/tx.h"
#include "util/capture.h"
#include "util/choose.h"

struct lr_tx {
	const struct lr_tx_spec *o;
	struct lr_if ifc;
	struct lr_tmpl tmpl;
	const struct lr_engine_ops *ops;
	struct lr_worker *ws;
	unsigned int nopen;
	volatile int go;
	volatile uint64_t deadline_ns;
	uint64_t start_ns;
	uint64_t tx_dropped0;
	bool have_dropped;
	/* the device's drops when the data phase ended, before the markers (whose drops are not data) */
	struct lr_data_end data_end;
	uint64_t tx_dropped_data;
	bool have_dropped_data;
	uint64_t qdev0[LR_MAX_WORKERS];	/* the device's own per-queue TX counter at the start */
	bool have_qdev;
	struct lr_dev_counters dev0;	/* the device's counters at the start */
	char mac_how[64];
	char notice[256];	/* what the caller should say before the test ("" none): lr_tx_notice() */
	char engine_line[LR_CHOICE_WHY_MAX(3) + 512 + 2048];	/* the engine choice in words: lr_tx_engine_line() */
	unsigned int flow_base, flows_total;
	unsigned int frame_bytes;	/* per frame incl. FCS, for bit rates (a replay's mean) */
	uint32_t latency_every;	/* --latency-every, or its default for the rate */
	struct lr_pcap_frames replay_frames;
	struct lr_replay replay;
	/* the readings the cost split needs around the workers' run (sys/cost.h) */
	struct lr_cpu_times cpu0, cpu1;
	pid_t ksoftirqd[LR_MAX_CPUS];
	uint64_t ksirq0[LR_MAX_CPUS];	/* ksoftirqd/N's run time at the start, by CPU; 0: not read */
	uint64_t prog_runs0[LR_MAX_WORKERS];	/* the live program's counted runs at the start */
	bool have_cpu;
	struct lr_tx_cpu cpu;
};

#endif
