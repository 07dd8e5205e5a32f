# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# The shell library of linerate's scripts (bench, compare, demo, lab) and end-to-end tests
# (tests/e2e/lib.sh): background processes by PID with their output in files, bounded waits,
# namespaces on a cleanup list, veth pairs between two namespaces, and output directories and
# locks that no other user can turn into a symlink for root to write through.
#
# The sourcing script sets LR_TMP (the directory that holds spawned processes' output) before
# lr_spawn, and LR_TAG (the "[TAG]" of lr_log; LR_LOG_FD=2 sends its lines to stderr); it defines
# die() for lr_out_dir and lr_root_lock. Its exit trap calls lr_stop_children, then lr_ns_del_all.

LR_PIDS=()
LR_NAMESPACES=()
LR_LAST_PID=

lr_log()
{
	printf '[%s] %s\n' "${LR_TAG:-${0##*/}}" "$*" >&"${LR_LOG_FD:-1}"
}

lr_now_ns()
{
	date +%s%N
}

# ---------------------------------------------------------------------------------------------
# Processes.

# lr_spawn NAME CMD...: CMD in the background, stdout and stderr in $LR_TMP/NAME.{out,err}, its
# PID in LR_LAST_PID and on the list lr_stop_children ends. Must not run in a subshell. Children
# run in the background so that a signal reaches the script's trap at once.
lr_spawn()
{
	local name=$1

	shift
	"$@" >"${LR_TMP:?lr_spawn needs LR_TMP}/$name.out" 2>"$LR_TMP/$name.err" &
	LR_LAST_PID=$!
	LR_PIDS+=("$LR_LAST_PID")
}

# lr_wait_pid PID TIMEOUT_S: wait for a child; its exit code, or 124 after SIGKILL on timeout.
lr_wait_pid()
{
	local pid=$1 deadline rc=0

	deadline=$(($(lr_now_ns) + $2 * 1000000000))
	while kill -0 "$pid" 2>/dev/null; do
		if (($(lr_now_ns) > deadline)); then
			lr_log "PID $pid still running after ${2}s, sending SIGKILL"
			kill -KILL "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			return 124
		fi
		sleep 0.05
	done
	# stderr off: bash would report "Killed" for a child killed on purpose
	wait "$pid" 2>/dev/null || rc=$?
	return "$rc"
}

# lr_wait_for_file PATH TIMEOUT_S [PID]: poll for PATH; give up early when PID has exited.
lr_wait_for_file()
{
	local path=$1 pid=${3:-} deadline

	deadline=$(($(lr_now_ns) + $2 * 1000000000))
	until [[ -e $path ]]; do
		if [[ -n $pid ]] && ! kill -0 "$pid" 2>/dev/null; then
			lr_log "PID $pid exited before $path appeared"
			return 1
		fi
		if (($(lr_now_ns) > deadline)); then
			lr_log "$path did not appear within ${2}s"
			return 1
		fi
		sleep 0.05
	done
}

# lr_run_bounded NAME TIMEOUT_S CMD...: lr_spawn CMD under timeout(1) and wait; its exit code
# (124 when it ran out of time).
lr_run_bounded()
{
	local name=$1 bound=$2 rc=0

	shift 2
	lr_spawn "$name" timeout -k 5 "$bound" "$@"
	lr_wait_pid "$LR_LAST_PID" $((bound + 10)) || rc=$?
	return "$rc"
}

# True when PID is a child of this shell: a PID reaped long ago may belong to someone else now.
lr_is_child()
{
	[[ $(ps -o ppid= -p "$1" 2>/dev/null | tr -d ' ') == "$$" ]]
}

