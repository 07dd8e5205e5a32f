/* SPDX-License-Identifier: MIT */
/* linerate(1): the manual page in roff, generated from the command table and the option table. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd/cli.h"
#include "cmd/man.h"
#include "util/version.h"

/*
 * Text for roff: backslashes and dashes escaped, no line starting with a
 * control character. @lines keeps line breaks (examples); else they become
 * blanks, as the --help paragraphs' breaks are for a terminal and roff fills.
 */
static void put(FILE *out, const char *s, bool lines)
{
	bool bol = true;

	for (; *s; s++) {
		if (bol && (*s == '.' || *s == '\''))
			fputs("\\&", out);
		bol = false;
		if (*s == '\\') {
			fputs("\\e", out);
		} else if (*s == '-') {
			fputs("\\-", out);
		} else if (*s == '\n') {
			fputc(lines ? '\n' : ' ', out);
			bol = lines;
		} else {
			fputc(*s, out);
		}
	}
}

static void text(FILE *out, const char *s)
{
	put(out, s, false);
}

/* @s in bold ('B') or italic ('I'), then back to roman. */
static void font(FILE *out, char f, const char *s)
{
	fprintf(out, "\\f%c", f);
	text(out, s);
	fputs("\\fR", out);
}

/* A paragraph of running text. */
static void para(FILE *out, const char *s)
{
	fputs(".PP\n", out);
	text(out, s);
	fputc('\n', out);
}

/* The command that takes option @id, @prefer ("send" for [tx], "recv" for [rx]) if it does; or NULL. */
static const struct lr_cli *cli_of(enum lr_opt_id id, const char *prefer)
{
	const struct lr_cli *const *c, *found = NULL;
	unsigned int i;

	for (c = lr_commands; *c; c++)
		for (i = 0; i < (*c)->opts->nbinds; i++)
			if ((*c)->opts->binds[i].id == id && (!found || !strcmp((*c)->cmd, prefer)))
				found = *c;
	return found;
}

/* "sizes or size": an INI key in bold, with its other spelling. */
static void key(FILE *out, const struct lr_opt *o)
{
	font(out, 'B', o->key);
	if (o->alias) {
		fputs(" or ", out);
		font(out, 'B', o->alias);
	}
}

/* "[tx] interface, [rx] interface": where the INI file has option @o. */
static void ini_places(FILE *out, const struct lr_opt *o)
{
	unsigned int i, n = 0;

	for (i = 0; i < sizeof(lr_ini_sections) / sizeof(lr_ini_sections[0]); i++) {
		if (!(o->secs & lr_ini_sections[i].sec))
			continue;
		fputs(n++ ? ", " : "", out);
		text(out, lr_ini_sections[i].title);
		fputc(' ', out);
		key(out, o);
	}
}

static void describe(FILE *out, const struct lr_opt *o)
{
	char desc[1024];

	lr_opt_describe(o, desc, sizeof(desc));
	text(out, desc);
	fputs(".\n", out);
}

static void option(FILE *out, enum lr_opt_id id)
{
	const struct lr_opt *o = &lr_opts[id];

	char name[64];

	fputs(".TP\n", out);
	if (o->short_name)
		fprintf(out, "\\fB\\-%c\\fR, ", o->short_name);
	snprintf(name, sizeof(name), "--%s", o->name);
	font(out, 'B', name);
	if (o->metavar) {
		fputc(' ', out);
		font(out, 'I', o->metavar);
	}
	fputc('\n', out);
	describe(out, o);
	if (o->key) {
		fputs("In a run file: ", out);
		ini_places(out, o);
		fputs(".\n", out);
	}
}

/* ".B linerate send" and its usage line. */
static void synopsis(FILE *out, const struct lr_cli *c)
{
	fputs(".B linerate ", out);
	text(out, c->cmd);
	fputc('\n', out);
	text(out, c->usage);
	fputc('\n', out);
}

