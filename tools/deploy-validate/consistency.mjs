// Cross-checks the deployment files against the binaries: every flag passed to an IBGraphRAG
// binary (Kubernetes containers, compose services) exists in that binary's --helpfull, ports and
// probes match the ports the binary listens on, Services and NetworkPolicies point at real
// container ports, in-cluster addresses name existing Services on the right port, and the
// Dockerfile builds with the CI scripts only and exposes/health-checks the right ports.
//
//   node consistency.mjs --bin-info DIR [--expect "kgstore gateway ibgr:artifacts build ..."]
//        [--compose FILE] [--dockerfile FILE] [--ci-script FILE] RENDERED.yaml...
//
// DIR (written by deploy/check_deploy.sh): <binary>.flags (one flag name a line, from
// --helpfull), ibgr.usage (what `ibgr` prints with no arguments), ports.json ({"kgstore": {"grpc": 50052,
// "metrics": 9092}, ...}, from the services' kDefault*Port constants). A binary or ibgr command
// with no info is an error when --expect lists it, else reported as NOT CHECKED.
// Exit 1 with one line per problem.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseAllDocuments } from "yaml";

const SERVERS = ["gateway", "kgstore", "alignment", "retriever", "reasoner"];
const OPS_COMMANDS = new Set(["health", "wait-artifacts", "sync-kg"]);

const problems = [];
const notChecked = new Set();
const fail = (where, msg) => problems.push(`${where}: ${msg}`);

function parseArgs(argv) {
  const o = { rendered: [], expect: new Set() };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => argv[++i];
    if (a === "--bin-info") o.binInfo = next();
    else if (a === "--expect") for (const e of next().split(/[,\n]/)) { if (e.trim()) o.expect.add(e.trim()); }
    else if (a === "--compose") o.compose = next();
    else if (a === "--dockerfile") o.dockerfile = next();
    else if (a === "--ci-script") o.ciScript = next();
    else if (a === "--rules") o.rules = next();
    else o.rendered.push(a);
  }
  // --expect is space separated for binaries; "ibgr:artifacts build" keeps its space.
  const expanded = new Set();
  for (const e of o.expect) {
    if (e.startsWith("ibgr:")) expanded.add(e);
    else for (const w of e.split(/\s+/)) expanded.add(w);
  }
  o.expect = expanded;
  return o;
}

const opts = parseArgs(process.argv.slice(2));
if (!opts.binInfo) {
  console.error("usage: node consistency.mjs --bin-info DIR [--expect LIST] [--compose F] [--dockerfile F] RENDERED...");
  process.exit(2);
}
const ports = JSON.parse(readFileSync(path.join(opts.binInfo, "ports.json"), "utf8"));
const flagCache = new Map();
function flagsOf(binary) {
  if (!flagCache.has(binary)) {
    const f = path.join(opts.binInfo, `${binary}.flags`);
    flagCache.set(binary, existsSync(f) ? new Set(readFileSync(f, "utf8").split("\n").filter(Boolean)) : null);
  }
  return flagCache.get(binary);
}
// `ibgr` with no arguments prints its commands, one a line: "  kg build      build a KG ...".
const ibgrUsageFile = path.join(opts.binInfo, "ibgr.usage");
const ibgrUsage = existsSync(ibgrUsageFile) ? readFileSync(ibgrUsageFile, "utf8") : null;
const hasIbgrCommand = (words) => {
  const esc = words.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`\\n  ${esc}( |$)`, "m").test(ibgrUsage);
};

function missing(where, what) {
  if (opts.expect.has(what)) fail(where, `${what} is expected but missing (not built, or no such command)`);
  else notChecked.add(what);
}

// Checks the flags of one invocation; returns {port, metrics} given explicitly (or undefined).
function checkInvocation(where, binary, args) {
  const out = {};
  if (binary === "ibgr-ops") {
    const sub = args[0];
    if (!OPS_COMMANDS.has(sub)) fail(where, `ibgr-ops has no command "${sub}"`);
    return out;
  }
  const flags = flagsOf(binary);
  let positional = [];
  for (const a of args) {
    const m = /^--?([A-Za-z0-9_]+)(=(.*))?$/.exec(a);
    if (!m) { positional.push(a); continue; }
    const [, name, , value] = m;
    if (name === "port") out.port = Number(value);
    if (name === "metrics_port") out.metrics = Number(value);
    out[`flag:${name}`] = value ?? "";
    if (flags === null) continue;
    const known = flags.has(name) || (name.startsWith("no") && flags.has(name.slice(2)));
    if (!known) fail(where, `${binary} has no flag --${name} (not in \`${binary} --helpfull\`)`);
  }
  if (flags === null) missing(where, binary);
  if (binary === "ibgr" && positional.length) {
    const cmd2 = positional.slice(0, 2).join(" ");
    const cmd1 = positional[0];
    if (ibgrUsage === null) missing(where, "ibgr");
    else if (!hasIbgrCommand(cmd2) && !(positional.length === 1 && hasIbgrCommand(cmd1))) {
      missing(where, `ibgr:${cmd2}`);
    }
  }
  return out;
}

