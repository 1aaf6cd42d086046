// Validates Kubernetes manifests (multi-document YAML, e.g. `kubectl kustomize` output) against
// the Kubernetes API schemas (npm kubernetes-models) and the CRD schemas of the operators the
// manifests use (prometheus-operator, cert-manager).
//
//   node validate.mjs FILE...      (or - for stdin)
//
// Prints one line per object; exits 1 when any object fails: an unknown apiVersion/kind, a
// missing required field, a wrong type or format; the message is the validator's
// (e.g. "apps/v1 Deployment ibgr/gateway: data/spec must have required property selector").
// The upstream JSON schemas accept unknown fields; a second pass walks each object along the
// models' TypeScript declarations (*.d.ts, the same package) and rejects fields that the API
// type does not have, like the API server's strict field validation ("unknown field
// spec.template.spec.containers[0].livenesProbe"). Inline object types (maps, most CRD
// sub-objects) are not walked.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";

const NODE_MODULES = path.join(path.dirname(fileURLToPath(import.meta.url)), "node_modules");

// *.d.ts file -> {fields: Map(name -> type text), imports: Map(type name -> file)}; null if none.
const declCache = new Map();
function declarations(file) {
  if (declCache.has(file)) return declCache.get(file);
  let decl = null;
  if (existsSync(file)) {
    const text = readFileSync(file, "utf8");
    const imports = new Map();
    for (const m of text.matchAll(/^import \{ ([^}]+) \} from "([^"]+)";$/gm)) {
      const spec = m[2];
      const target = spec.startsWith(".")
        ? path.join(path.dirname(file), spec.replace(/\.js$/, ".d.ts"))
        : path.join(NODE_MODULES, spec.replace(/\.js$/, "") + ".d.ts");
      for (const name of m[1].split(",").map((x) => x.trim())) imports.set(name, target);
    }
    const body = /^export interface \w+(?: extends ([^{]+))? \{\n([\s\S]*?)^\}/m.exec(text);
    if (body) {
      const fields = new Map();
      for (const m of body[2].matchAll(/^ {4}"([^"]+)"\??: (.*)$/gm)) fields.set(m[1], m[2].replace(/;$/, ""));
      decl = { fields, imports };
      // Inherited fields; an ancestor that cannot be read turns the check off for this type.
      for (const parent of (body[1] ?? "").split(",").map((x) => x.trim()).filter(Boolean)) {
        if (parent === "TypeMeta") { fields.set("apiVersion", "string"); fields.set("kind", "string"); continue; }
        const inherited = imports.has(parent) ? declarations(imports.get(parent)) : null;
        if (!inherited) { decl = null; break; }
        for (const [k, v] of inherited.fields) fields.set(k, v);
        for (const [k, v] of inherited.imports) if (!imports.has(k)) imports.set(k, v);
      }
    }
  }
  declCache.set(file, decl);
  return decl;
}

// Reports fields of `value` that the declared type in `file` does not have.
function unknownFields(value, file, where, out) {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return;
  const decl = declarations(file);
  if (!decl) return;
  for (const [key, child] of Object.entries(value)) {
    const type = decl.fields.get(key);
    if (type === undefined) {
      out.push(`${where ? where + "." : ""}${key}: unknown field`);
      continue;
    }
    const array = /^Array<(\w+)>$/.exec(type);
    const name = array ? array[1] : /^\w+$/.test(type) ? type : null;
    const target = name && decl.imports.get(name);
    if (!target) continue;
    const at = `${where ? where + "." : ""}${key}`;
    if (array && Array.isArray(child)) child.forEach((c, i) => unknownFields(c, target, `${at}[${i}]`, out));
    else if (!array) unknownFields(child, target, at, out);
  }
}

// apiVersion group -> module holding that group's models.
const GROUP_MODULES = {
  "": "kubernetes-models",
  "monitoring.coreos.com": "@kubernetes-models/prometheus-operator",
  "cert-manager.io": "@kubernetes-models/cert-manager",
  "acme.cert-manager.io": "@kubernetes-models/cert-manager",
};

async function modelFor(apiVersion, kind) {
  if (typeof apiVersion !== "string" || typeof kind !== "string") {
    throw new Error("apiVersion and kind are required strings");
  }
  const slash = apiVersion.indexOf("/");
  const group = slash < 0 ? "" : apiVersion.slice(0, slash);
  // Built-in groups: the core group, unqualified ones (apps, batch, ...) and *.k8s.io.
  const builtin = !group.includes(".") || group.endsWith(".k8s.io");
  const pkg = GROUP_MODULES[group] ?? (builtin ? "kubernetes-models" : null);
  if (pkg === null) throw new Error(`no schema for API group "${group}" (unknown CRD)`);
  let mod;
  try {
    mod = await import(`${pkg}/${apiVersion}`);
  } catch {
    throw new Error(`unknown apiVersion "${apiVersion}"`);
  }
  const Model = mod[kind];
  if (typeof Model !== "function" || typeof Model.prototype?.validate !== "function") {
    throw new Error(`unknown kind "${kind}" in ${apiVersion}`);
  }
  return { Model, decl: path.join(NODE_MODULES, pkg, apiVersion, `${kind}.d.ts`) };
}

async function main(files) {
  if (files.length === 0) {
    console.error("usage: node validate.mjs FILE... (- = stdin)");
    return 2;
  }
  let failures = 0;
  let count = 0;
  for (const file of files) {
    const text = readFileSync(file === "-" ? 0 : file, "utf8");
    for (const doc of parseAllDocuments(text)) {
      if (doc.errors.length) {
        console.error(`${file}: YAML error: ${doc.errors[0].message}`);
        failures++;
        continue;
      }
      const obj = doc.toJS();
      if (obj === null || obj === undefined) continue;
      count++;
      const ns = obj.metadata?.namespace ? `${obj.metadata.namespace}/` : "";
      const name = `${obj.apiVersion} ${obj.kind} ${ns}${obj.metadata?.name ?? "(no name)"}`;
      try {
        const { Model, decl } = await modelFor(obj.apiVersion, obj.kind);
        new Model(obj).validate();
        if (!obj.metadata?.name) throw new Error("metadata.name is required");
        const unknown = [];
        unknownFields(obj, decl, "", unknown);
        if (unknown.length) throw new Error(unknown.join(", "));
        console.log(`ok   ${name}`);
      } catch (e) {
        console.error(`FAIL ${file}: ${name}: ${e.message}`);
        failures++;
      }
    }
  }
  console.log(`${count} object(s), ${failures} failure(s)`);
  return failures === 0 && count > 0 ? 0 : 1;
}

process.exitCode = await main(process.argv.slice(2));