# lr_stop_children [GRACE_S]: SIGTERM to every spawned child still running, SIGKILL to those still
# there GRACE_S (default 3) seconds later, and reap them all.
lr_stop_children()
{
	local grace=${1:-3} pid i

	for pid in "${LR_PIDS[@]}"; do
		if lr_is_child "$pid"; then
			kill -TERM "$pid" 2>/dev/null
		fi
	done
	for pid in "${LR_PIDS[@]}"; do
		for ((i = 0; i < grace * 10; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if lr_is_child "$pid"; then
			lr_log "cleanup: PID $pid ignored SIGTERM for ${grace}s, sending SIGKILL"
			kill -KILL "$pid" 2>/dev/null
		fi
		wait "$pid" 2>/dev/null
	done
	return 0
}

# ---------------------------------------------------------------------------------------------
# Namespaces and devices. Everything is made inside namespaces; nothing in the root one.

# lr_ns_add NS: network namespace NS with lo up and IPv6 off (no router solicitation, MLD report
# or DAD probe in the counts). On the cleanup list before it exists, so a half-made one goes too.
lr_ns_add()
{
	LR_NAMESPACES+=("$1")
	ip netns add "$1" || return
	ip -n "$1" link set lo up || return
	ip netns exec "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 \
		>/dev/null 2>&1 || true
}

# lr_ns_list PREFIX: the namespaces whose names start with PREFIX-, one a line.
lr_ns_list()
{
	ip netns list 2>/dev/null | awk -v p="$1-" 'index($1, p) == 1 { print $1 }'
}

# lr_ns_del_all: remove every namespace lr_ns_add made.
lr_ns_del_all()
{
	local ns

	for ns in "${LR_NAMESPACES[@]}"; do
		ip netns del "$ns" 2>/dev/null || true
	done
}

# lr_veth_add NS1 IF1 NS2 IF2 [LINK OPTIONS...]: a veth pair created inside NS1 with its peer
# placed straight into NS2, so it never exists in the root namespace. The options (mtu 1450,
# numtxqueues 2 numrxqueues 2, ...) apply to both ends.
lr_veth_add()
{
	local ns1=$1 if1=$2 ns2=$3 if2=$4

	shift 4
	ip -n "$ns1" link add "$if1" "$@" type veth peer name "$if2" netns "$ns2" "$@"
}

# lr_addr NS IF CIDR: assign the address and bring the link up.
lr_addr()
{
	ip -n "$1" addr add "$3" dev "$2"
	ip -n "$1" link set "$2" up
}

lr_mac()
{
	ip -n "$1" -j link show dev "$2" | jq -r '.[0].address'
}

lr_rx_packets()
{
	ip -n "$1" -s -j link show dev "$2" | jq -r '.[0].stats64.rx.packets'
}

# lr_jget FILE EXPR [ABSENT]: the value of a jq expression, ABSENT (default "missing") when the
# file, the key or the value is not there.
lr_jget()
{
	local v absent=${3:-missing}

	v=$(jq -r "$2 // \"$absent\"" "$1" 2>/dev/null) || v=$absent
	[[ -n $v ]] || v=$absent
	printf '%s\n' "$v"
}

# ---------------------------------------------------------------------------------------------
# Output directories and locks of the scripts run as root (bench, compare).

# lr_ours UID: the invoking user, or the user who ran sudo.
lr_ours()
{
	[[ $1 == "$(id -u)" || $1 == "${SUDO_UID:-none}" ]]
}

# lr_no_others PATH [sticky]: PATH (not followed) has no write bit for group or others; with
# "sticky", the sticky bit (as on /tmp) will do instead: no one can then rename or remove an entry
# of ours.
lr_no_others()
{
	local m

	m=$(stat -c %a -- "$1") || return 1
	((8#$m & 8#022)) || return 0
	[[ ${2:-} == sticky ]] && ((8#$m & 8#1000))
}

# lr_out_dir OPTION DIR: DIR, made when missing, as a physical path on stdout; one line and exit 2
# when another user could put files or symlinks in it or swap it or a directory above it for a
# symlink: DIR must be yours (root's, or the sudo user's) and writable by no one else; every
# directory above it root's or yours and writable by no one else, or sticky as /tmp is (no one
# else can then rename or remove an entry of yours); and no symlink on the way someone else's.
lr_out_dir()
{
	local opt=$1 want=$2 abs p real u

	abs=$want
	[[ $abs == /* ]] || abs=$PWD/$abs
	# before mkdir, which must not make directories through someone else's symlink
	lr_foreign_links "$opt" "$want" "$abs"
	mkdir -p -- "$abs" 2>/dev/null || die "$opt: cannot create '$want'"
	lr_foreign_links "$opt" "$want" "$abs"
	real=$(cd -P -- "$abs" 2>/dev/null && pwd) || die "$opt: '$want' is not a directory"
	p=$real
	while :; do
		u=$(stat -c %u -- "$p")
		if [[ $p == "$real" ]]; then
			[[ $u == 0 ]] || lr_ours "$u" || die "$opt: '$want' belongs to $(stat -c %U -- "$p"), not to you: that" \
				"user could plant symlinks in it for root to write through; choose another directory"
			lr_no_others "$p" || die "$opt: '$want' is writable by group or others, who could plant symlinks in it" \
				"for root to write through; choose another directory"
		else
			[[ $u == 0 ]] || lr_ours "$u" || die "$opt: '$want' is in $p, which belongs to $(stat -c %U -- "$p"):" \
				"that user could swap what is in it for a symlink; choose another directory"
			lr_no_others "$p" sticky || die "$opt: '$want' is in $p, which group or others can write (no sticky bit):" \
				"they could swap what is in it for a symlink; choose another directory"
		fi
		[[ $p != / ]] || break
		p=$(dirname -- "$p")
	done
	printf '%s\n' "$real"
}

# lr_foreign_links OPTION DIR ABS: exit 2 when a symlink on the way to ABS is someone else's.
lr_foreign_links()
{
	local p=$3 u

	while [[ -n $p && $p != / ]]; do
		if [[ -L $p ]]; then
			u=$(stat -c %u -- "$p")
			[[ $u == 0 ]] || lr_ours "$u" || die "$1: '$2' goes through $p, a symlink of $(stat -c %U -- "$p")'s," \
				"who could point it anywhere; choose another directory"
		fi
		p=$(dirname -- "$p")
	done
}

# lr_root_lock NAME: one NAME at a time on this machine, by flock on /run/linerate/NAME.lock (held
# until the script exits). The directory only root can write, so no one can plant a symlink at the
# lock's name; ">>" neither truncates nor needs the file to exist.
lr_root_lock()
{
	local dir=/run/linerate lock=/run/linerate/$1.lock

	[[ -d $dir ]] || mkdir -m 0755 "$dir" || die "cannot create $dir"
	if [[ -L $dir || $(stat -c %u -- "$dir") != 0 ]] || ! lr_no_others "$dir"; then
		die "$dir must be a directory of root's that no one else can write"
	fi
	exec {LR_LOCK_FD}>>"$lock"
	flock -n "$LR_LOCK_FD" || die "another $1 is running (lock $lock)"
}