// Scans shell snippets (sh -c "...") for ibgr-ops / ibgr invocations.
function checkShell(where, script) {
  for (const m of script.matchAll(/(?:^|[\s;&|(])(?:\/opt\/ibgr\/bin\/)?ibgr-ops\s+([a-z-]+)/g)) {
    if (!OPS_COMMANDS.has(m[1])) fail(where, `ibgr-ops has no command "${m[1]}"`);
  }
}

// Address flags: dns:///NAME:PORT, NAME:PORT. NAME must resolve to a server on its gRPC port.
const ADDRESS_FLAGS = { alignment: "alignment", retriever: "retriever", reasoner: "reasoner", kgstore: "kgstore" };
function checkAddress(where, flag, value, resolveHost) {
  if (!value) return;  // empty = in process (retriever --kgstore=)
  const m = /^(?:dns:\/\/\/|ipv4:)?([^:/]+):(\d+)$/.exec(value);
  if (!m) { fail(where, `--${flag}=${value}: not host:port or dns:///host:port`); return; }
  const [, host, port] = m;
  const target = ADDRESS_FLAGS[flag];
  const want = ports[target]?.grpc;
  if (Number(port) !== want) fail(where, `--${flag}=${value}: port ${port}, but ${target} listens on ${want}`);
  const problem = resolveHost(host, target);
  if (problem) fail(where, `--${flag}=${value}: ${problem}`);
}

function portOf(container, ref) {
  if (typeof ref === "number") return ref;
  if (/^\d+$/.test(String(ref))) return Number(ref);
  const p = (container.ports ?? []).find((x) => x.name === ref);
  return p ? p.containerPort : undefined;
}

function serverOfCommand(cmd) {
  const b = cmd ? path.basename(cmd) : undefined;
  return b;
}

function envValue(container, name) {
  const e = (container.env ?? []).find((x) => x.name === name);
  return e ? e.value : undefined;
}

function expectedPorts(server, explicit, env) {
  return {
    grpc: explicit.port ?? (env.port !== undefined ? Number(env.port) : ports[server].grpc),
    metrics: explicit.metrics ?? (env.metrics !== undefined ? Number(env.metrics) : ports[server].metrics),
  };
}

function checkProbe(where, container, probeName, grpcPort) {
  const probe = container[probeName];
  if (!probe) { fail(where, `${probeName} missing`); return; }
  if (probe.grpc) {
    if (probe.grpc.port !== grpcPort) fail(where, `${probeName}.grpc.port ${probe.grpc.port}, but the server listens on ${grpcPort}`);
  } else if (probe.exec) {
    const cmd = probe.exec.command ?? [];
    const bin = path.basename(cmd[0] ?? "");
    if (bin === "ibgr-ops" && cmd[1] === "health") {
      const p = cmd[2] !== undefined ? Number(cmd[2]) : Number(envValue(container, "IBGR_HEALTH_PORT"));
      if (p !== grpcPort) fail(where, `${probeName} checks port ${p}, but the server listens on ${grpcPort}`);
    } else if (bin === "ibgr" && cmd[1] === "health") {
      const t = cmd.find((c) => c.startsWith("--target="));
      const p = t ? Number(t.split(":").pop()) : NaN;
      if (p !== grpcPort) fail(where, `${probeName} checks port ${p}, but the server listens on ${grpcPort}`);
    } else {
      fail(where, `${probeName} exec is neither \`ibgr-ops health\` nor \`ibgr health\``);
    }
  } else {
    const p = portOf(container, probe.httpGet?.port ?? probe.tcpSocket?.port);
    fail(where, `${probeName} must use the gRPC health protocol (grpc or exec ibgr-ops health), got port ${p}`);
  }
}

// ---------------------------------------------------------------- Kubernetes
function checkRendered(file) {
  const objs = parseAllDocuments(readFileSync(file, "utf8")).map((d) => d.toJS()).filter(Boolean);
  const services = objs.filter((o) => o.kind === "Service");
  const serviceNames = new Set(services.map((s) => s.metadata.name));
  const workloads = objs.filter((o) => ["Deployment", "StatefulSet", "Job", "DaemonSet"].includes(o.kind));
  const podsByServer = new Map();  // server -> {labels, container, grpc, metrics}
  const resolveHost = (host, target) => {
    const svc = host.split(".")[0];
    if (!serviceNames.has(svc)) return `no Service "${svc}" in the manifests`;
    const s = services.find((x) => x.metadata.name === svc);
    const sel = s.spec.selector ?? {};
    const info = podsByServer.get(target);
    if (!info || !Object.entries(sel).every(([k, v]) => info.labels[k] === v)) {
      return `Service "${svc}" does not select the ${target} pods`;
    }
    return null;
  };
  const deferred = [];
  for (const w of workloads) {
    const spec = w.spec.template.spec;
    const labels = w.spec.template.metadata?.labels ?? {};
    for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
      const where = `${path.basename(path.dirname(file))}/${path.basename(file)} ${w.kind}/${w.metadata.name} container ${c.name}`;
      const cmd = c.command ?? [];
      const bin = serverOfCommand(cmd[0]);
      if (bin === "sh" || bin === "bash") { checkShell(where, [...cmd.slice(1), ...(c.args ?? [])].join(" ")); continue; }
      if (!c.command) { fail(where, "no command: the image runs the all-in-one server; name the binary"); continue; }
      const explicit = checkInvocation(where, bin, [...cmd.slice(1), ...(c.args ?? [])]);
      // retriever_torch is the retriever built with the LibTorch backend: the same server.
      const server = bin === "ibgraphrag" ? "gateway" : bin === "retriever_torch" ? "retriever" : bin;
      if (!SERVERS.includes(server)) continue;
      const env = { port: envValue(c, "IBGR_PORT"), metrics: envValue(c, "IBGR_METRICS_PORT") };
      const want = expectedPorts(server, explicit, env);
      const grpcPort = portOf(c, "grpc");
      const metricsPort = portOf(c, "metrics");
      if (grpcPort !== want.grpc) fail(where, `containerPort "grpc" is ${grpcPort}, but ${bin} listens on ${want.grpc}`);
      if (metricsPort !== want.metrics) fail(where, `containerPort "metrics" is ${metricsPort}, but ${bin} serves /metrics on ${want.metrics}`);
      const hp = envValue(c, "IBGR_HEALTH_PORT");
      if (hp !== undefined && Number(hp) !== want.grpc) fail(where, `IBGR_HEALTH_PORT ${hp}, but ${bin} listens on ${want.grpc}`);
      for (const p of ["startupProbe", "readinessProbe", "livenessProbe"]) checkProbe(where, c, p, want.grpc);
      podsByServer.set(server, { labels, container: c, grpc: want.grpc, metrics: want.metrics });
      // `gateway --reasoner=local` / `--alignment=local` run that service in the gateway's
      // process: the gateway pod runs it, and "local" is no address.
      const local = new Set(["reasoner", "alignment"].filter(
        (s) => server === "gateway" && explicit[`flag:${s}`] === "local"));
      for (const s of local) {
        if (!podsByServer.has(s)) podsByServer.set(s, { labels, container: c, grpc: undefined, metrics: undefined });
      }
      for (const flag of Object.keys(ADDRESS_FLAGS)) {
        if (local.has(flag)) continue;
        if (explicit[`flag:${flag}`] !== undefined && bin !== flag) {
          deferred.push(() => checkAddress(where, flag, explicit[`flag:${flag}`], resolveHost));
        }
      }
    }
  }
  for (const d of deferred) d();
  // Services: every port must land on a container port of the pods they select.
  for (const s of services) {
    const where = `${path.basename(path.dirname(file))}/${path.basename(file)} Service/${s.metadata.name}`;
    const sel = s.spec.selector ?? {};
    const targets = workloads.filter((w) => Object.entries(sel).every(([k, v]) => (w.spec.template.metadata?.labels ?? {})[k] === v));
    if (targets.length === 0) { fail(where, "selects no pods"); continue; }
    for (const w of targets) {
      for (const p of s.spec.ports ?? []) {
        const ok = w.spec.template.spec.containers.some((c) => portOf(c, p.targetPort ?? p.port) !== undefined &&
          (c.ports ?? []).some((cp) => cp.containerPort === portOf(c, p.targetPort ?? p.port)));
        if (!ok) fail(where, `port ${p.name ?? p.port} -> targetPort ${p.targetPort ?? p.port}: no such container port in ${w.kind}/${w.metadata.name}`);
      }
    }
  }
  // NetworkPolicies: ingress ports must be container ports of the selected pods.
  for (const np of objs.filter((o) => o.kind === "NetworkPolicy")) {
    const where = `${path.basename(path.dirname(file))}/${path.basename(file)} NetworkPolicy/${np.metadata.name}`;
    const sel = np.spec.podSelector?.matchLabels ?? {};
    const targets = workloads.filter((w) => Object.entries(sel).every(([k, v]) => (w.spec.template.metadata?.labels ?? {})[k] === v));
    for (const rule of np.spec.ingress ?? []) {
      for (const p of rule.ports ?? []) {
        for (const w of targets) {
          if (w.kind === "Job") continue;
          const found = w.spec.template.spec.containers.some((c) => (c.ports ?? []).some((cp) => cp.containerPort === p.port || cp.name === p.port));
          if (!found) fail(where, `ingress port ${p.port} is not a container port of ${w.kind}/${w.metadata.name}`);
        }
      }
    }
  }
  for (const s of SERVERS) {
    if (!podsByServer.has(s)) fail(path.basename(path.dirname(file)), `no workload runs ${s}`);
  }
}

