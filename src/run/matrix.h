/* SPDX-License-Identifier: MIT */
/*
 * `linerate matrix`: its plan (the agents a list of names and addresses stands for, the pairs, the
 * ordered cells, each cell's verdict), pure and tested alone, and the run of every cell.
 */
#ifndef LINERATE_MATRIX_H
#define LINERATE_MATRIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include "opt/opts.h"

#define LR_MATRIX_MAX_AGENTS	256	/* after names are expanded: a headless Service of a big cluster */
#define LR_MATRIX_MAX_ADDRS	256	/* addresses one name may stand for */
/* a cell takes seconds: 4096 is hours of testing, and a bound on what the report holds */
#define LR_MATRIX_MAX_CELLS	4096
#define LR_MATRIX_PAIRS_MAX_BYTES (1U << 20)	/* a --pairs file */
#define LR_MATRIX_LINE_MAX	1024	/* a line of it */

/* One address a name or an address stands for. */
struct lr_matrix_addr {
	int family;	/* AF_INET, AF_INET6 */
	struct in6_addr addr;	/* IPv4 in its first 4 bytes */
};

/*
 * The addresses @host (a name, or an address) stands for, of @family (AF_UNSPEC: either): 0 and
 * up to @max of them in @out, their number in @n (at least one); else -errno with one line in
 * @err that names @host. lr_matrix_resolve() asks getaddrinfo(); the tests give their own.
 */
typedef int (*lr_matrix_resolve_fn)(const char *host, int family, struct lr_matrix_addr *out, unsigned int max,
				    unsigned int *n, char *err, size_t errlen);
int lr_matrix_resolve(const char *host, int family, struct lr_matrix_addr *out, unsigned int max, unsigned int *n,
		      char *err, size_t errlen);

struct lr_matrix_agent {
	struct lr_matrix_addr a;
	uint16_t port;
	char address[INET6_ADDRSTRLEN];	/* the address as text */
	char name[LR_HOSTPORT_MAX];	/* "ADDRESS:PORT" or "[ADDRESS]:PORT": where it is reached, its name in reports */
	char entry[LR_HOSTPORT_MAX];	/* the --agents entry it came from, as given (the first, for duplicates) */
};

/* An unordered pair of agents, by index; a != b. */
struct lr_matrix_pair {
	unsigned int a, b;
	int line;	/* of the --pairs file; 0: every pair */
};

/* One cell: agent @tx sends frames of @size bytes to agent @rx; @pair is its pair's index. */
struct lr_matrix_cell_id {
	unsigned int tx, rx, size, pair;
};

struct lr_matrix_plan {
	int family;	/* of every agent */
	unsigned int nagents;
	struct lr_matrix_agent agents[LR_MATRIX_MAX_AGENTS];	/* sorted: family, address, port */
	unsigned int npairs;
	struct lr_matrix_pair *pairs;
	unsigned int ncells;
	struct lr_matrix_cell_id *cells;
};

/*
 * The agents the --agents entries @entries (@n of "HOST[:PORT]") stand for: a name stands for
 * every address it resolves to, each with the entry's port (7446 when none); duplicates once;
 * sorted by family, address and port, so that the order does not depend on DNS. @family
 * (LR_MATRIX_FAMILY_*) keeps one family; with AUTO, agents of both are refused. Fewer than two
 * agents are refused. 0, or -EINVAL (-ENOENT when a name does not resolve) with one line in @err.
 */
int lr_matrix_agents(struct lr_matrix_plan *p, const char (*entries)[LR_HOSTPORT_MAX], unsigned int n,
		     int family, lr_matrix_resolve_fn resolve, char *err, size_t errlen);
/* Every pair of the agents, in the agents' order: (0,1), (0,2), ... (1,2), ... 0 or -ENOMEM. */
int lr_matrix_pairs_all(struct lr_matrix_plan *p, char *err, size_t errlen);
/*
 * The pairs of a --pairs file's @text (@len bytes read from @path): one pair a line, "A B", each an
 * address or a name as it resolves, with the port when agents share an address; '#' starts a
 * comment; blank lines are skipped. Each side must name exactly one agent, the two must differ,
 * and a pair may be named once. In the file's order. 0, or -EINVAL with "PATH:LINE: message".
 */
int lr_matrix_pairs_parse(struct lr_matrix_plan *p, const char *path, const char *text, size_t len,
			  lr_matrix_resolve_fn resolve, char *err, size_t errlen);
/* Reads @path (a regular file of at most LR_MATRIX_PAIRS_MAX_BYTES) and parses it. */
int lr_matrix_pairs_load(struct lr_matrix_plan *p, const char *path, lr_matrix_resolve_fn resolve, char *err,
			 size_t errlen);
/*
 * The cells, in the order they run: for each pair, A to B at every size, then B to A at every
 * size. More than LR_MATRIX_MAX_CELLS, or a size too small for the agents' family, is refused
 * (-EINVAL, one line).
 */
int lr_matrix_cells(struct lr_matrix_plan *p, const unsigned int *sizes, unsigned int nsizes, char *err,
		    size_t errlen);
void lr_matrix_plan_free(struct lr_matrix_plan *p);

/* The thresholds a cell is judged by; one not set judges nothing. */
struct lr_matrix_limits {
	bool max_loss_set;
	double max_loss;	/* a fraction, 0..1 (--max-loss 1% is 0.01) */
	bool min_pps_set;
	uint64_t min_pps;
};

/*
 * A cell that ran: within @l, or not, with why in @why ("" when it passed). With a loss limit,
 * a cell whose end-of-test markers did not all come fails: its loss is not settled. The minimum
 * rate is held against what was received (@rx_pps).
 */
bool lr_matrix_judge(const struct lr_matrix_limits *l, bool complete, double loss_pct, double rx_pps, char *why,
		     size_t len);

/* `linerate matrix`: its exit code (src/run/matrix_run.c). */
int lr_cmd_matrix(const struct lr_matrix_opts *o);

#endif
