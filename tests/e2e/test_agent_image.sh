#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The agent from the linerate image, as real containers with exactly the DaemonSet's privileges,
# driven by a controller on the host: the proof that deploy/kubernetes's privileges are enough.
#
#   ns lr-agent_image-dhost-PID: a private dockerd (scripts/lib-docker.sh) whose containerd runs the
#   agents (its FORWARD DROP stays there, away from the test's bridge)
#   ns lr-agent_image-fabric-PID: bridge cni0 198.18.246.1/24 (like a CNI bridge, or the nodes'
#   switch), the controller (linerate run, linerate matrix)
#     |-- vn2 -- eth0 198.18.246.2  ns ...-n1-PID  "node 1" (hostNetwork) or "pod 1" (pod network)
#     |-- vn3 -- eth0 198.18.246.3  ns ...-n2-PID  "node 2" / "pod 2"
#     '-- vn4 -- eth0 198.18.246.4  ns ...-ctl-PID  a controller that sends and counts itself
#                                   (send --peer --rtt)
#   each of n1, n2 holds one agent container, started in that namespace (--with-ns network:...),
#   as kubelet starts a hostNetwork pod in the node's namespace or a pod in its CNI sandbox
#
# The image is built by scripts/image and imported into that engine (no registry). The container's
# privileges and launch come from the rendered manifests themselves, through
# `k8s_manifest.py docker-args` for deploy/kubernetes (hostNetwork) and overlays/pod-network:
# capabilities (drop ALL, add the set), /dev/net/tun, /sys/fs/bpf, the Localhost seccomp profile,
# no-new-privileges, a read-only root, the args; the token is a Secret-like volume (..data symlinks,
# mode 0400, read-only) at the path the args name.
#
# Debian's Docker 20.10 rejects CAP_BPF and CAP_PERFMON by name ("unknown capability"), so the
# containers run through that engine's containerd with ctr: the runtime Kubernetes drives through CRI.
#
# Checks, for each variant:
#   - the image: linerate:VERSION, entrypoint /usr/bin/linerate, `--version` of the image's binary
#     prints the project version
#   - each agent container runs with CapEff == CapPrm == CapBnd == exactly the DaemonSet's set,
#     NoNewPrivs 1, Seccomp 2 (a filter), one filter, the one runc built from the manifest's
#     profile (the container's OCI spec holds exactly its rules), its root mounted read-only; it
#     answers on the control port (the readiness probe) and serves /metrics on the metrics port
#     (the liveness probe)
#   - linerate run with [tx] agent = n1 and [rx] agent = n2: exit 0, two steps, rx == tx > 0, lost 0,
#     settled, in each step; agent 1 logged the test, agent 2 its receiver
#   - the same with [tx] engine = live (node 1's end of the veth, vn2, with GRO on, as
#     kubernetes.md asks of a pod's node): the engine is live in every step, rx == tx > 0, lost 0,
#     settled; its holding tap (lrlive*, which needs /dev/net/tun and NET_ADMIN) appeared in n1
#     while it ran
#   - send --prepare-peer inside agent 1's container (ctr task exec: the manifest's seccomp profile,
#     capabilities, read-only root and mounts) on pp0 <-> pp1, a veth with both ends in n1 (the
#     default profile has no setns): exit 0, GRO switched on at pp1 and put back; the guardian's
#     records go to the node's /run/linerate, the DaemonSet's hostPath (made here if missing, as
#     kubelet makes a DirectoryOrCreate)
#   - a round trip, send --peer n2 --rtt from ctl: the reflector of agent 1 (n2, XDP_TX) sends every
#     frame back: tx == forward.sent == forward.received == return.received == RTT_COUNT, both
#     directions lost 0, rtt_settled, peer.result.reflect.packets == RTT_COUNT
#   - the rendered Job's own args (linerate matrix --agents linerate-agent:7446 ..., its token path
#     replaced, 500 ms a cell), run in the fabric where that name resolves to both agents: exit 0,
#     both agents, 6 cells (both directions x 3 sizes) each exact, the table on stderr
#   - no agent task left after each variant; every container and image removed, the engine
#     stopped, the host as before
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=scripts/lib-docker.sh
. "$LR_REPO/scripts/lib-docker.sh"

NET=198.18.246
RTT_COUNT=10000
CTR_NS=lr-agent-image-$$
CTR=()
CONTAINERS=()