/* A paragraph with a bold tag. */
static void tag(FILE *out, const char *name, const char *body)
{
	fputs(".TP\n.B ", out);
	text(out, name);
	fputc('\n', out);
	text(out, body);
	fputc('\n', out);
}

static void command(FILE *out, const struct lr_cli *c)
{
	unsigned int i;

	fputs(".SS \"linerate ", out);
	text(out, c->cmd);
	fputs("\"\n", out);
	synopsis(out, c);
	para(out, c->about);
	for (i = 0; i < c->opts->nbinds; i++)
		option(out, c->opts->binds[i].id);
	fputs(".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nshow this help.\n", out);
}

static void ini_key(FILE *out, const struct lr_opt *o, unsigned int sec)
{
	const struct lr_cli *c = cli_of((enum lr_opt_id)(o - lr_opts), sec == LR_SEC_RX ? "recv" : "send");

	fputs(".TP\n", out);
	key(out, o);
	fputs(" = ", out);
	font(out, 'I', o->metavar);
	if (o->list)
		fprintf(out, "[, ...] (up to %u)", o->list);
	fputc('\n', out);
	describe(out, o);
	if (o->ini_note) {
		text(out, o->ini_note);
		fputs(".\n", out);
	}
	if (c) {
		char name[64];

		snprintf(name, sizeof(name), "linerate %s --%s", c->cmd, o->name);
		fputs("As ", out);
		font(out, 'B', name);
		fputs(".\n", out);
	}
}

static void ini(FILE *out)
{
	unsigned int i, id;

	fputs(".SH \"RUN FILES\"\n", out);
	para(out, "linerate run reads an INI file: [section] headers and key = value lines. A line starting with ';' "
		  "or '#' is a comment, and so is the rest of a line after a blank and ';'. Keys and section "
		  "names are case-sensitive. Leading blanks are ignored (there are no multi-line values); a line "
		  "holds at most 199 characters. Every section and key may appear once; an empty value is an error, "
		  "so leave a key out to get its default. The first error is reported as FILE:LINE: message, and "
		  "linerate run --check FILE reports it without touching any interface. configs/reference.ini "
		  "gives every key with its default.");
	para(out, "Values are written as on the command line: durations 500ms, 2s, 1m, 250us (a bare number is "
		  "seconds); counts 1500, 64k, 1M; rates max, 20k, 1Mpps or 100Mbit, 2.5Gbit (the L1 line rate); "
		  "percentages 0.1% or 0.1; lists 0-3 or 0,2,5-6 for queues and CPUs.");
	for (i = 0; i < sizeof(lr_ini_sections) / sizeof(lr_ini_sections[0]); i++) {
		fputs(".SS \"", out);
		text(out, lr_ini_sections[i].title);
		fputs("\"\n", out);
		text(out, lr_ini_sections[i].about);
		fputc('\n', out);
		for (id = 0; id < LR_O_COUNT_ALL; id++)
			if (lr_opts[id].key && (lr_opts[id].secs & lr_ini_sections[i].sec))
				ini_key(out, &lr_opts[id], lr_ini_sections[i].sec);
	}
}

/* Tagged paragraphs: pairs of strings, the tag first; NULL ends them. */
static void tagged(FILE *out, const char *const *pairs)
{
	for (; *pairs; pairs += 2)
		tag(out, pairs[0], pairs[1]);
}

static void example(FILE *out, const char *what, const char *cmds)
{
	para(out, what);
	fputs(".PP\n.RS 4\n.nf\n", out);
	put(out, cmds, true);
	fputs("\n.fi\n.RE\n", out);
}