// ---------------------------------------------------------------- compose
function checkCompose(file) {
  const doc = parseAllDocuments(readFileSync(file, "utf8"), { merge: true })[0].toJS();
  const svcs = doc.services ?? {};
  const info = {};
  const deferred = [];
  for (const [name, s] of Object.entries(svcs)) {
    const where = `compose ${name}`;
    // Our image (any binary of it); not the Dockerfile's Debian Prometheus target.
    const image = String(s.image ?? "");
    if (!image.includes("ibgraphrag") || image.includes("ibgraphrag-prometheus")) continue;
    const entry = Array.isArray(s.entrypoint) ? s.entrypoint : s.entrypoint ? [s.entrypoint] : [];
    const command = Array.isArray(s.command) ? s.command : [];
    const bin = path.basename(entry[0] ?? "ibgraphrag");
    const explicit = checkInvocation(where, bin, [...entry.slice(1), ...command]);
    if (!SERVERS.includes(bin) && bin !== "ibgraphrag") continue;
    const server = bin === "ibgraphrag" ? "gateway" : bin;
    const env = s.environment ?? {};
    const want = expectedPorts(server, explicit, { port: env.IBGR_PORT, metrics: env.IBGR_METRICS_PORT });
    const hp = env.IBGR_HEALTH_PORT;
    if (Number(hp) !== want.grpc) fail(where, `IBGR_HEALTH_PORT (HEALTHCHECK) ${hp}, but ${bin} listens on ${want.grpc}`);
    const http = explicit["flag:http_port"] !== undefined ? Number(explicit["flag:http_port"]) : undefined;
    for (const p of s.ports ?? []) {
      const container = Number(String(p).split(":").pop());
      if (container !== want.grpc && container !== want.metrics && container !== http) {
        fail(where, `published container port ${container} is neither ${want.grpc}, ${want.metrics} nor --http_port`);
      }
    }
    info[name] = { server, ...want };
    for (const flag of Object.keys(ADDRESS_FLAGS)) {
      if (explicit[`flag:${flag}`] !== undefined && bin !== flag) {
        deferred.push(() => checkAddress(where, flag, explicit[`flag:${flag}`], (host, target) =>
          info[host]?.server === target ? null : `no compose service "${host}" running ${target}`));
      }
    }
  }
  for (const d of deferred) d();
  for (const s of SERVERS) if (!Object.values(info).some((i) => i.server === s)) fail("compose", `no service runs ${s}`);
  // Prometheus scrape targets (docker/prometheus.yml beside the compose file).
  const prom = path.join(path.dirname(file), "prometheus.yml");
  if (existsSync(prom)) {
    const p = parseAllDocuments(readFileSync(prom, "utf8"))[0].toJS();
    const targets = (p.scrape_configs ?? []).flatMap((sc) => (sc.static_configs ?? []).flatMap((x) => x.targets ?? []));
    for (const [name, i] of Object.entries(info)) {
      if (!targets.includes(`${name}:${i.metrics}`)) fail("prometheus.yml", `does not scrape ${name}:${i.metrics}`);
    }
    for (const t of targets) {
      const [h, port] = t.split(":");
      if (!info[h] || info[h].metrics !== Number(port)) fail("prometheus.yml", `target ${t} is no service's metrics port`);
    }
  }
}

