#!/usr/bin/env node
/**
 * Fails on an import circle in server/, db/, app/, components/ or lib/, and on an import that runs
 * upward between server/'s folders (the layers of docs/architecture.md). Type-only imports count:
 * a circle of types is still a circle to read. Run by `npm test` (scripts/test-all.sh);
 * `node scripts/check-imports.mjs --report` also lists the folder pairs of server/.
 */
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const ts = createRequire(import.meta.url)("typescript");
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const ROOTS = ["server", "db", "app", "components", "lib"];

/**
 * server/'s layers, top first: a file may import its own folder and the layers below it. The files
 * directly in server/ (runtime, auth) are the layer "(root)".
 */
const SERVER_LAYERS = [
  ["agent-api", "mcp"],
  ["trpc"],
  ["dashboard"],
  ["(root)"],
  ["hooks", "otlp"],
  ["ingest"],
  ["services"],
  ["notifications"],
  ["http"],
  ["metrics"],
  ["engine"],
];


function sourceFiles() {
  const files = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== "node_modules") walk(rel);
      } else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts")) files.push(rel);
    }
  };
  for (const r of ROOTS) if (fs.existsSync(path.join(root, r))) walk(r);
  return files;
}

function resolveImport(from, specifier) {
  let base;
  if (specifier.startsWith("@/")) base = specifier.slice(2);
  else if (specifier.startsWith(".")) base = path.join(path.dirname(from), specifier);
  else return null;
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, path.join(base, "index.ts"), path.join(base, "index.tsx")]) {
    const full = path.join(root, candidate);
    if (fs.existsSync(full) && fs.statSync(full).isFile()) return path.normalize(candidate);
  }
  return null;
}

function importGraph() {
  const graph = new Map();
  for (const file of sourceFiles()) {
    const info = ts.preProcessFile(fs.readFileSync(path.join(root, file), "utf8"), true, true);
    graph.set(file, [...new Set(info.importedFiles.map((i) => resolveImport(file, i.fileName)).filter(Boolean))]);
  }
  return graph;
}

/** Strongly connected components of more than one file, or a file importing itself (Tarjan). */
function circles(graph) {
  let index = 0;
  const stack = [];
  const meta = new Map();
  const found = [];
  const visit = (v) => {
    meta.set(v, { index, low: index, onStack: true });
    index++;
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!meta.has(w)) {
        visit(w);
        meta.get(v).low = Math.min(meta.get(v).low, meta.get(w).low);
      } else if (meta.get(w).onStack) meta.get(v).low = Math.min(meta.get(v).low, meta.get(w).index);
    }
    if (meta.get(v).low === meta.get(v).index) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        meta.get(w).onStack = false;
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!meta.has(v)) visit(v);
  return found;
}

const serverFolder = (file) => {
  const parts = file.split(path.sep);
  if (parts[0] !== "server") return null;
  return parts.length > 2 ? parts[1] : "(root)";
};
const layerOf = (folder) => SERVER_LAYERS.findIndex((layer) => layer.includes(folder));

const graph = importGraph();
const problems = [];
for (const component of circles(graph)) problems.push(`import circle: ${component.join(" ↔ ")}`);

const pairs = new Map();
for (const [from, targets] of graph) {
  for (const to of targets) {
    const a = serverFolder(from);
    const b = serverFolder(to);
    if (!a || !b || a === b) continue;
    pairs.set(`${a} → ${b}`, (pairs.get(`${a} → ${b}`) ?? 0) + 1);
    const la = layerOf(a);
    const lb = layerOf(b);
    if (la < 0) problems.push(`server/${a}/ is in no layer: add it to SERVER_LAYERS in scripts/check-imports.mjs`);
    else if (lb < 0) problems.push(`server/${b}/ is in no layer: add it to SERVER_LAYERS in scripts/check-imports.mjs`);
    else if (lb < la) problems.push(`upward import: ${from} → ${to}`);
  }
}

if (process.argv.includes("--report")) {
  for (const [pair, count] of [...pairs].sort()) console.log(`${pair}: ${count}`);
  const mutual = [...pairs.keys()].filter((p) => {
    const [a, b] = p.split(" → ");
    return a < b && pairs.has(`${b} → ${a}`);
  });
  console.log(`folder pairs importing each other: ${mutual.length}${mutual.length ? ` (${mutual.join(", ")})` : ""}`);
}
const unique = [...new Set(problems)];
if (unique.length) {
  console.error(unique.join("\n"));
  console.error(`\n${unique.length} import problem(s): see docs/architecture.md "The layers".`);
  process.exit(1);
}
console.log(`imports: no circle in ${ROOTS.join(", ")} and no upward import in server/ (${graph.size} files)`);
