# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# A private Docker engine for the tests and the comparison (sourced after scripts/lib.sh).
#
# The engine runs inside a network namespace the caller made (its "docker host"): its bridge,
# its iptables chains, its FORWARD policy and ip_forward are that namespace's, and the root
# namespace is left alone. It has its own data root, exec root, socket, pid file, cgroup parent
# and a bridge of its own (passed with --bridge, never docker0) on a /24 of 198.18.0.0/15. What
# an engine still changes outside its namespace (br_netfilter where it is a module, loaded for the
# whole host; /etc/docker/key.json, /run/docker, /run/containerd, cgroup directories) is recorded
# before it starts and put back after it stops; lr_host_state lets a test check that, and also
# sees the root namespace's sysctls and iptables and nft tables, which are never rewritten here.
#
#   lr_dockerd_start NS SUBNET   e.g. NS=lr-docker-host-123 SUBNET=198.18.240 (the bridge is .1)
#   lr_docker ARGS...            the docker CLI talking to that engine
#   lr_docker_busybox_image TAG  import a minimal image (busybox-static, `sleep` as its command)
#   lr_dockerd_stop              remove every container, stop the engine, put the host back
#
# Sets LR_DOCKER_HOST (unix://.../docker.sock, also exported as DOCKER_HOST so that linerate's
# container:NAME finds the engine), LR_CONTAINERD_SOCK (its own containerd, never a system one),
# LR_DOCKERD_PID, LR_DOCKERD_DIR, LR_DOCKERD_BRIDGE. LR_DOCKERD_CGROUPS lists the cgroup names
# (below each hierarchy's root) whose processes lr_dockerd_stop kills and whose directories it
# removes: the engine's own; a caller that runs containers of its own through LR_CONTAINERD_SOCK
# adds their namespace's.

LR_DOCKERD_PID=
LR_DOCKERD_DIR=
LR_DOCKERD_NS=
LR_DOCKERD_BRIDGE=
LR_DOCKER_HOST=
LR_DOCKER_CLI=
LR_CONTAINERD_SOCK=
LR_CONTAINERD_PID=
LR_DOCKERD_CGROUPS=()