static const char *const exit_codes[] = {
	"0", "Success.",
	"1", "Runtime failure: the test could not be completed (an interface vanished, a write failed; matrix: "
	     "a cell could not run, an agent unreachable, busy or refusing, while the other cells ran).",
	"2", "Usage, configuration or environment error: a bad option or value, a bad run file, an unknown "
	     "interface or one that is down, a frame larger than the MTU, a queue the device lacks, missing "
	     "privileges. One line on stderr names the option, FILE:LINE and key, or the culprit, and nothing "
	     "is left attached.",
	"3", "The test ran but missed a threshold the user set (run: max_loss, max_p99, or a throughput search "
	     "that found no passing rate; matrix: a cell over --max-loss or under --min-pps).",
	"130, 143", "run or matrix interrupted by SIGINT or SIGTERM: the finished steps or cells are reported and "
		    "written. send and recv take either signal as the end of the test: they print their summary and "
		    "exit 0.",
	NULL,
};

static void page(FILE *out, const char *date)
{
	const struct lr_cli *const *c;

	fprintf(out, ".\\\" Generated by linerate-man from src/opt/opttab.c and src/cmd/*.c: do not edit.\n");
	fprintf(out, ".TH LINERATE 1 \"%s\" \"linerate %s\" \"User Commands\"\n", date, lr_release());
	fputs(".SH NAME\nlinerate \\- raw UDP packet\\-rate tests for container network paths\n", out);
	fputs(".SH SYNOPSIS\n", out);
	for (c = lr_commands; *c; c++) {
		synopsis(out, *c);
		fputs(".br\n", out);
	}
	fputs(".B linerate help\n.br\n.B linerate \\-\\-version\n", out);

	fputs(".SH DESCRIPTION\n", out);
	para(out, "linerate measures how many packets a Linux host's virtual network paths really carry. It sends "
		  "raw UDP frames as fast as the host can make them (AF_XDP, one pinned worker per NIC queue, or "
		  "frames made in the kernel by BPF_PROG_RUN) and counts every one of them on the far side with an "
		  "XDP program, falling back to AF_PACKET rings where AF_XDP or XDP is not available. It reports "
		  "packets per second, the L2 and L1 bit rate, exact loss, reordering, duplicates and one-way "
		  "latency per flow and frame size.");
	para(out, "Frame sizes are Ethernet frame sizes including the 4-byte FCS, as in RFC 2544; bit rates are "
		  "L1 line rates, where every frame also costs 20 bytes of preamble and inter-frame gap. Numbers "
		  "take the decimal suffixes k, M and G.");
	fputs(".PP\nThe commands:\n", out);
	for (c = lr_commands; *c; c++)
		tag(out, (*c)->cmd, (*c)->summary);

	fputs(".SH COMMANDS\n", out);
	for (c = lr_commands; *c; c++)
		command(out, *c);
	ini(out);

	fputs(".SH \"EXIT STATUS\"\n", out);
	tagged(out, exit_codes);

	fputs(".SH FILES\n", out);
	para(out, "Every file linerate writes (--json, --csv, --pcap, --ready-file) is created under a new, "
		  "unpredictable name beside the target, with exclusive creation, and renamed into place when "
		  "complete: a symlink at the target is replaced, never followed, and an interrupted run leaves no "
		  "half-written file. JSON, CSV and the ready file get mode 0666 less the umask; pcap files 0600 "
		  "less the umask, as a capture may hold other people's traffic. Every output path is checked "
		  "before any interface is touched. - as FILE is standard output.");
	para(out, "/run/netns/NAME is where --netns NAME and netns = NAME look for a network namespace.");

	fputs(".SH EXAMPLES\n", out);
	example(out, "In the lab of the source tree (scripts/lab up veth: veth0 198.18.1.1 in namespace "
		     "lrlab-veth-host, its peer eth0 198.18.1.2 in lrlab-veth-c1), count on eth0 until the sender's "
		     "end-of-test markers are in, and send it 10 s of 64-byte frames in 8 flows:",
		"linerate recv -i eth0 --netns lrlab-veth-c1 --once --json rx.json &\n"
		"linerate send -i veth0 --netns lrlab-veth-host --dst-ip 198.18.1.2 --flows 8 --duration 10s");
	example(out, "Two queues (scripts/lab up veth --queues 2), two pinned workers, 1 Mpps in all, 512-byte "
		     "frames, one million frames:",
		"linerate send -i veth0 --netns lrlab-veth-host --dst-ip 198.18.1.2 --queues 0-1 --cpus 0-1 \\\n"
		"        --rate 1Mpps --size 512 --count 1M");
	example(out, "Send into a container through the host side of its veth:",
		"linerate send -i \"$(linerate veth container:web)\" --dst-ip 172.17.0.2 --count 1M");
	example(out, "Round trips in the lab's bridge (scripts/lab up bridge): reflect in one container, and "
		     "from the other take round-trip times and the loss on the way there and back:",
		"linerate reflect -i eth0 --netns lrlab-bridge-c2 --once &\n"
		"linerate send -i eth0 --netns lrlab-bridge-c1 --dst-ip 198.18.2.3 --rtt --rate 100k --duration 5s");
	example(out, "An agent for controllers on other hosts, its tests' counts scraped by Prometheus from "
		     "http://10.0.0.2:9446/metrics:",
		"linerate agent --listen 10.0.0.2 --token-file /etc/linerate.token \\\n"
		"        --metrics 10.0.0.2:9446");
	example(out, "With linerate agent on every node, every pair of nodes both ways at two frame sizes; the "
		     "agents found by one name that resolves to all of them (a Kubernetes headless Service), a cell "
		     "failing above 0.1 % loss:",
		"linerate matrix --agents linerate-agent.linerate.svc.cluster.local --token-file /etc/linerate/token \\\n"
		"        --sizes 64,1518 --rate 100k --count 200k --max-loss 0.1 --json matrix.json");
	example(out, "Check a run file, then run it:",
		"linerate run --check configs/veth-host-to-container.ini\n"
		"linerate run configs/veth-host-to-container.ini --json result.json --csv result.csv");

	fputs(".SH \"SEE ALSO\"\n", out);
	fputs(".BR ip\\-netns (8),\n.BR ethtool (8),\n.BR tcpdump (8),\n.BR bpftool (8);\n", out);
	fputs("configs/reference.ini and docs/ in the linerate source tree.\n", out);
}

