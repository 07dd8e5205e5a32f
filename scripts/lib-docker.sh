# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# A private Docker engine for the tests and the comparison (sourced after scripts/lib.sh).
#
# The engine runs inside a network namespace the caller made (its "docker host"): its bridge,
# its iptables chains, its FORWARD policy and ip_forward are that namespace's, and the root
# namespace is left alone. It has its own data root, exec root, socket, pid file, cgroup parent
# and a bridge of its own (passed with --bridge, never docker0) on a /24 of 198.18.0.0/15. What
# an engine still changes outside its namespace (br_netfilter, /etc/docker/key.json, /run/docker,
# /run/containerd, cgroup directories, iptables tables should it ever reach the root namespace)
# is recorded before it starts and put back after it stops; lr_host_state lets a test check that.
#
#   lr_dockerd_start NS SUBNET   e.g. NS=lr-docker-host-123 SUBNET=198.18.240 (the bridge is .1)
#   lr_docker ARGS...            the docker CLI talking to that engine
#   lr_docker_busybox_image TAG  import a minimal image (busybox-static, `sleep` as its command)
#   lr_dockerd_stop              remove every container, stop the engine, put the host back
#
# Sets LR_DOCKER_HOST (unix://.../docker.sock, also exported as DOCKER_HOST so that linerate's
# container:NAME finds the engine), LR_DOCKERD_PID, LR_DOCKERD_DIR, LR_DOCKERD_BRIDGE.

LR_DOCKERD_PID=
LR_DOCKERD_DIR=
LR_DOCKERD_NS=
LR_DOCKERD_BRIDGE=
LR_DOCKER_HOST=
LR_DOCKER_CLI=

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
	# nsenter, not `ip netns exec`: that one remounts /sys, and dockerd then finds no cgroups
	nsenter --net="/run/netns/$ns" dockerd --data-root "$d/root" --exec-root "$d/exec" \
		-H "$LR_DOCKER_HOST" --pidfile "$d/dockerd.pid" --config-file "$d/daemon.json" \
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
	local d=$LR_DOCKERD_DIR pid i m ids f line before

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
	for f in /sys/fs/cgroup/*/"lr-dockerd-$$" /sys/fs/cgroup/"lr-dockerd-$$"; do
		[[ -d $f ]] && rmdir "$f" 2>/dev/null
	done
	lr_host_restore "$d/host.before"
	rm -rf "$d"
	LR_DOCKERD_DIR=
	LR_DOCKERD_PID=
}

# lr_host_restore FILE: undo what an engine changed since lr_host_state wrote FILE.
lr_host_restore()
{
	local before=$1 now line k v f t

	now=$(lr_host_state)
	[[ $now == "$(cat "$before")" ]] && return 0
	while read -r line; do
		case $line in
		"sysctl "*)
			line=${line#sysctl }
			k=${line%%=*}
			v=${line#*=}
			f=/proc/sys/${k//.//}
			[[ $(cat "$f" 2>/dev/null) == "$v" ]] || echo "$v" >"$f"
			;;
		esac
	done <"$before"
	# paths an engine made (none of them is ever ours to keep)
	for f in /etc/docker/key.json /etc/docker /run/docker /run/containerd /var/lib/docker /var/lib/containerd; do
		grep -qxF "path $f" "$before" || rm -rf "$f"
	done
	# iptables tables an engine added in the root namespace, and rules in those that were there
	while read -r _ _ f t; do
		grep -qxF "nft table $f $t" "$before" || nft delete table "$f" "$t" 2>/dev/null
	done < <(lr_host_state | grep '^nft table ')
	if [[ $(lr_host_state | grep '^iptables ') != "$(grep '^iptables ' "$before")" ]]; then
		grep '^iptables ' "$before" | sed 's/^iptables //' | iptables-restore
	fi
	if [[ $(lr_host_state | grep '^ip6tables ') != "$(grep '^ip6tables ' "$before")" ]]; then
		grep '^ip6tables ' "$before" | sed 's/^ip6tables //' | ip6tables-restore
	fi
	if grep -qx 'module br_netfilter absent' "$before" && [[ -e /sys/module/br_netfilter/initstate ]]; then
		modprobe -r br_netfilter 2>/dev/null
	fi
	return 0
}