# lr_host_state: what a Docker engine may change on the host, as text to compare.
lr_host_state()
{
	local k f

	for k in net.ipv4.ip_forward net.ipv6.conf.all.forwarding net.bridge.bridge-nf-call-iptables \
		net.bridge.bridge-nf-call-ip6tables net.bridge.bridge-nf-call-arptables; do
		f=/proc/sys/${k//.//}
		[[ -e $f ]] && printf 'sysctl %s=%s\n' "$k" "$(cat "$f")"
	done
	printf 'module br_netfilter %s\n' "$([[ -d /sys/module/br_netfilter ]] && echo present || echo absent)"
	for f in /etc/docker /etc/docker/key.json /run/docker /run/containerd /var/lib/docker /var/lib/containerd \
		/run/docker.sock /var/run/docker.pid; do
		[[ -e $f ]] && printf 'path %s\n' "$f"
	done
	nft list tables 2>/dev/null | sed 's/^/nft /'
	# rules and policies, not counters or the time of the dump
	iptables-save 2>/dev/null | sed -e '/^#/d' -e 's/\[[0-9]*:[0-9]*\]//' | sed 's/^/iptables /'
	ip6tables-save 2>/dev/null | sed -e '/^#/d' -e 's/\[[0-9]*:[0-9]*\]//' | sed 's/^/ip6tables /'
}

# The CLI: the engine's own package's first (its API version), else any docker on PATH.
lr_docker()
{
	"$LR_DOCKER_CLI" -H "$LR_DOCKER_HOST" "$@"
}

# lr_dockerd_start NS SUBNET: start the engine in namespace NS with bridge lrdk<pid> at SUBNET.1/24.
# Returns non-zero (the engine's log in $LR_DOCKERD_DIR/dockerd.log) when it does not answer in 30 s.
lr_dockerd_start()
{
	local ns=$1 net=$2 d i

	if [[ -x /usr/bin/docker ]]; then
		LR_DOCKER_CLI=/usr/bin/docker
	else
		LR_DOCKER_CLI=$(command -v docker) || { lr_log "docker: no docker CLI"; return 1; }
	fi
	command -v dockerd >/dev/null || { lr_log "docker: no dockerd (install docker.io)"; return 1; }
	d=$(mktemp -d /tmp/lr-dockerd.XXXXXX) || return
	LR_DOCKERD_DIR=$d
	LR_DOCKERD_NS=$ns
	lr_host_state >"$d/host.before"
	LR_DOCKERD_BRIDGE=lrdk$(($$ % 100000))
	ip -n "$ns" link add "$LR_DOCKERD_BRIDGE" type bridge || return
	ip -n "$ns" addr add "$net.1/24" dev "$LR_DOCKERD_BRIDGE" || return
	ip -n "$ns" link set "$LR_DOCKERD_BRIDGE" up || return
	printf '{}\n' >"$d/daemon.json"
	LR_DOCKER_HOST=unix://$d/docker.sock
	export DOCKER_HOST=$LR_DOCKER_HOST
	LR_DOCKERD_CGROUPS+=("lr-dockerd-$$")
	# A containerd of its own: dockerd would take a system one's socket where one runs, and put
	# the test's containers next to that host's.
	LR_CONTAINERD_SOCK=$d/containerd.sock
	cat >"$d/containerd.toml" <<-EOT
		version = 2
		root = "$d/containerd/root"
		state = "$d/containerd/state"
		disabled_plugins = ["io.containerd.grpc.v1.cri"]
		[grpc]
		  address = "$LR_CONTAINERD_SOCK"
		[ttrpc]
		  address = "$LR_CONTAINERD_SOCK.ttrpc"
		[debug]
		  address = "$d/containerd-debug.sock"
	EOT
	# nsenter, not `ip netns exec`: that one remounts /sys, and dockerd then finds no cgroups
	nsenter --net="/run/netns/$ns" containerd --config "$d/containerd.toml" --log-level warn \
		>"$d/containerd.log" 2>&1 &
	LR_CONTAINERD_PID=$!
	for ((i = 0; i < 100; i++)); do
		[[ -S $LR_CONTAINERD_SOCK ]] && break
		kill -0 "$LR_CONTAINERD_PID" 2>/dev/null || break
		sleep 0.1
	done
	if [[ ! -S $LR_CONTAINERD_SOCK ]]; then
		lr_log "docker: containerd did not start (log: $d/containerd.log)"
		tail -n 5 "$d/containerd.log" >&2
		return 1
	fi
	# cgroupfs: a systemd host would otherwise have dockerd want a .slice for --cgroup-parent
	nsenter --net="/run/netns/$ns" dockerd --data-root "$d/root" --exec-root "$d/exec" \
		-H "$LR_DOCKER_HOST" --pidfile "$d/dockerd.pid" --config-file "$d/daemon.json" \
		--containerd "$LR_CONTAINERD_SOCK" --exec-opt native.cgroupdriver=cgroupfs \
		--bridge "$LR_DOCKERD_BRIDGE" --cgroup-parent "/lr-dockerd-$$" \
		--default-address-pool "base=198.19.240.0/20,size=24" --shutdown-timeout 2 \
		--log-level warn >"$d/dockerd.log" 2>&1 &
	LR_DOCKERD_PID=$!
	for ((i = 0; i < 150; i++)); do
		lr_docker version >/dev/null 2>&1 && return 0
		kill -0 "$LR_DOCKERD_PID" 2>/dev/null || break
		sleep 0.2
	done
	lr_log "docker: dockerd did not answer on $LR_DOCKER_HOST (log: $d/dockerd.log)"
	tail -n 5 "$d/dockerd.log" >&2
	return 1
}

# lr_docker_busybox_image TAG: an image of one static busybox, imported (no registry).
lr_docker_busybox_image()
{
	local root=$LR_DOCKERD_DIR/busybox-root a

	mkdir -p "$root/bin" "$root/tmp" || return
	cp /bin/busybox "$root/bin/busybox" || return
	for a in sh sleep cat ip ping; do
		ln -sf busybox "$root/bin/$a"
	done
	tar -C "$root" -c . | lr_docker import -c 'CMD ["/bin/sleep", "600"]' - "$1" >/dev/null
}

# Processes below PID (children first walked from /proc), one a line.
lr_descendants()
{
	local p c

	for p in /proc/[0-9]*; do
		c=${p#/proc/}
		[[ $(awk '{ print $4 }' "$p/stat" 2>/dev/null) == "$1" ]] || continue
		echo "$c"
		lr_descendants "$c"
	done
}

# lr_dockerd_stop: containers removed, the engine stopped (SIGKILL for it and what it started
# after 20 s), its mounts and files gone, and the host as lr_dockerd_start found it.
lr_dockerd_stop()
{
	local d=$LR_DOCKERD_DIR pid i m ids f
	local -

	set +e	# cleanup: every step is tried, whatever the one before did
	[[ -n $d ]] || return 0
	if [[ -n $LR_DOCKERD_PID ]] && kill -0 "$LR_DOCKERD_PID" 2>/dev/null; then
		ids=$(timeout 20 "$LR_DOCKER_CLI" -H "$LR_DOCKER_HOST" ps -aq 2>/dev/null)
		if [[ -n $ids ]]; then
			# shellcheck disable=SC2086 # one ID a word
			timeout 30 "$LR_DOCKER_CLI" -H "$LR_DOCKER_HOST" rm -f $ids >/dev/null 2>&1
		fi
		kill -TERM "$LR_DOCKERD_PID" 2>/dev/null
		for ((i = 0; i < 100; i++)); do
			kill -0 "$LR_DOCKERD_PID" 2>/dev/null || break
			sleep 0.2
		done
		if kill -0 "$LR_DOCKERD_PID" 2>/dev/null; then
			lr_log "docker: dockerd ignored SIGTERM for 20 s: SIGKILL to it and what it started"
			for pid in $(lr_descendants "$LR_DOCKERD_PID") "$LR_DOCKERD_PID"; do
				kill -KILL "$pid" 2>/dev/null
			done
		fi
		wait "$LR_DOCKERD_PID" 2>/dev/null
	fi
	if [[ -n $LR_CONTAINERD_PID ]] && kill -0 "$LR_CONTAINERD_PID" 2>/dev/null; then
		kill -TERM "$LR_CONTAINERD_PID" 2>/dev/null
		for ((i = 0; i < 50; i++)); do
			kill -0 "$LR_CONTAINERD_PID" 2>/dev/null || break
			sleep 0.2
		done
		kill -KILL "$LR_CONTAINERD_PID" 2>/dev/null
		wait "$LR_CONTAINERD_PID" 2>/dev/null
	fi
	# containers whose engine was killed: their processes, by the cgroups they were put in
	for f in "${LR_DOCKERD_CGROUPS[@]}"; do
		lr_cgroup_kill "$f"
	done
	# shims that outlived a killed engine still hold our directory: theirs by the path they run from
	for f in /proc/[0-9]*/cmdline; do
		if { tr '\0' ' ' <"$f"; } 2>/dev/null | grep -qF "$d/"; then
			pid=${f#/proc/}
			pid=${pid%/cmdline}
			kill -KILL "$pid" 2>/dev/null
		fi
	done
	# mounts left by a killed engine (overlay, shm, netns bind mounts), deepest first
	while read -r m; do
		umount -l "$m" 2>/dev/null
	done < <(awk -v d="$d/" 'index($2, d) == 1 { print $2 }' /proc/self/mounts | sort -r)
	ip -n "$LR_DOCKERD_NS" link del "$LR_DOCKERD_BRIDGE" 2>/dev/null
	for f in "${LR_DOCKERD_CGROUPS[@]}"; do
		lr_cgroup_rm "$f"
	done
	lr_host_restore "$d/host.before"
	rm -rf "$d"
	LR_DOCKERD_DIR=
	LR_DOCKERD_PID=
	LR_CONTAINERD_PID=
	LR_DOCKERD_CGROUPS=()
}

# lr_cgroup_kill NAME: SIGKILL to every process in cgroup NAME (below each hierarchy's root) and below.
lr_cgroup_kill()
{
	local f pid
	local -

	set +e	# cleanup: every step is tried, whatever the one before did
	[[ $1 =~ ^[A-Za-z0-9._-]+$ ]] || return 0
	while read -r f; do
		while read -r pid; do
			[[ -n $pid ]] && kill -KILL "$pid" 2>/dev/null
		done <"$f"
	done < <(find /sys/fs/cgroup/*/"$1" /sys/fs/cgroup/"$1" -name cgroup.procs 2>/dev/null)
	return 0
}

# lr_cgroup_rm NAME: the directories of cgroup NAME and below, deepest first (empty ones only: the
# kernel refuses the rest).
lr_cgroup_rm()
{
	local -

	set +e	# cleanup: every step is tried, whatever the one before did
	[[ $1 =~ ^[A-Za-z0-9._-]+$ ]] || return 0
	find /sys/fs/cgroup/*/"$1" /sys/fs/cgroup/"$1" -depth -type d -exec rmdir {} \; 2>/dev/null
	return 0
}

# lr_br_netfilter_ours FILE [SYSMOD [PROC]]: true when br_netfilter is ours to unload: absent
# when lr_host_state wrote FILE, now a loaded module (SYSMOD/br_netfilter/initstate, which a
# built-in one lacks) that nothing holds (refcnt 0), and no other engine runs (a dockerd, kubelet
# or crio among PROC's processes: one started since relies on it, and it is theirs as much as
# ours). SYSMOD and PROC (default /sys/module, /proc) let a test ask on a stand-in tree.
lr_br_netfilter_ours()
{
	local before=$1 m=${2:-/sys/module}/br_netfilter proc=${3:-/proc} f

	grep -qxF 'module br_netfilter absent' "$before" || return 1
	[[ $(cat "$m/initstate" 2>/dev/null) == live ]] || return 1
	[[ $(cat "$m/refcnt" 2>/dev/null) == 0 ]] || return 1
	for f in "$proc"/[0-9]*/comm; do
		case $(cat "$f" 2>/dev/null) in
		dockerd | kubelet | crio) return 1 ;;
		esac
	done
	return 0
}

# lr_host_restore FILE: remove what an engine left since lr_host_state wrote FILE. Only its own
# leftovers: the engine ran in a namespace of its own, so a change to the root namespace's
# iptables, nft tables or sysctls is someone else's, reported by lr_host_state's comparison (a
# test fails on it) and never undone here. Modules are not a namespace's: dockerd loads
# br_netfilter for the whole host, and it is unloaded again when lr_br_netfilter_ours says so.
lr_host_restore()
{
	local before=$1 f
	local -

	set +e	# cleanup: every step is tried, whatever the one before did
	if lr_br_netfilter_ours "$before"; then
		# rmmod, not modprobe -r: that one would also take bridge, stp and llc, were they idle
		rmmod br_netfilter 2>/dev/null ||
			lr_log "docker: br_netfilter, which the engine loaded, could not be unloaded (rmmod)"
	elif grep -qxF 'module br_netfilter absent' "$before" && [[ -e /sys/module/br_netfilter/initstate ]]; then
		lr_log "docker: br_netfilter left loaded: it is held, or another engine runs"
	fi
	# /etc/docker holds only the key.json dockerd writes; /run/docker its plugin directory
	for f in /etc/docker/key.json /run/docker; do
		grep -qxF "path $f" "$before" || rm -rf "$f"
	done
	grep -qxF "path /etc/docker" "$before" || rmdir /etc/docker 2>/dev/null
	# /run/containerd: the shims' socket directory (s/) and runc's state (runc/) of our containerd,
	# removed only when nothing is left in them and no system containerd uses the directory
	if ! grep -qxF "path /run/containerd" "$before" && [[ ! -e /run/containerd/containerd.sock ]]; then
		find /run/containerd -depth -type d -empty -delete 2>/dev/null
	fi
	return 0
}