lr_init
lr_require_cmds dockerd ctr nsenter python3 kubectl ethtool
python3 -c 'import yaml' 2>/dev/null || lr_die "missing python3-yaml (scripts/deps installs it)"
MADE_ETC_NETNS=0
MADE_RUN_LINERATE=0
MOUNTED_BPFFS=0
if ! mountpoint -q /sys/fs/bpf; then
	mount -t bpf bpf /sys/fs/bpf || lr_die "cannot mount bpffs on /sys/fs/bpf"
	MOUNTED_BPFFS=1
fi
lr_netns_add DHOST dhost
lr_netns_add FAB fabric
lr_netns_add N1 n1
lr_netns_add N2 n2
lr_netns_add CTL ctl

# the agents' containers first, then the engine (lr_cleanup_first runs them in this order; the
# engine's data root, images included, goes with it)
stop_agents()
{
	local c
	local -

	set +e	# cleanup: every step is tried, whatever the one before did
	((${#CTR[@]})) || return 0
	for c in "${CONTAINERS[@]}"; do
		timeout 10 "${CTR[@]}" task kill -s KILL "$c" >/dev/null 2>&1
		# --force: a task the KILL has not ended yet is waited for, not refused
		timeout 10 "${CTR[@]}" task delete --force "$c" >/dev/null 2>&1
		timeout 10 "${CTR[@]}" container delete "$c" >/dev/null 2>&1
	done
	CONTAINERS=()
	return 0
}
# shellcheck disable=SC2317 # run by the exit trap
rm_hosts()
{
	rm -rf "/etc/netns/$FAB"
	((MADE_ETC_NETNS)) && rmdir /etc/netns 2>/dev/null
	((MOUNTED_BPFFS)) && umount /sys/fs/bpf 2>/dev/null
	((MADE_RUN_LINERATE)) && rmdir /run/linerate/peer-gro /run/linerate 2>/dev/null
	return 0
}
lr_cleanup_first stop_agents
lr_cleanup_first lr_dockerd_stop
BEFORE=$(lr_host_state)

# as a headless Service's name resolves in the cluster: to every ready agent (ip netns exec
# bind-mounts /etc/netns/FAB/hosts over /etc/hosts)
[[ -e /etc/netns/$FAB ]] && lr_die "/etc/netns/$FAB exists already"
[[ -d /etc/netns ]] || MADE_ETC_NETNS=1
lr_cleanup_first rm_hosts
mkdir -p "/etc/netns/$FAB"
# the DaemonSet's hostPath /run/linerate is DirectoryOrCreate: kubelet makes it, and so does this test
[[ -d /run/linerate ]] || { mkdir -m 0755 /run/linerate && MADE_RUN_LINERATE=1; }
printf '127.0.0.1 localhost\n%s linerate-agent\n%s linerate-agent\n' "$NET.2" "$NET.3" >"/etc/netns/$FAB/hosts"

lr_log "== private dockerd, the image"
lr_dockerd_start "$DHOST" 198.18.247 || lr_die "dockerd did not start"
ip -n "$FAB" link add cni0 type bridge
lr_addr "$FAB" cni0 "$NET.1/24"
i=2
for n in "$N1" "$N2" "$CTL"; do
	ip -n "$FAB" link add "vn$i" type veth peer name eth0 netns "$n"
	ip -n "$FAB" link set "vn$i" master cni0 up
	lr_addr "$n" eth0 "$NET.$i/24"
	i=$((i + 1))
done
# --prepare-peer's veth inside node 1: its peer in the same namespace
ip -n "$N1" link add pp0 type veth peer name pp1
lr_addr "$N1" pp0 198.18.248.1/30
ip -n "$N1" link set pp1 up
VERSION=$(sed -n 's/^project(linerate VERSION \([0-9.]*\).*/\1/p' "$LR_REPO/CMakeLists.txt")
RC=0
# The image is what ships: a sanitizer build (scripts/sanitize) stays the controller here, and the
# agents come from the plain build (scripts/image builds it if it is not there).
IMAGE_BUILD=$(dirname "$LINERATE")
if grep -aqE '__(asan_init|ubsan_handle_)' "$LINERATE"; then
	IMAGE_BUILD=$LR_REPO/build
	lr_log "$LINERATE is a sanitizer build: the image comes from $IMAGE_BUILD"
fi
IMAGE=$(DOCKER_HOST=$LR_DOCKER_HOST "$LR_REPO/scripts/image" --build-dir "$IMAGE_BUILD" 2>"$LR_TMP/image.err") || RC=$?
lr_show_file "$LR_TMP/image.err"
lr_check "scripts/image exit code" "$RC" == 0
lr_check "scripts/image tags linerate:VERSION" "$IMAGE" == "linerate:$VERSION"
lr_check "the image's entrypoint" "$(lr_docker image inspect -f '{{json .Config.Entrypoint}}' "$IMAGE")" == '["/usr/bin/linerate"]'
lr_check_cmd "the image's binary prints the version" bash -c \
	"'$LR_DOCKER_CLI' -H '$LR_DOCKER_HOST' run --rm --network none '$IMAGE' --version | grep -q '^linerate $VERSION '"
CTR=(ctr --address "$LR_CONTAINERD_SOCK" -n "$CTR_NS")
# the agents' cgroups (ctr puts a container in /NAMESPACE/ID): killed and removed with the engine
LR_DOCKERD_CGROUPS+=("$CTR_NS")
lr_docker save "$IMAGE" | "${CTR[@]}" images import - >/dev/null || lr_die "ctr images import failed"

# The token as a Secret volume holds it: a timestamped directory, ..data -> it, token -> ..data/token.
SECRET=$LR_TMP/secret
mkdir -p "$SECRET/..2026_01_01_00_00_00.000000000"
head -c 32 /dev/urandom | base64 >"$SECRET/..2026_01_01_00_00_00.000000000/token"
chmod 0400 "$SECRET/..2026_01_01_00_00_00.000000000/token"
ln -s ..2026_01_01_00_00_00.000000000 "$SECRET/..data"
ln -s ..data/token "$SECRET/token"
TOKEN=$LR_TMP/token
install -m 0600 "$SECRET/..data/token" "$TOKEN"

# capability bit numbers (linux/capability.h) of the names a manifest may add
declare -A CAPBIT=([CHOWN]=0 [DAC_OVERRIDE]=1 [FOWNER]=3 [KILL]=5 [SETGID]=6 [SETUID]=7 [NET_BIND_SERVICE]=10
	[NET_BROADCAST]=11 [NET_ADMIN]=12 [NET_RAW]=13 [IPC_LOCK]=14 [SYS_ADMIN]=21 [SYS_RESOURCE]=24
	[PERFMON]=38 [BPF]=39)
# what containerd grants unless told otherwise: dropped one by one for the manifest's "drop: ALL"
CTR_DEFAULT_CAPS=(CHOWN DAC_OVERRIDE FSETID FOWNER MKNOD NET_RAW SETGID SETUID SETFCAP SETPCAP NET_BIND_SERVICE
	SYS_CHROOT KILL AUDIT_WRITE)

# ctr_args VARIANT_DIR NETNS: the docker-args of the rendered manifests, as ctr run arguments, in
# CARGS (options), CIMAGE, CCMD (the process), WANT_CAPS (the mask the container must hold) and
# WANT_SECCOMP (the profile's path).
ctr_args()
{
	local dir=$1 ns=$2 a img='' c mask=0 tokpath='' drop_all=0 src dst opt i
	local -a lines adds=()

	WANT_SECCOMP=

	mapfile -t lines < <(python3 "$LR_E2E_DIR/k8s_manifest.py" docker-args "$dir")
	CARGS=(--with-ns "network:/run/netns/$ns")
	CCMD=(/usr/bin/linerate)
	for a in "${lines[@]}"; do
		if [[ -n $img ]]; then
			CCMD+=("$a")
			continue
		fi
		case $a in
		--network=host) ;;	# the node's namespace: --with-ns above
		--user=*) ;;		# ctr runs the image's user, root, as runAsUser 0 asks
		--cap-drop=ALL) drop_all=1 ;;
		--cap-add=*) adds+=("${a#--cap-add=}") ;;
		--device=*) CARGS+=(--device "${a#--device=}") ;;
		--volume=*)
			a=${a#--volume=}
			IFS=: read -r src dst opt <<<"$a"
			CARGS+=(--mount "type=bind,src=$src,dst=$dst,options=rbind:${opt:-rw}")
			;;
		--security-opt=seccomp=*)
			WANT_SECCOMP=${a#--security-opt=seccomp=}
			CARGS+=(--seccomp --seccomp-profile "$WANT_SECCOMP")
			;;
		--security-opt=no-new-privileges) ;;	# ctr sets no_new_privs always; checked below
		--read-only) CARGS+=(--read-only) ;;
		--env=*) CARGS+=(--env "${a#--env=}") ;;
		-*) lr_die "docker-args printed '$a', which this test cannot give ctr" ;;
		*) img=$a ;;
		esac
	done
	((drop_all)) || lr_die "the agent container does not drop ALL capabilities"
	for c in "${CTR_DEFAULT_CAPS[@]}"; do
		[[ " ${adds[*]} " == *" $c "* ]] || CARGS+=(--cap-drop "CAP_$c")
	done
	for c in "${adds[@]}"; do
		[[ -n ${CAPBIT[$c]:-} ]] || lr_die "unknown capability $c in the manifest"
		CARGS+=(--cap-add "CAP_$c")
		mask=$((mask | (1 << CAPBIT[$c])))
	done
	for ((i = 0; i < ${#CCMD[@]}; i++)); do
		[[ ${CCMD[$i]} == --token-file ]] && tokpath=${CCMD[$((i + 1))]}
	done
	[[ -n $tokpath ]] || lr_die "the agent's args name no --token-file"
	[[ -n $WANT_SECCOMP ]] || lr_die "the agent container names no seccomp profile"
	CARGS+=(--mount "type=bind,src=$SECRET,dst=$(dirname "$tokpath"),options=rbind:ro")
	[[ $img == "$IMAGE" ]] || lr_die "the manifests name image '$img', scripts/image made '$IMAGE'"
	CIMAGE=docker.io/library/$img
	WANT_CAPS=$(printf '%016x' "$mask")
}

# seccomp_of CONTAINER PROFILE: "same" when the container's OCI spec, which runc compiles into the
# one filter it installs, holds PROFILE's rules (its comments aside), else "different: WHY". A
# filter of another profile (containerd's default, say) would also show as "Seccomp: 2".
seccomp_of()
{
	# shellcheck disable=SC2016 # python's
	"${CTR[@]}" containers info "$1" | python3 -c '
import json, sys

def norm(v):
    """The rules as data: comments gone, empty and zero fields (omitted by either side) dropped."""
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items() if k != "comment" and x not in (None, [], {}, 0, "")}
    if isinstance(v, list):
        return sorted((norm(x) for x in v), key=lambda x: json.dumps(x, sort_keys=True))
    return v

spec = json.load(sys.stdin).get("Spec", {}).get("linux", {}).get("seccomp")
want = json.load(open(sys.argv[1]))
if not spec:
    print("different: the spec has no seccomp")
elif norm(spec) != norm(want):
    got = {k: v for k, v in norm(spec).items() if norm(want).get(k) != v}
    print("different:", json.dumps(got)[:300])
else:
    print("same")' "$2"
}

# ready ADDR PORT: something accepts TCP connections there (the readiness probe), within 10 s
ready()
{
	local i

	for ((i = 0; i < 100; i++)); do
		ip netns exec "$FAB" timeout 1 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# http_get ADDR PORT PATH: the answer to an HTTP/1.0 GET, from the fabric
http_get()
{
	# shellcheck disable=SC2016 # expanded by the inner shell
	ip netns exec "$FAB" timeout 5 bash -c 'exec 3<>"/dev/tcp/$1/$2"; printf "GET %s HTTP/1.0\r\n\r\n" "$3" >&3; cat <&3' \
		_ "$1" "$2" "$3"
}

variant()
{
	local name=$1 dir=$2 n i pid st r j=$LR_TMP/$1.json
	local -a ip=("$NET.2" "$NET.3")

	lr_log "== $name: agents from $dir"
	i=0
	for n in "$N1" "$N2"; do
		ctr_args "$dir" "$n"
		lr_log "ctr run ${CARGS[*]} $CIMAGE $name-$i ${CCMD[*]}"
		"${CTR[@]}" run -d --log-uri "file://$LR_TMP/$name-$i.log" "${CARGS[@]}" "$CIMAGE" "$name-$i" "${CCMD[@]}" \
			>/dev/null 2>"$LR_TMP/ctr.err" || { lr_show_file "$LR_TMP/ctr.err"; lr_die "ctr run $name-$i failed"; }
		CONTAINERS+=("$name-$i")
		i=$((i + 1))
	done
	for i in 0 1; do
		r=no
		ready "${ip[$i]}" 7446 && r=yes
		lr_check "$name agent $i answers on the control port (readiness probe)" "$r" == yes
		[[ $r == yes ]] || { lr_show_file "$LR_TMP/$name-$i.log"; "${CTR[@]}" task ls >&2; }
		pid=$("${CTR[@]}" task ls | awk -v c="$name-$i" '$1 == c { print $2 }')
		st=/proc/$pid/status
		lr_check "$name agent $i CapEff is the DaemonSet's set" "$(awk '/^CapEff/ { print $2 }' "$st")" == "$WANT_CAPS"
		lr_check "$name agent $i CapPrm" "$(awk '/^CapPrm/ { print $2 }' "$st")" == "$WANT_CAPS"
		lr_check "$name agent $i CapBnd" "$(awk '/^CapBnd/ { print $2 }' "$st")" == "$WANT_CAPS"
		lr_check "$name agent $i NoNewPrivs" "$(awk '/^NoNewPrivs/ { print $2 }' "$st")" == 1
		lr_check "$name agent $i Seccomp (2: a filter)" "$(awk '/^Seccomp:/ { print $2 }' "$st")" == 2
		lr_check "$name agent $i Seccomp_filters (runc's one)" "$(awk '/^Seccomp_filters:/ { print $2 }' "$st")" == 1
		lr_check "$name agent $i seccomp: the manifest's profile ($(basename "$WANT_SECCOMP"))" \
			"$(seccomp_of "$name-$i" "$WANT_SECCOMP")" == same
		lr_check "$name agent $i root read-only" \
			"$(awk '$5 == "/" { print ($6 ~ /(^|,)ro(,|$)/) ? "ro" : $6 }' "/proc/$pid/mountinfo")" == ro
		lr_check "$name agent $i serves /metrics (liveness probe): linerate_ lines" \
			"$(http_get "${ip[$i]}" 7447 /metrics | grep -c '^linerate_' || true)" ">" 0
	done
	# sender_limited = pass: a busy machine's sender may fall short of the paced rate; the verdict is
	# tested in test_throughput and test_configs, not here
	cat >"$LR_TMP/$name.ini" <<EOT
[test]
duration = 500ms
warmup = 0
repeat = 2
sender_limited = pass
[tx]
agent = ${ip[0]}
token_file = $TOKEN
interface = eth0
dst_ip = ${ip[1]}
rate = 10k
[rx]
agent = ${ip[1]}
token_file = $TOKEN
interface = eth0
EOT
	RC=0
	ip netns exec "$FAB" timeout -k 5 60 "$LINERATE" run "$LR_TMP/$name.ini" -q --json "$j" \
		>"$LR_TMP/$name.run.out" 2>"$LR_TMP/$name.run.err" || RC=$?
	lr_show_file "$LR_TMP/$name.run.err"
	lr_check "$name: run exit code" "$RC" == 0
	lr_jvalid "$j"
	lr_check "$name: steps" "$(jq '.steps | length' "$j")" == 2
	lr_check "$name: rx.packets == tx.packets > 0 in every step" \
		"$(jq '[.steps[] | select(.rx.packets != .tx.packets or .rx.packets == 0)] | length' "$j")" == 0
	lr_check "$name: lost 0, settled, in every step" \
		"$(jq '[.steps[] | select(.rx.lost != 0 or (.rx.tail_settled | not))] | length' "$j")" == 0
	lr_log "$name: steps $(jq -c '[.steps[] | {tx: .tx.packets, rx: .rx.packets, lost: .rx.lost}]' "$j")"
	lr_check_cmd "$name: agent 0 ran the sender on eth0" grep -q 'tx on eth0' "$LR_TMP/$name-0.log"
	lr_check_cmd "$name: agent 1 ran the receiver on eth0" grep -q 'rx on eth0' "$LR_TMP/$name-1.log"
	live "$name" "${ip[@]}"
	prepare "$name"
	rtt "$name" "${ip[1]}"
	job "$name" "$dir"
	stop_agents
	lr_check "$name: no agent task left" "$("${CTR[@]}" task ls -q | wc -l)" == 0
}

# live VARIANT ADDR1 ADDR2: linerate run with agent 1's sender on the live engine, to agent 2's
# receiver. The live engine sends with ndo_xdp_xmit, which a veth takes only while its peer runs
# XDP or GRO: vn2 gets GRO, as a pod's node must give its end of the veth (kubernetes.md).
live()
{
	local name=$1-live j=$LR_TMP/$1-live.json rc=0 pid

	ip netns exec "$FAB" ethtool -K vn2 gro on >/dev/null || lr_die "ethtool -K vn2 gro on failed"
	sed 's/^rate = 10k$/&\nengine = live/' "$LR_TMP/$1.ini" >"$LR_TMP/$name.ini"
	# the holding tap exists from the sender's prepare to its end: seen in n1 (the container's
	# network namespace) while the run lasts
	# shellcheck disable=SC2016 # expanded by the inner shell
	lr_spawn "$name.tap" timeout 30 bash -c 'until ip -n "$1" -o link show | grep -q ": lrlive[0-9]*[:@]"; do
		sleep 0.02; done; echo seen' _ "$N1"
	pid=$LR_LAST_PID
	ip netns exec "$FAB" timeout -k 5 60 "$LINERATE" run "$LR_TMP/$name.ini" -q --json "$j" \
		>"$LR_TMP/$name.run.out" 2>"$LR_TMP/$name.run.err" || rc=$?
	kill -TERM "$pid" 2>/dev/null || true	# gone already once it saw the tap
	lr_wait_pid "$pid" 5 || true
	ip netns exec "$FAB" ethtool -K vn2 gro off >/dev/null
	lr_show_file "$LR_TMP/$name.run.err"
	lr_check "$name: run exit code" "$rc" == 0
	lr_jvalid "$j"
	lr_check "$name: the sender's engine" "$(jq -r .engine "$j")" == live
	lr_check "$name: steps" "$(jq '.steps | length' "$j")" == 2
	lr_check "$name: rx.packets == tx.packets > 0 in every step" \
		"$(jq '[.steps[] | select(.rx.packets != .tx.packets or .rx.packets == 0)] | length' "$j")" == 0
	lr_check "$name: lost 0, settled, in every step" \
		"$(jq '[.steps[] | select(.rx.lost != 0 or (.rx.tail_settled | not))] | length' "$j")" == 0
	lr_log "$name: steps $(jq -c '[.steps[] | {tx: .tx.packets, rx: .rx.packets, lost: .rx.lost}]' "$j")"
	lr_check "$name: the live engine's tap (/dev/net/tun) appeared in n1" "$(cat "$LR_TMP/$name.tap.out")" == seen
}

# prepare VARIANT: send --prepare-peer run inside agent 1's container, as the agent's own sender
# would run it: the guardian (setsid, mkdir, flock, ftruncate, pwrite64) under the manifest's
# seccomp profile, its records in the hostPath /run/linerate (the root is read-only)
prepare()
{
	local name=$1-prepare rc=0 pid

	lr_check "$name: pp1's GRO off before" "$(ip netns exec "$N1" ethtool -k pp1 | awk '$1 == "generic-receive-offload:" { print $2 }')" == off
	timeout -k 5 60 "${CTR[@]}" task exec --exec-id "$name" "$1-0" /usr/bin/linerate send -i pp0 --dst-ip 198.18.248.2 \
		--dst-mac 02:00:00:00:00:02 --count 1000 --rate 10k --engine live --prepare-peer -q --json - \
		>"$LR_TMP/$name.json" 2>"$LR_TMP/$name.err" || rc=$?
	lr_show_file "$LR_TMP/$name.err"
	lr_check "$name: exit code" "$rc" == 0
	lr_check "$name: GRO switched on at pp1 and put back" \
		"$(jq -c '.prepare_peer | [.action, .device, .restored]' "$LR_TMP/$name.json" 2>/dev/null)" == '["switched_on","pp1",true]'
	lr_check "$name: pp1's GRO off after" "$(ip netns exec "$N1" ethtool -k pp1 | awk '$1 == "generic-receive-offload:" { print $2 }')" == off
	# (ctr, unlike kubelet's CRI, gives a container a tmpfs on /run: the records would have a place
	# without the hostPath, but die with the container)
	pid=$("${CTR[@]}" task ls | awk -v c="$1-0" '$1 == c { print $2 }')
	lr_check "$name: the container's /run/linerate is the node's (the DaemonSet's hostPath)" \
		"$(stat -L -c %d:%i "/proc/$pid/root/run/linerate" 2>/dev/null)" == "$(stat -c %d:%i /run/linerate)"
}

# rtt VARIANT ADDR: send --peer ADDR --rtt from ctl: agent 2's reflector sends every frame back
rtt()
{
	local name=$1-rtt r=$LR_TMP/$1-rtt.json rc=0

	ip netns exec "$CTL" timeout -k 5 60 "$LINERATE" send -i eth0 --dst-ip "$2" --count "$RTT_COUNT" --rate 10k \
		--rtt --peer "$2" --token-file "$TOKEN" --json "$r" >"$LR_TMP/$name.out" 2>"$LR_TMP/$name.err" || rc=$?
	lr_show_file "$LR_TMP/$name.err"
	lr_check "$name: exit code" "$rc" == 0
	lr_jvalid "$r"
	lr_check "$name: tx.packets" "$(lr_jget "$r" .tx.packets)" == "$RTT_COUNT"
	lr_check "$name: forward.sent" "$(lr_jget "$r" .forward.sent)" == "$RTT_COUNT"
	lr_check "$name: forward.received (reflected)" "$(lr_jget "$r" .forward.received)" == "$RTT_COUNT"
	lr_check "$name: forward.lost" "$(lr_jget "$r" .forward.lost)" == 0
	lr_check "$name: return.received" "$(lr_jget "$r" .return.received)" == "$RTT_COUNT"
	lr_check "$name: return.lost" "$(lr_jget "$r" .return.lost)" == 0
	lr_check "$name: rtt_settled" "$(jq -r .rtt_settled "$r")" == true
	lr_check "$name: peer.result.command" "$(lr_jget "$r" .peer.result.command)" == reflect
	lr_check "$name: peer.result.reflect.packets" "$(lr_jget "$r" .peer.result.reflect.packets)" == "$RTT_COUNT"
	lr_check_cmd "$name: agent 1 ran the reflector on eth0" grep -q 'reflect on eth0' "$LR_TMP/$1-1.log"
}

# job VARIANT DIR: the rendered Job's own args (its token path replaced by this test's), from the
# fabric, where /etc/netns/FAB/hosts makes the Service's name resolve to both agents
job()
{
	local name=$1 dir=$2 j=$LR_TMP/$1.matrix.json a prev='' rc=0
	local -a args=()

	while read -r a; do
		[[ $prev == --token-file ]] && a=$TOKEN
		[[ $prev == --duration ]] && a=500ms	# the Job's 2 s a cell, shortened: the shape is the point
		args+=("$a")
		prev=$a
	done < <(python3 "$LR_E2E_DIR/k8s_manifest.py" render "$dir" |
		jq -r '.[] | select(.kind == "Job") | .spec.template.spec.containers[0].args[]')
	lr_check "$name: the Job runs linerate matrix" "${args[0]:-none}" == matrix
	lr_log "$name: the Job: linerate ${args[*]}"
	ip netns exec "$FAB" timeout -k 5 120 "$LINERATE" "${args[@]}" >"$j" 2>"$LR_TMP/$name.matrix.err" || rc=$?
	lr_show_file "$LR_TMP/$name.matrix.err"
	lr_check "$name: the Job's matrix exit code" "$rc" == 0
	lr_jvalid "$j"
	lr_check "$name: the Service's name stood for both agents" \
		"$(jq -r '[.agents[].agent] | join(" ")' "$j")" == "$NET.2:7446 $NET.3:7446"
	lr_check "$name: cells: 2 directions x 3 sizes" "$(jq '.cells | length' "$j")" == 6
	lr_check "$name: every cell ran: rx == tx > 0, lost 0, settled" \
		"$(jq '[.cells[] | select(.error != null or .rx.packets != .tx.packets or .rx.packets == 0 or .rx.lost != 0 or .rx.tail_settled != true)] | length' "$j")" == 0
	lr_check_cmd "$name: the table went to the log (stderr)" grep -q '198.18.246.2:7446 -> 198.18.246.3:7446' "$LR_TMP/$name.matrix.err"
}

variant host-network "$LR_REPO/deploy/kubernetes"
variant pod-network "$LR_REPO/deploy/kubernetes/overlays/pod-network"

lr_log "== the engine stopped, the host as before"
stop_agents
lr_dockerd_stop
lr_check "host state (sysctls, iptables, nft tables, br_netfilter, docker paths) as before" \
	"$(diff <(echo "$BEFORE") <(lr_host_state) | wc -l)" == 0
lr_finish
