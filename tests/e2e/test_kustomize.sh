#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Kubernetes manifests: deploy/kubernetes (the default variant) and every overlay under
# deploy/kubernetes/overlays render with `kubectl kustomize`, and what they render agrees with
# linerate's own options, the project's version and the seccomp profile in the repository.
#
#   (no topology and no cluster: kubectl kustomize and tests/e2e/k8s_manifest.py only)
#
# Checks (tests/e2e/k8s_manifest.py check, one line each, for every variant):
#   - exactly one DaemonSet; hostNetwork true in the default (with ClusterFirstWithHostNet,
#     --allow-physical and --allow globs), false or absent in pod-network (no --allow-physical)
#   - the agent: drop ALL, add exactly NET_ADMIN NET_RAW BPF PERFMON IPC_LOCK; not privileged,
#     no privilege escalation, read-only root; /dev/net/tun (CharDevice) and /sys/fs/bpf from the host,
#     /run/linerate from the host (DirectoryOrCreate, writable: prepare_peer's records)
#   - its token from a Secret that exists in the render, with that key, mode 0600 or stricter
#   - every flag of the DaemonSet's and the Job's args is an option of `linerate agent --help` /
#     `linerate matrix --help`; the container ports, the readiness probe (TCP, the --listen
#     port), the liveness probe and the prometheus.io annotations agree with --listen/--metrics
#   - the Service is headless, selects the agents, and its control/metrics ports are those
#   - the Job's --agents is the Service's DNS name and the --listen port; its token is the same Secret
#   - every image is linerate:<VERSION of CMakeLists.txt>; the namespace carries the privileged
#     Pod Security labels (enforce, audit, warn)
#   - the Localhost seccomp profile is in deploy/kubernetes/seccomp, parses, defaults to
#     SCMP_ACT_ERRNO, allows bpf and what prepare_peer's guardian calls (setsid, mkdir, flock,
#     ftruncate, pwrite64, ...), and allows setns/unshare/mount only with CAP_SYS_ADMIN
# Then:
#   - components/netns and components/pairs on the default: SYS_ADMIN added and nothing else,
#     /run/netns mounted, --pairs read from the ConfigMap in the render
#   - docker-args of both variants: the privileges, the profile's absolute path, the image, the args
#   - the checks catch a broken manifest: each mutation of a copy makes the check it names fail
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

lr_init
# scripts/deps installs kubectl: missing, it fails the test as any tool would
lr_require_cmds kubectl python3 cp cmp sed grep
python3 -c 'import yaml' 2>/dev/null || lr_die "python3 cannot import yaml (install python3-yaml)"
K8S=$LR_REPO/deploy/kubernetes
PY=(python3 "$LR_E2E_DIR/k8s_manifest.py")
VERSION=$(sed -nE 's/^project\(linerate VERSION ([0-9.]+).*/\1/p' "$LR_REPO/CMakeLists.txt")
lr_log "kubectl: $(kubectl version --client 2>/dev/null | tr '\n' ' ')"

# run_check NAME DIR [check options...]: each line k8s_manifest.py prints becomes a check here
run_check()
{
	local name=$1 dir=$2 rc=0 st what got

	shift 2
	"${PY[@]}" check "$dir" --linerate "$LINERATE" "$@" >"$LR_TMP/$name.check" 2>"$LR_TMP/$name.err" || rc=$?
	while IFS=$'\t' read -r st what got; do
		case $st in
		PASS) lr_pass "$name: $what" ;;
		FAIL) lr_fail "$name: $what" "$got" ;;
		esac
	done <"$LR_TMP/$name.check"
	lr_check "$name: renders and is checked (not exit 2: $(head -c 300 "$LR_TMP/$name.err"))" "$rc" "<=" 1
	lr_check "$name: checks made" "$(grep -c '' "$LR_TMP/$name.check")" ">=" 70
}

