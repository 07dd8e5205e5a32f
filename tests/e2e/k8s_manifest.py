#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Render linerate's Kubernetes manifests, check them, and turn the agent into `docker run` arguments.

  k8s_manifest.py render DIR
      `kubectl kustomize DIR`, every document parsed, printed as one JSON array.

  k8s_manifest.py check DIR [--host-network yes|no|any] [--extra-cap CAP]... [--linerate BIN]
                            [--seccomp-dir DIR]
      The assertions of tests/e2e/test_kustomize.sh on the render of DIR, one line each:
          PASS<TAB>what
          FAIL<TAB>what<TAB>what was found instead
      Exit 0 when all pass, 1 when one fails, 2 when DIR does not render or an argument is wrong.
      Capabilities must be exactly NET_ADMIN NET_RAW BPF PERFMON IPC_LOCK plus each --extra-cap.
      Options are taken from `BIN agent --help` and `BIN matrix --help` (BIN: --linerate, else
      $LINERATE, else build/linerate); the version from CMakeLists.txt; a Localhost seccomp profile
      "linerate/NAME" is looked up as NAME in --seccomp-dir (default deploy/kubernetes/seccomp).

  k8s_manifest.py docker-args DIR
      The `docker run` arguments that reproduce the DaemonSet's agent container: its privileges,
      its host mounts and its launch. Stable output, ONE ARGUMENT PER LINE, nothing quoted:
          --network=host                      when hostNetwork is true
          --user=UID[:GID]                    when runAsUser (runAsGroup) is set
          --privileged                        when privileged is true
          --cap-drop=CAP                      each capability dropped (ALL)
          --cap-add=CAP                       each capability added
          --device=PATH                       each hostPath CharDevice/BlockDevice (PATH:CTRPATH if they differ)
          --volume=HOSTPATH:MOUNTPATH[:ro]    each other hostPath mount (",rslave" for HostToContainer)
          --security-opt=seccomp=ABSPATH      a Localhost profile: the repository's copy, absolute
          --security-opt=seccomp=unconfined   an Unconfined one (RuntimeDefault: nothing)
          --security-opt=apparmor=unconfined  an Unconfined appArmorProfile
          --security-opt=no-new-privileges    when allowPrivilegeEscalation is false
          --read-only                         when readOnlyRootFilesystem is true
          --env=NAME=VALUE                    each env entry with a literal value
          IMAGE                               the first line not starting with "-"
          ARG...                              the container's args, $(NAME) expanded as kubelet does
      Secret, ConfigMap and other volumes are not printed: give them yourself (the token at the
      --token-file path the args name), with your own options (-d, --name) BEFORE these lines:
          mapfile -t a < <(python3 tests/e2e/k8s_manifest.py docker-args deploy/kubernetes/overlays/pod-network)
          docker run -d --name agent -v "$PWD/token:/etc/linerate/secret/token:ro" "${a[@]}"
      Docker Engine 20.10 (Debian 12's docker.io) refuses --cap-add=BPF and --cap-add=PERFMON
      ("unknown capability", moby/moby#42601); later engines accept them.
"""

import json
import os
import re
import subprocess
import sys

try:
    import yaml
except ImportError:
    sys.exit("k8s_manifest.py: needs PyYAML (Debian: apt-get install python3-yaml)")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SECCOMP_DIR = os.path.join(REPO, "deploy", "kubernetes", "seccomp")
# what prepare_peer's guardian calls beyond a sender (setns aside: it needs SYS_ADMIN, checked apart)
GUARDIAN_CALLS = ("setsid", "mkdir", "mkdirat", "flock", "ftruncate", "pwrite64", "pread64", "unlink",
                  "socketpair", "sendto", "wait4", "close_range", "dup2", "getppid")
CAPS = ["NET_ADMIN", "NET_RAW", "BPF", "PERFMON", "IPC_LOCK"]
PSA = ("enforce", "audit", "warn")


class Usage(Exception):
    pass


def render(path):
    """Every document `kubectl kustomize PATH` prints."""
    try:
        p = subprocess.run(["kubectl", "kustomize", path], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise Usage("kubectl kustomize %s: %s" % (path, e))
    if p.returncode != 0:
        raise Usage("kubectl kustomize %s failed: %s" % (path, p.stderr.strip()[-600:]))
    return [d for d in yaml.safe_load_all(p.stdout) if d]


def of_kind(docs, kind):
    return [d for d in docs if d.get("kind") == kind]


def name_of(d):
    return d.get("metadata", {}).get("name", "")


def ns_of(d):
    return d.get("metadata", {}).get("namespace", "")


def expand(s, env):
    """$(NAME) from env, $$ as $: what kubelet does to command and args."""
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)",
                  lambda m: "$" if m.group(0) == "$$" else env.get(m.group(1), m.group(0)), s)


def literal_env(c):
    return {e["name"]: str(e["value"]) for e in c.get("env") or [] if "value" in e}


def container_args(c):
    env = literal_env(c)
    return [expand(str(a), env) for a in (c.get("command") or []) + (c.get("args") or [])]


def help_options(binary, cmd):
    """{long name: takes a value} and {short letter: long name} from `BIN CMD --help`."""
    try:
        p = subprocess.run([binary, cmd, "--help"], capture_output=True, text=True, timeout=30)
        out = p.stdout if p.returncode == 0 else ""
    except OSError:
        out = ""
    longs, shorts = {}, {}
    for line in out.splitlines():
        # "  -a, --name METAVAR   help" or "      --name   help": metavars are upper case, and a
        # long one may leave a single space before the help
        m = re.match(r"^  (?:-([A-Za-z]), |    )--([a-z][a-z0-9-]*)(?: ([A-Z]\S*))?(?:\s+|$)", line)
        if m:
            longs[m.group(2)] = m.group(3) is not None
            if m.group(1):
                shorts[m.group(1)] = m.group(2)
    return longs, shorts


def parse_args(args, longs, shorts):
    """(options {name: [values]}, unknown flags, stray words) of args after the subcommand."""
    opts, unknown, stray = {}, [], []
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a.startswith("--"):
            name, eq, val = a[2:].partition("=")
        elif a.startswith("-") and len(a) > 1:
            name, eq, val = shorts.get(a[1], "?" + a), "", a[2:]
            eq = "=" if val else ""
        else:
            stray.append(a)
            continue
        if name not in longs:
            unknown.append(a)
            # a guess, so that one unknown flag is one failure and not a cascade: a value follows
            if not eq and i < len(args) and (args[i] == "-" or not args[i].startswith("-")):
                val = args[i]
                i += 1
            opts.setdefault(name, []).append(val)
            continue
        if longs[name] and not eq:
            val = args[i] if i < len(args) else None
            i += 1
        opts.setdefault(name, []).append(val)
    return opts, unknown, stray


def port_of(spec):
    """The port of ADDR[:PORT], [V6]:PORT or V6 alone (7446 when none is given)."""
    if spec is None:
        return None
    m = re.match(r"^\[.*\]:(\d+)$", spec) or re.match(r"^[^:\[\]]*:(\d+)$", spec)
    if m:
        return int(m.group(1))
    return 7446 if ":" not in spec or spec.count(":") > 1 else None


def project_version():
    with open(os.path.join(REPO, "CMakeLists.txt")) as f:
        m = re.search(r"project\s*\(\s*linerate\s+VERSION\s+([0-9][0-9.]*)", f.read())
    return m.group(1) if m else None


def pod_spec(d):
    """The pod template's spec of a DaemonSet or a Job."""
    return d.get("spec", {}).get("template", {}).get("spec", {})


def the_container(spec, name):
    cs = spec.get("containers") or []
    for c in cs:
        if c.get("name") == name:
            return c
    return cs[0] if cs else {}


def resolve_port(c, port):
    """A probe's or a targetPort's port (a number, or a container port's name) as a number."""
    if isinstance(port, int) or (isinstance(port, str) and port.isdigit()):
        return int(port)
    for p in c.get("ports") or []:
        if p.get("name") == port:
            return p.get("containerPort")
    return None


def mount_for(c, spec, path):
    """(volume, path inside it) of the mount that holds PATH in container c."""
    best = None
    for m in c.get("volumeMounts") or []:
        mp = m.get("mountPath", "").rstrip("/")
        if path == mp or path.startswith(mp + "/"):
            if best is None or len(mp) > len(best[0]):
                best = (mp, m)
    if not best:
        return None, None
    mp, m = best
    vols = {v.get("name"): v for v in spec.get("volumes") or []}
    rel = path[len(mp):].lstrip("/")
    if m.get("subPath"):
        rel = m["subPath"] + ("/" + rel if rel else "")
    return vols.get(m.get("name")), rel


def projected_key(src, rel):
    """The key of a Secret or ConfigMap volume that ends up at REL, honouring items."""
    items = src.get("items")
    if not items:
        return rel
    for it in items:
        if it.get("path") == rel:
            return it.get("key")
    return None


def host_mount(c, spec, path):
    """The hostPath volume mounted at PATH, with its mount, or (None, None)."""
    vols = {v.get("name"): v for v in spec.get("volumes") or []}
    for m in c.get("volumeMounts") or []:
        if m.get("mountPath", "").rstrip("/") == path:
            v = vols.get(m.get("name"), {})
            return v.get("hostPath"), m
    return None, None


def seccomp_of(spec, c):
    return (c.get("securityContext") or {}).get("seccompProfile") or \
        (spec.get("securityContext") or {}).get("seccompProfile") or {}


def apparmor_of(spec, c):
    return (c.get("securityContext") or {}).get("appArmorProfile") or \
        (spec.get("securityContext") or {}).get("appArmorProfile") or {}


def show(v):
    return json.dumps(v) if isinstance(v, (bool, list, type(None))) else str(v)


class Checks:
    def __init__(self):
        self.failed = 0

    def ok(self, cond, what, got=""):
        if cond:
            print("PASS\t%s" % what)
        else:
            self.failed += 1
            print("FAIL\t%s\t%s" % (what, str(got).replace("\n", " ")[:300] or "-"))
        return cond

    def eq(self, what, got, want):
        return self.ok(got == want, "%s: %s" % (what, show(want)), show(got))


def check_secret_file(ck, who, docs, ns, spec, c, path):
    """PATH comes from a Secret in the render, with a key there, readable by the owner only."""
    vol, rel = mount_for(c, spec, path)
    src = (vol or {}).get("secret")
    if not ck.ok(src is not None, "%s: %s is on a Secret volume" % (who, path), vol):
        return
    key = projected_key(src, rel)
    secrets = {name_of(s): s for s in of_kind(docs, "Secret") if ns_of(s) == ns}
    s = secrets.get(src.get("secretName"))
    ck.ok(s is not None, "%s: the Secret %s exists in the render" % (who, src.get("secretName")),
          sorted(secrets))
    if s is not None:
        keys = set((s.get("data") or {}).keys()) | set((s.get("stringData") or {}).keys())
        ck.ok(key in keys, "%s: the Secret has the key %s" % (who, key), sorted(keys))
    mode = src.get("defaultMode", 0o644)
    for it in src.get("items") or []:
        if it.get("key") == key and "mode" in it:
            mode = it["mode"]
    ck.ok(mode & 0o077 == 0, "%s: the token's mode lets only its owner read it (0600 or stricter)" % who,
          oct(mode))


def check(args):
    host_net, extra, binary, sdir = "any", [], None, SECCOMP_DIR
    path = None
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("--host-network", "--extra-cap", "--linerate", "--seccomp-dir") and i + 1 < len(args):
            v = args[i + 1]
            i += 2
            if a == "--host-network":
                if v not in ("yes", "no", "any"):
                    raise Usage("--host-network: yes, no or any")
                host_net = v
            elif a == "--extra-cap":
                extra.append(v)
            elif a == "--linerate":
                binary = v
            else:
                sdir = v
        elif path is None and not a.startswith("-"):
            path = a
            i += 1
        else:
            raise Usage("check: unexpected '%s'" % a)
    if path is None:
        raise Usage("check: which directory?")
    binary = binary or os.environ.get("LINERATE") or os.path.join(REPO, "build", "linerate")
    docs = render(path)
    ck = Checks()

    # --- the namespace, the DaemonSet and its agent container
    dss = of_kind(docs, "DaemonSet")
    ck.eq("DaemonSets in the render", len(dss), 1)
    if len(dss) != 1:
        return 1
    ds = dss[0]
    ns = ns_of(ds)
    spec = pod_spec(ds)
    c = the_container(spec, "agent")
    ck.ok(bool(ns), "the DaemonSet has a namespace", ns)
    nss = [n for n in of_kind(docs, "Namespace") if name_of(n) == ns]
    ck.ok(len(nss) == 1, "the Namespace %s is in the render" % ns, [name_of(n) for n in of_kind(docs, "Namespace")])
    labels = (nss[0].get("metadata", {}).get("labels") or {}) if nss else {}
    for mode in PSA:
        k = "pod-security.kubernetes.io/" + mode
        ck.eq("namespace label %s" % k, labels.get(k), "privileged")

    hn = bool(spec.get("hostNetwork", False))
    if host_net != "any":
        ck.eq("hostNetwork", hn, host_net == "yes")
    if hn:
        ck.eq("dnsPolicy with hostNetwork", spec.get("dnsPolicy"), "ClusterFirstWithHostNet")

    sc = c.get("securityContext") or {}
    ck.eq("agent: privileged", sc.get("privileged", False), False)
    ck.eq("agent: allowPrivilegeEscalation", sc.get("allowPrivilegeEscalation"), False)
    ck.eq("agent: readOnlyRootFilesystem", sc.get("readOnlyRootFilesystem"), True)
    caps = sc.get("capabilities") or {}
    ck.eq("agent: capabilities dropped", caps.get("drop"), ["ALL"])
    want = sorted(set(CAPS) | set(extra))
    ck.eq("agent: capabilities added", sorted(caps.get("add") or []), want)
    ck.ok(len(caps.get("add") or []) == len(set(caps.get("add") or [])), "agent: no capability added twice",
          caps.get("add"))
    ck.eq("pod: hostPID", spec.get("hostPID", False), False)
    ck.eq("pod: hostIPC", spec.get("hostIPC", False), False)

    tun, tm = host_mount(c, spec, "/dev/net/tun")
    ck.ok(tun is not None and tun.get("path") == "/dev/net/tun" and tun.get("type") == "CharDevice",
          "agent: /dev/net/tun mounted from the host's, a CharDevice", tun)
    bpf, bm = host_mount(c, spec, "/sys/fs/bpf")
    ck.ok(bpf is not None and bpf.get("path") == "/sys/fs/bpf" and
          bpf.get("type") in ("Directory", "DirectoryOrCreate"),
          "agent: /sys/fs/bpf mounted from the host's bpffs", bpf)
    # prepare_peer's records outlive the container (the root is read-only, and a restart loses it)
    rl, rm = host_mount(c, spec, "/run/linerate")
    ck.ok(rl is not None and rl.get("path") == "/run/linerate" and rl.get("type") == "DirectoryOrCreate" and
          not (rm or {}).get("readOnly", False),
          "agent: /run/linerate mounted from the host's, writable, DirectoryOrCreate (prepare_peer's records)",
          {"hostPath": rl, "readOnly": (rm or {}).get("readOnly", False)})

    # --- the agent's command line: real options only, ports agreeing with everything else
    ds_args = container_args(c)
    ck.eq("agent: the first argument (the subcommand)", ds_args[:1], ["agent"])
    longs, shorts = help_options(binary, "agent")
    ck.ok(len(longs) >= 5, "'%s agent --help' lists its options" % binary, sorted(longs))
    opts, unknown, stray = parse_args(ds_args[1:], longs, shorts)
    ck.ok(not unknown, "agent: every flag is an option of 'linerate agent'", unknown)
    ck.ok(not stray, "agent: no argument outside an option", stray)
    for must in ("listen", "token-file", "metrics"):
        ck.ok(len(opts.get(must) or []) == 1, "agent: --%s given once" % must, opts.get(must))
    listen = port_of((opts.get("listen") or [None])[0])
    metrics = port_of((opts.get("metrics") or [None])[0])
    ck.eq("agent: the --listen port", listen, 7446)
    ck.eq("agent: the --metrics port", metrics, 7447)
    if hn:
        ck.ok("allow-physical" in opts, "agent: --allow-physical with hostNetwork (the node's NICs are physical)",
              sorted(opts))
        globs = ",".join(v or "" for v in opts.get("allow") or [])
        ck.ok(bool(globs) and "$(" not in globs, "agent: --allow names the node's NICs with hostNetwork",
              globs or "no --allow")
    else:
        ck.ok("allow-physical" not in opts, "agent: no --allow-physical in a pod's own network", sorted(opts))

    token = (opts.get("token-file") or [None])[0]
    if ck.ok(bool(token), "agent: --token-file given", token):
        check_secret_file(ck, "agent", docs, ns, spec, c, token)

    ports = {p.get("name"): p.get("containerPort") for p in c.get("ports") or []}
    ck.eq("agent: container ports (the --listen and --metrics ports)",
          sorted(ports.values()), sorted(p for p in (listen, metrics) if p is not None))
    rp = c.get("readinessProbe") or {}
    ck.ok("tcpSocket" in rp, "agent: readiness probe is a TCP connect", rp)
    ck.eq("agent: readiness probe port (the --listen port)",
          resolve_port(c, (rp.get("tcpSocket") or {}).get("port")), listen)
    lp = c.get("livenessProbe") or {}
    if "httpGet" in lp:
        ck.eq("agent: liveness probe GET path", lp["httpGet"].get("path"), "/metrics")
        ck.eq("agent: liveness probe port (the --metrics port)", resolve_port(c, lp["httpGet"].get("port")), metrics)
    else:
        ck.eq("agent: liveness probe port (the --listen port)",
              resolve_port(c, (lp.get("tcpSocket") or {}).get("port")), listen)
    ann = ds.get("spec", {}).get("template", {}).get("metadata", {}).get("annotations") or {}
    ck.eq("pod annotation prometheus.io/scrape", ann.get("prometheus.io/scrape"), "true")
    ck.eq("pod annotation prometheus.io/port (the --metrics port)", ann.get("prometheus.io/port"), str(metrics))
    ck.eq("pod annotation prometheus.io/path", ann.get("prometheus.io/path", "/metrics"), "/metrics")

    version = project_version()
    ck.ok(bool(version), "CMakeLists.txt: project(linerate VERSION x.y.z)", version)
    ck.eq("agent: image (linerate:<project version>)", c.get("image"), "linerate:%s" % version)

    # --- the seccomp profile it names, in the repository
    sp = seccomp_of(spec, c)
    ck.eq("agent: seccomp profile type", sp.get("type"), "Localhost")
    lp_name = sp.get("localhostProfile", "")
    ck.ok(lp_name.startswith("linerate/"), "agent: the seccomp profile is linerate/NAME on the node", lp_name)
    prof_path = os.path.join(sdir, lp_name[len("linerate/"):]) if lp_name.startswith("linerate/") else None
    prof = None
    if ck.ok(prof_path is not None and os.path.isfile(prof_path),
             "the seccomp profile is in the repository (%s)" % prof_path, lp_name):
        try:
            with open(prof_path) as f:
                prof = json.load(f)
            ck.ok(True, "the seccomp profile parses as JSON")
        except ValueError as e:
            ck.ok(False, "the seccomp profile parses as JSON", e)
    if prof is not None:
        ck.eq("seccomp: defaultAction", prof.get("defaultAction"), "SCMP_ACT_ERRNO")
        # containerd (CRI and ctr) reads the file into the OCI spec as is: Docker's per-capability
        # includes/excludes and archMap would be dropped there, and what they restrict allowed
        docker_only = [k for k in ("archMap",) if k in prof] + \
            ["%s of %s" % (k, (s.get("names") or ["?"])[0]) for s in prof.get("syscalls") or []
             for k in ("includes", "excludes") if k in s]
        ck.eq("seccomp: plain OCI format (no archMap, includes or excludes)", docker_only, [])
        ck.ok("SCMP_ARCH_X86_64" in (prof.get("architectures") or []), "seccomp: architectures name x86_64",
              prof.get("architectures"))
        plain = set()
        for s in prof.get("syscalls") or []:
            if s.get("action") == "SCMP_ACT_ALLOW" and not s.get("args"):
                plain.update(s.get("names") or [])
        for call in ("bpf", "execve", "socket", "ioctl", "accept4", "exit_group"):
            ck.ok(call in plain, "seccomp: allows %s" % call, "not allowed")
        # prepare_peer's guardian (strace of test_prepare_peer's sends): its session and its records
        for call in GUARDIAN_CALLS:
            ck.ok(call in plain, "seccomp: allows %s (prepare_peer's guardian)" % call, "not allowed")
        sysadmin = "SYS_ADMIN" in extra
        for call in ("setns", "unshare", "mount"):
            if sysadmin:
                ck.ok(call in plain, "seccomp: allows %s (SYS_ADMIN: entering namespaces)" % call, "not allowed")
            else:
                ck.ok(call not in plain, "seccomp: no %s without SYS_ADMIN" % call, "allowed")

    # --- the headless Service
    pod_labels = ds.get("spec", {}).get("template", {}).get("metadata", {}).get("labels") or {}
    svcs = [s for s in of_kind(docs, "Service") if ns_of(s) == ns and s.get("spec", {}).get("selector") and
            all(pod_labels.get(k) == v for k, v in s["spec"]["selector"].items())]
    ck.eq("Services selecting the agents", len(svcs), 1)
    svc = svcs[0] if svcs else {"spec": {}}
    ss = svc["spec"]
    ck.eq("Service: clusterIP (headless)", ss.get("clusterIP"), "None")
    ck.eq("Service: publishNotReadyAddresses", ss.get("publishNotReadyAddresses", False), False)
    sports = {p.get("name"): p for p in ss.get("ports") or []}
    ck.eq("Service: port names", sorted(sports), ["control", "metrics"])
    for pname, want_port in (("control", listen), ("metrics", metrics)):
        p = sports.get(pname, {})
        ck.eq("Service: port %s" % pname, p.get("port"), want_port)
        ck.eq("Service: targetPort of %s (the container's port)" % pname,
              resolve_port(c, p.get("targetPort", p.get("port"))), want_port)

    # --- the controller Job
    jobs = of_kind(docs, "Job")
    ck.eq("Jobs in the render", len(jobs), 1)
    if jobs:
        job = jobs[0]
        jspec = pod_spec(job)
        jc = the_container(jspec, "matrix")
        jargs = container_args(jc)
        ck.eq("Job: the first argument (the subcommand)", jargs[:1], ["matrix"])
        ck.eq("Job: image (linerate:<project version>)", jc.get("image"), "linerate:%s" % version)
        ck.eq("Job: namespace (the Service's)", ns_of(job), ns)
        mlongs, mshorts = help_options(binary, "matrix")
        ck.ok(len(mlongs) >= 5, "'%s matrix --help' lists its options" % binary, sorted(mlongs))
        mopts, munknown, mstray = parse_args(jargs[1:], mlongs, mshorts)
        ck.ok(not munknown, "Job: every flag is an option of 'linerate matrix'", munknown)
        ck.ok(not mstray, "Job: no argument outside an option", mstray)
        agents = mopts.get("agents") or []
        ck.eq("Job: --agents given once", len(agents), 1)
        host, _, aport = (agents[0] or "").rpartition(":") if agents else ("", "", "")
        name = name_of(svc)
        names = {name, "%s.%s" % (name, ns), "%s.%s.svc" % (name, ns)}
        ck.ok(host in names or (host.startswith("%s.%s.svc." % (name, ns))),
              "Job: --agents names the Service (%s, or %s.%s[.svc[.DOMAIN]])" % (name, name, ns), host)
        ck.eq("Job: --agents port (the --listen port)", int(aport) if aport.isdigit() else aport, listen)
        jtoken = (mopts.get("token-file") or [None])[0]
        if ck.ok(bool(jtoken), "Job: --token-file given", jtoken):
            check_secret_file(ck, "Job", docs, ns_of(job), jspec, jc, jtoken)
            vol, _ = mount_for(c, spec, token or "")
            jvol, _ = mount_for(jc, jspec, jtoken)
            ck.eq("Job: the token is the agents' (the same Secret)",
                  ((jvol or {}).get("secret") or {}).get("secretName"),
                  ((vol or {}).get("secret") or {}).get("secretName"))
        jsc = jc.get("securityContext") or {}
        ck.eq("Job: capabilities dropped", (jsc.get("capabilities") or {}).get("drop"), ["ALL"])
        ck.eq("Job: capabilities added", (jsc.get("capabilities") or {}).get("add") or [], [])
        ck.eq("Job: allowPrivilegeEscalation", jsc.get("allowPrivilegeEscalation"), False)
        ck.ok(bool(seccomp_of(jspec, jc).get("type")), "Job: a seccomp profile", seccomp_of(jspec, jc))
        for pairs in mopts.get("pairs") or []:
            vol, rel = mount_for(jc, jspec, pairs or "")
            src = (vol or {}).get("configMap")
            if ck.ok(src is not None, "Job: --pairs %s is on a ConfigMap volume" % pairs, vol):
                cms = {name_of(m): m for m in of_kind(docs, "ConfigMap") if ns_of(m) == ns_of(job)}
                cm = cms.get(src.get("name"))
                ck.ok(cm is not None, "Job: the ConfigMap %s exists in the render" % src.get("name"), sorted(cms))
                key = projected_key(src, rel)
                ck.ok(cm is not None and key in (cm.get("data") or {}), "Job: the ConfigMap has the key %s" % key,
                      sorted((cm or {}).get("data") or {}))
    return 1 if ck.failed else 0


def docker_args(args):
    if len(args) != 1:
        raise Usage("docker-args: one directory")
    docs = render(args[0])
    dss = of_kind(docs, "DaemonSet")
    if len(dss) != 1:
        raise Usage("docker-args: %d DaemonSets in the render of %s, not 1" % (len(dss), args[0]))
    spec = pod_spec(dss[0])
    c = the_container(spec, "agent")
    sc = c.get("securityContext") or {}
    psc = spec.get("securityContext") or {}
    out = []
    if spec.get("hostNetwork"):
        out.append("--network=host")
    uid = sc.get("runAsUser", psc.get("runAsUser"))
    gid = sc.get("runAsGroup", psc.get("runAsGroup"))
    if uid is not None:
        out.append("--user=%s%s" % (uid, "" if gid is None else ":%s" % gid))
    if sc.get("privileged"):
        out.append("--privileged")
    caps = sc.get("capabilities") or {}
    out += ["--cap-drop=%s" % x for x in caps.get("drop") or []]
    out += ["--cap-add=%s" % x for x in caps.get("add") or []]
    vols = {v.get("name"): v for v in spec.get("volumes") or []}
    devices, volumes = [], []
    for m in c.get("volumeMounts") or []:
        hp = (vols.get(m.get("name")) or {}).get("hostPath")
        if not hp:
            continue
        mp = m["mountPath"]
        if hp.get("type") in ("CharDevice", "BlockDevice"):
            devices.append("--device=%s" % (hp["path"] if hp["path"] == mp else "%s:%s" % (hp["path"], mp)))
            continue
        o = (["ro"] if m.get("readOnly") else []) + \
            {"HostToContainer": ["rslave"], "Bidirectional": ["rshared"]}.get(m.get("mountPropagation"), [])
        volumes.append("--volume=%s:%s%s" % (hp["path"], mp, ":" + ",".join(o) if o else ""))
    out += devices + volumes
    sp = seccomp_of(spec, c)
    if sp.get("type") == "Localhost":
        lp = sp.get("localhostProfile", "")
        if not lp.startswith("linerate/"):
            raise Usage("docker-args: seccomp profile '%s' is not linerate/NAME" % lp)
        out.append("--security-opt=seccomp=%s" % os.path.join(SECCOMP_DIR, lp[len("linerate/"):]))
    elif sp.get("type") == "Unconfined":
        out.append("--security-opt=seccomp=unconfined")
    ap = apparmor_of(spec, c)
    if ap.get("type") == "Unconfined":
        out.append("--security-opt=apparmor=unconfined")
    elif ap.get("type") == "Localhost":
        out.append("--security-opt=apparmor=%s" % ap.get("localhostProfile", ""))
    if sc.get("allowPrivilegeEscalation") is False:
        out.append("--security-opt=no-new-privileges")
    if sc.get("readOnlyRootFilesystem"):
        out.append("--read-only")
    out += ["--env=%s=%s" % kv for kv in literal_env(c).items()]
    out.append(c["image"])
    out += container_args(c)
    for a in out:
        if "\n" in a:
            raise Usage("docker-args: an argument holds a newline: %r" % a)
        print(a)
    return 0


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) >= 2 else 2
    cmd, rest = argv[1], argv[2:]
    try:
        if cmd == "render":
            if len(rest) != 1:
                raise Usage("render: one directory")
            json.dump(render(rest[0]), sys.stdout, indent=1)
            print()
            return 0
        if cmd == "check":
            return check(rest)
        if cmd == "docker-args":
            return docker_args(rest)
        raise Usage("unknown mode '%s' (render, check, docker-args)" % cmd)
    except Usage as e:
        print("k8s_manifest.py: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