// ---------------------------------------------------------------- Dockerfile
function checkDockerfile(file, ciScript) {
  // Comments explain how to build; only instructions are checked.
  const text = readFileSync(file, "utf8").replace(/^\s*#.*\n/gm, "").replace(/\\\n/g, " ");
  const ci = ciScript ? readFileSync(ciScript, "utf8") : "";
  for (const m of text.matchAll(/(?:^|[\s/])(scripts\/[A-Za-z0-9_.-]+)/g)) {
    const s = m[1];
    if (!ci.includes(s)) fail("Dockerfile", `calls ${s}, which the CI script (${ciScript}) does not run`);
  }
  for (const m of text.matchAll(/scripts\/build\.sh --target ([^&]+?)(?=&&|$)/gm)) {
    for (const t of m[1].trim().split(/\s+/)) {
      if (!flagsOf(t) && !opts.expect.has(t)) notChecked.add(t);
      else if (!flagsOf(t)) fail("Dockerfile", `builds target ${t}, which is not built in the bin dir`);
    }
  }
  // Per-service stages: ENTRYPOINT binary, IBGR_HEALTH_PORT and EXPOSE match the defaults.
  const stages = text.split(/^FROM /m).slice(1);
  for (const st of stages) {
    const name = /^\S+\s+AS\s+(\S+)/i.exec(st)?.[1];
    const entry = /^ENTRYPOINT \["\/opt\/ibgr\/bin\/([a-z_]+)"\]/m.exec(st)?.[1];
    const server = entry === "ibgraphrag" ? "gateway" : entry === "retriever_torch" ? "retriever" : entry;
    if (!entry || !SERVERS.includes(server)) continue;
    const hp = /IBGR_HEALTH_PORT=(\d+)/.exec(st)?.[1];
    if (Number(hp) !== ports[server].grpc) fail(`Dockerfile stage ${name}`, `IBGR_HEALTH_PORT ${hp}, but ${entry} listens on ${ports[server].grpc}`);
    const expose = /^EXPOSE ([\d ]+)$/m.exec(st)?.[1]?.trim().split(/\s+/).map(Number) ?? [];
    if (expose[0] !== ports[server].grpc || expose[1] !== ports[server].metrics) {
      fail(`Dockerfile stage ${name}`, `EXPOSE ${expose.join(" ")}, but ${entry} uses ${ports[server].grpc} ${ports[server].metrics}`);
    }
  }
  if (!/^HEALTHCHECK .*ibgr-ops", "health"/m.test(text)) fail("Dockerfile", "no HEALTHCHECK through ibgr-ops health");
  if (!/^USER 10001/m.test(text)) fail("Dockerfile", "runtime stage must run as the non-root user 10001");
}

// The PrometheusRule in the manifests carries exactly the groups of the plain rule file.
// JSON with sorted keys (kustomize re-orders mapping keys).
const canonical = (v) => JSON.stringify(v, (k, x) => (x && typeof x === "object" && !Array.isArray(x)
  ? Object.fromEntries(Object.keys(x).sort().map((key) => [key, x[key]])) : x));
function checkRules(ruleFile, rendered) {
  const want = canonical(parseAllDocuments(readFileSync(ruleFile, "utf8"))[0].toJS().groups);
  for (const f of rendered) {
    const objs = parseAllDocuments(readFileSync(f, "utf8")).map((d) => d.toJS()).filter(Boolean);
    const pr = objs.filter((o) => o.kind === "PrometheusRule");
    if (pr.length !== 1) { fail(f, `expected one PrometheusRule, found ${pr.length}`); continue; }
    if (canonical(pr[0].spec.groups) !== want) {
      fail(f, `PrometheusRule ${pr[0].metadata.name} differs from ${ruleFile}`);
    }
  }
}

for (const f of opts.rendered) checkRendered(f);
if (opts.rules) checkRules(opts.rules, opts.rendered);
if (opts.compose) checkCompose(opts.compose);
if (opts.dockerfile) checkDockerfile(opts.dockerfile, opts.ciScript);

for (const n of notChecked) console.log(`NOT CHECKED: ${n} (not built in the bin dir yet; the manifests use it)`);
for (const p of problems) console.error(`FAIL ${p}`);
console.log(`consistency: ${problems.length} problem(s), ${notChecked.size} item(s) not checked`);
process.exitCode = problems.length ? 1 : 0;