run_check default "$K8S" --host-network yes
n=0
for d in "$K8S"/overlays/*/; do
	d=${d%/}
	name=$(basename "$d")
	case $name in
	pod-network) hn=no ;;
	*) hn=any ;;
	esac
	run_check "$name" "$d" --host-network "$hn"
	n=$((n + 1))
done
lr_check "overlays under deploy/kubernetes/overlays" "$n" ">=" 1

# --- the optional components, on the default variant, from an overlay outside the tree
# (kustomize takes only relative paths)
COMP=$LR_TMP/components
mkdir -p "$COMP"
rel=$(realpath --relative-to="$COMP" "$K8S")
cat >"$COMP/kustomization.yaml" <<EOF
resources:
  - $rel/base
components:
  - $rel/components/netns
  - $rel/components/pairs
EOF
run_check components "$COMP" --host-network yes --extra-cap SYS_ADMIN
"${PY[@]}" render "$COMP" >"$LR_TMP/components.json" || lr_die "k8s_manifest.py render $COMP failed"
jds='.[] | select(.kind == "DaemonSet") | .spec.template.spec'
lr_check "components: /run/netns from the host, HostToContainer" \
	"$(jq -r "$jds"' | [.containers[0].volumeMounts[] | select(.mountPath == "/run/netns") | .mountPropagation] | join(",")' \
		"$LR_TMP/components.json")" == HostToContainer
lr_check "components: the agent's AppArmor profile (mount for --netns)" \
	"$(jq -r "$jds"'.containers[0].securityContext.appArmorProfile.type' "$LR_TMP/components.json")" == Unconfined
lr_check "components: the Job reads --pairs" \
	"$(jq -r '.[] | select(.kind == "Job") | .spec.template.spec.containers[0].args | index("--pairs") != null' \
		"$LR_TMP/components.json")" == true
"${PY[@]}" render "$K8S" >"$LR_TMP/default.json" || lr_die "k8s_manifest.py render $K8S failed"
lr_check "default: the Job has no --pairs without components/pairs (every pair)" \
	"$(jq -r '.[] | select(.kind == "Job") | .spec.template.spec.containers[0].args | index("--pairs") != null' \
		"$LR_TMP/default.json")" == false

# --- docker-args: what a `docker run` of the agent gets
for v in default pod-network; do
	dir=$K8S
	[[ $v == default ]] || dir=$K8S/overlays/$v
	"${PY[@]}" docker-args "$dir" >"$LR_TMP/$v.docker" 2>"$LR_TMP/$v.docker.err" ||
		lr_fail "$v: docker-args" "$(head -c 300 "$LR_TMP/$v.docker.err")"
	for want in --cap-drop=ALL --cap-add=NET_ADMIN --cap-add=NET_RAW --cap-add=BPF --cap-add=PERFMON \
		--cap-add=IPC_LOCK --device=/dev/net/tun --volume=/sys/fs/bpf:/sys/fs/bpf:ro --volume=/run/linerate:/run/linerate \
		--security-opt=no-new-privileges --read-only "linerate:$VERSION" agent; do
		lr_check_cmd "$v: docker-args has the line $want" grep -qxF -- "$want" "$LR_TMP/$v.docker"
	done
	lr_check "$v: docker-args: capabilities added" "$(grep -c '^--cap-add=' "$LR_TMP/$v.docker")" == 5
	prof=$(sed -n 's/^--security-opt=seccomp=//p' "$LR_TMP/$v.docker")
	lr_check "$v: docker-args: the seccomp profile is the repository's, by absolute path" \
		"$prof" == "$K8S/seccomp/agent.json"
	lr_check "$v: docker-args: the image, then the subcommand" \
		"$(grep -v '^-' "$LR_TMP/$v.docker" | head -n 2 | tr '\n' ' ')" == "linerate:$VERSION agent "
	lr_check "$v: docker-args: the token path of the manifest" \
		"$(grep -A1 -x -- --token-file "$LR_TMP/$v.docker" | tail -n 1)" == /etc/linerate/secret/token
done
lr_check_cmd "default: docker-args: --network=host" grep -qx -- --network=host "$LR_TMP/default.docker"
lr_check "pod-network: docker-args: no --network=host" "$(grep -c -- '--network=host' "$LR_TMP/pod-network.docker" || true)" == 0
lr_check "default: docker-args: the --allow globs, expanded" \
	"$(grep -A1 -x -- --allow "$LR_TMP/default.docker" | tail -n 1)" == 'eth*,ens*,enp*,eno*'

# --- each check can fail: break a copy one way at a time, the check named must fail
MUT=$LR_TMP/mut
# mutate DESC FILE SED WANT [VARIANT]: FILE (under deploy/kubernetes) edited by SED in a fresh copy;
# checking VARIANT (default, or an overlay's name) must print a FAIL line whose text holds WANT
mutate()
{
	local desc=$1 file=$2 expr=$3 want=$4 variant=${5:-default} dir hn=yes

	rm -rf "$MUT"
	cp -r "$K8S" "$MUT"
	# a second DaemonSet, for a mutation to list
	sed 's/^  name: linerate-agent$/  name: linerate-agent-2/' "$MUT/base/agent.yaml" >"$MUT/base/agent2.yaml"
	sed -i -e "$expr" "$MUT/$file"
	if cmp -s "$K8S/$file" "$MUT/$file"; then
		lr_fail "mutation '$desc': the edit applies" "$file unchanged by $expr"
		return
	fi
	dir=$MUT
	if [[ $variant != default ]]; then
		dir=$MUT/overlays/$variant
		hn=no
	fi
	"${PY[@]}" check "$dir" --linerate "$LINERATE" --host-network "$hn" --seccomp-dir "$MUT/seccomp" \
		>"$LR_TMP/mut.check" 2>&1 || true
	if grep -q "^FAIL	.*$want" "$LR_TMP/$variant.check"; then
		lr_fail "mutation '$desc' fails the check '$want'" "that check fails unmutated already: proves nothing"
	elif grep -q "^FAIL	.*$want" "$LR_TMP/mut.check"; then
		lr_pass "mutation '$desc' fails the check '$want'"
	else
		lr_fail "mutation '$desc' fails the check '$want'" "$(grep '^FAIL' "$LR_TMP/mut.check" | head -n 3 | tr '\n\t' '  ')"
	fi
}

A=base/agent.yaml
mutate "no hostNetwork" $A 's/hostNetwork: true/hostNetwork: false/' "hostNetwork"
mutate "hostNetwork in pod-network" overlays/pod-network/kustomization.yaml '/path: .*hostNetwork/{n;s/false/true/}' \
	"hostNetwork" pod-network
mutate "ClusterFirst on the host network" $A 's/dnsPolicy: ClusterFirstWithHostNet/dnsPolicy: ClusterFirst/' "dnsPolicy"
mutate "no --allow-physical" $A '/- --allow-physical/d' "--allow-physical with hostNetwork"
mutate "a capability less" $A '/- IPC_LOCK/d' "capabilities added"
mutate "SYS_ADMIN added" $A 's/^\( *\)- IPC_LOCK/&\n\1- SYS_ADMIN/' "capabilities added"
mutate "drop NET_RAW, not ALL" $A '/drop:/{n;s/- ALL/- NET_RAW/}' "capabilities dropped"
mutate "privileged" $A 's/privileged: false/privileged: true/' "agent: privileged"
mutate "privilege escalation" $A 's/allowPrivilegeEscalation: false/allowPrivilegeEscalation: true/' \
	"allowPrivilegeEscalation"
mutate "writable root" $A 's/readOnlyRootFilesystem: true/readOnlyRootFilesystem: false/' "readOnlyRootFilesystem"
mutate "no /dev/net/tun" $A 's#mountPath: /dev/net/tun#mountPath: /dev/net/tap#' "/dev/net/tun mounted"
mutate "tun not a CharDevice" $A 's/type: CharDevice/type: File/' "/dev/net/tun mounted"
mutate "no bpffs" $A 's#path: /sys/fs/bpf#path: /sys/fs/bpf2#' "/sys/fs/bpf mounted"
mutate "no /run/linerate" $A 's#mountPath: /run/linerate#mountPath: /run/linerate2#' "/run/linerate mounted"
mutate "/run/linerate read-only" $A 's#^\( *\)mountPath: /run/linerate$#&\n\1readOnly: true#' "/run/linerate mounted"
mutate "/run/linerate a Directory that must exist" $A '/path: \/run\/linerate$/{n;s/DirectoryOrCreate/Directory/}' \
	"/run/linerate mounted"
mutate "a Secret not in the render" $A 's/secretName: linerate-token/secretName: linerate-tokens/' \
	"exists in the render"
mutate "a token others may read" $A 's/defaultMode: 0400/defaultMode: 0440/' "the token's mode"
mutate "a token path off the Secret" $A 's#- /etc/linerate/secret/token#- /etc/linerate/token#' \
	"on a Secret volume"
mutate "an unknown agent flag" $A 's/- --allow-physical/- --allow-physicals/' "every flag is an option of 'linerate agent'"
mutate "another --listen port" $A 's/- 0.0.0.0:7446/- 0.0.0.0:7450/' "the --listen port"
mutate "another metrics containerPort" $A 's/containerPort: 7447/containerPort: 7448/' "container ports"
mutate "readiness on the metrics port" $A '/readinessProbe:/,/port:/s/port: control/port: metrics/' \
	"readiness probe port"
mutate "liveness on another path" $A '/httpGet:/{n;s#path: /metrics#path: /healthz#}' "liveness probe GET path"
mutate "a scrape annotation on the wrong port" $A 's/prometheus.io\/port: "7447"/prometheus.io\/port: "7446"/' \
	"prometheus.io/port"
mutate "no seccomp profile of ours" $A 's#localhostProfile: linerate/agent.json#localhostProfile: linerate/nope.json#' \
	"in the repository"
mutate "a second DaemonSet" base/kustomization.yaml 's/^  - agent.yaml/&\n  - agent2.yaml/' \
	"DaemonSets in the render"
mutate "a Service with a cluster IP" base/service.yaml '/clusterIP: None/d' "headless"
mutate "another Service metrics port" base/service.yaml 's/port: 7447/port: 7449/' "Service: port metrics"
mutate "publishNotReadyAddresses" base/service.yaml 's/publishNotReadyAddresses: false/publishNotReadyAddresses: true/' \
	"publishNotReadyAddresses"
mutate "--agents not the Service" base/matrix.yaml 's/- linerate-agent:7446/- linerate-agents:7446/' \
	"--agents names the Service"
mutate "--agents on another port" base/matrix.yaml 's/- linerate-agent:7446/- linerate-agent:7447/' \
	"--agents port"
mutate "an unknown matrix flag" base/matrix.yaml 's/- --sizes/- --sizez/' "every flag is an option of 'linerate matrix'"
mutate "a capability for the Job" base/matrix.yaml 's/^\( *\)drop:/\1add:\n\1  - NET_RAW\n&/' "Job: capabilities added"
mutate "enforce baseline" base/namespace.yaml 's#enforce: privileged#enforce: baseline#' \
	"pod-security.kubernetes.io/enforce"
mutate "no warn label" base/namespace.yaml '/warn: privileged/d' "pod-security.kubernetes.io/warn"
mutate "another image tag" base/kustomization.yaml 's/newTag: .*/newTag: 0.0.0-not/' "image (linerate:<project version>)"
mutate "seccomp allows by default" seccomp/agent.json 's/"defaultAction": "SCMP_ACT_ERRNO"/"defaultAction": "SCMP_ACT_ALLOW"/' \
	"defaultAction"
mutate "seccomp without bpf" seccomp/agent.json '/^ *"bpf",$/d' "allows bpf"
mutate "seccomp without flock" seccomp/agent.json '/^ *"flock",$/d' "allows flock (prepare_peer's guardian)"
mutate "seccomp without setsid" seccomp/agent.json 's/^\( *\)"setsid"$/\1"setpgid"/' "allows setsid (prepare_peer's guardian)"
mutate "seccomp allows setns to anyone" seccomp/agent.json 's/^\( *\)"bpf",$/&\n\1"setns",/' "no setns without SYS_ADMIN"
mutate "seccomp with a Docker-only per-capability rule" seccomp/agent.json 's/^\( *\)"action": "SCMP_ACT_ALLOW",$/&\n\1"includes": {"caps": ["CAP_SYS_ADMIN"]},/' "plain OCI format"
mutate "seccomp not JSON" seccomp/agent.json '1s/^{/{,/' "parses as JSON"
lr_finish