/* A text line, split after each sentence and at blanks so that no piece passes 79 bytes. */
static void wrap(FILE *out, const char *line)
{
	for (;;) {
		const char *p, *brk = NULL;

		for (p = line; *p; p++) {
			if (*p != ' ')
				continue;
			if (p - line > 79 && brk)
				break;
			brk = p;
			if (p > line && p[-1] == '.')
				break;	/* a sentence ends */
		}
		if (!brk || (!*p && strlen(line) <= 79)) {
			fprintf(out, "%s\n", line);
			return;
		}
		fprintf(out, "%.*s\n", (int)(brk - line), line);
		line = brk + 1;
		if (*line == '.' || *line == '\'')
			fputs("\\&", out);
	}
}

/*
 * The page as roff linters like it: one sentence per line, no text line over
 * 80 bytes, no .PP right after a heading. The tag line after .TP and .nf
 * blocks stay as they are.
 */
static void tidy(FILE *out, char *buf)
{
	bool nofill = false, tag = false, heading = false;
	char *line, *next;

	for (line = buf; *line; line = next) {
		char *nl = strchr(line, '\n');

		next = nl ? nl + 1 : line + strlen(line);
		if (nl)
			*nl = '\0';
		if (heading && !strcmp(line, ".PP"))
			continue;
		heading = !strncmp(line, ".SH", 3) || !strncmp(line, ".SS", 3);
		if (line[0] == '.' || nofill || tag)
			fprintf(out, "%s\n", line);
		else
			wrap(out, line);
		nofill = (nofill || !strcmp(line, ".nf")) && strcmp(line, ".fi");
		tag = !strcmp(line, ".TP");
	}
}

void lr_man_write(FILE *out, const char *date)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);

	if (!mem) {
		page(out, date);
		return;
	}
	page(mem, date);
	if (fclose(mem)) {
		free(buf);
		page(out, date);
		return;
	}
	tidy(out, buf);
	free(buf);
}
