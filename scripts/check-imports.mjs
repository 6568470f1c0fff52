#!/usr/bin/env node
/**
 * Fails on an import circle in server/, db/, app/, components/ or lib/; on an import that runs
 * upward between server/'s folders (the layers of docs/architecture.md); and on an export of those
 * folders that no other file imports (tests, e2e, bench and scripts count as readers). Type-only
 * imports count: a circle of types is still a circle to read. Run by `npm test`
 * (scripts/test-all.sh); `node scripts/check-imports.mjs --report` also lists the folder pairs of
 * server/.
 */
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";

const ts = createRequire(import.meta.url)("typescript");
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const ROOTS = ["server", "db", "app", "components", "lib"];
/** Where readers of those folders' exports live besides the folders themselves. */
const READER_ROOTS = ["tests", "e2e", "bench", "scripts", "instrumentation.ts", "proxy.ts"];

/**
 * server/'s layers, top first: a file may import its own folder and the layers below it. The files
 * directly in server/ (runtime, auth, headless init) are the layer "(root)".
 */
const SERVER_LAYERS = [
  ["agent-api"],
  ["mcp"],
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

/** Next reads these exports of its special files (pages, layouts, routes…) without an import. */
const NEXT_SPECIAL_FILE = /^app\/(?:.*\/)?(?:page|layout|route|error|global-error|not-found|loading|template|default)\.tsx?$/;
const NEXT_SPECIAL_EXPORTS = new Set([
  "default", "metadata", "generateMetadata", "viewport", "generateViewport", "dynamic", "dynamicParams", "revalidate",
  "fetchCache", "runtime", "preferredRegion", "maxDuration", "generateStaticParams",
  "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS",
]);

function sourceFiles(roots, pattern) {
  const files = [];
  const walk = (rel) => {
    const full = path.join(root, rel);
    if (!fs.existsSync(full)) return;
    if (!fs.statSync(full).isDirectory()) {
      if (pattern.test(rel) && !rel.endsWith(".d.ts")) files.push(rel);
      return;
    }
    for (const entry of fs.readdirSync(full, { withFileTypes: true })) {
      if (entry.name !== "node_modules") walk(path.join(rel, entry.name));
    }
  };
  for (const r of roots) walk(r);
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

const modifiersOf = (node) => (ts.canHaveModifiers(node) ? (ts.getModifiers(node) ?? []) : []);
const hasModifier = (node, kind) => modifiersOf(node).some((m) => m.kind === kind);

/**
 * One pass over a file's top-level statements: the files it imports, the names it exports, and
 * the names it reads from each file it imports ("*": all of them — a namespace import, `export *`
 * or an `import("…")`).
 */
function scanFile(file, { importsOnly = false } = {}) {
  const text = fs.readFileSync(path.join(root, file), "utf8");
  // A file read only for its imports is parsed up to its last `… from "…"` line: the rest is code.
  const lastFrom = importsOnly ? [...text.matchAll(/^.*\bfrom\s*["'][^"'\n]+["'];?[ \t]*$/gm)].at(-1) : null;
  const source = ts.createSourceFile(
    file,
    lastFrom ? text.slice(0, lastFrom.index + lastFrom[0].length) : importsOnly ? "" : text,
    { languageVersion: ts.ScriptTarget.Latest, jsDocParsingMode: ts.JSDocParsingMode.ParseNone },
    false,
    file.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
  );
  const imports = new Set();
  const exports = new Set();
  /** Exported interfaces and type aliases: a type named in an exported signature is read through it. */
  const typeExports = new Set();
  const reads = new Map();
  const read = (specifier, name) => {
    const target = resolveImport(file, specifier);
    if (!target) return;
    imports.add(target);
    if (!reads.has(target)) reads.set(target, new Set());
    if (name) reads.get(target).add(name);
  };
  for (const st of source.statements) {
    if (ts.isImportDeclaration(st) && ts.isStringLiteral(st.moduleSpecifier)) {
      const spec = st.moduleSpecifier.text;
      const clause = st.importClause;
      read(spec, null);
      if (clause?.name) read(spec, "default");
      const bindings = clause?.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) read(spec, "*");
      else if (bindings) for (const el of bindings.elements) read(spec, (el.propertyName ?? el.name).text);
    } else if (ts.isExportDeclaration(st)) {
      const spec = st.moduleSpecifier && ts.isStringLiteral(st.moduleSpecifier) ? st.moduleSpecifier.text : null;
      if (spec) read(spec, null);
      if (!st.exportClause) {
        if (spec) read(spec, "*");
      } else if (ts.isNamespaceExport(st.exportClause)) {
        if (spec) read(spec, "*");
        exports.add(st.exportClause.name.text);
      } else {
        for (const el of st.exportClause.elements) {
          (st.isTypeOnly || el.isTypeOnly ? typeExports : exports).add(el.name.text);
          if (spec) read(spec, (el.propertyName ?? el.name).text);
        }
      }
    } else if (ts.isExportAssignment(st)) {
      exports.add("default");
    } else if (hasModifier(st, ts.SyntaxKind.ExportKeyword)) {
      if (hasModifier(st, ts.SyntaxKind.DefaultKeyword)) exports.add("default");
      else if (ts.isInterfaceDeclaration(st) || ts.isTypeAliasDeclaration(st)) typeExports.add(st.name.text);
      else if (ts.isVariableStatement(st)) {
        for (const d of st.declarationList.declarations) if (ts.isIdentifier(d.name)) exports.add(d.name.text);
      } else if (st.name) exports.add(st.name.text);
    }
  }
  // `await import("…")` and `typeof import("…")`: every export of the file counts as read.
  for (const m of text.matchAll(/import\(\s*(?:\/\*[^*]*\*\/\s*)?["'`]([^"'`]+)["'`]\s*\)/g)) read(m[1], "*");
  return { imports: [...imports], exports, typeExports, reads };
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

/**
 * Parsing is most of the time: the files are shared between this thread and one worker (a thread
 * per core on the 2-core machines this runs on).
 */
async function scanAll() {
  const checked = sourceFiles(ROOTS, /\.tsx?$/);
  const jobs = [...checked.map((file) => [file, false]), ...sourceFiles(READER_ROOTS, /\.(tsx?|mjs)$/).map((file) => [file, true])];
  const theirs = jobs.filter((_, i) => i % 2 === 1);
  const worker = new Worker(new URL(import.meta.url), { workerData: theirs });
  const fromWorker = new Promise((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  });
  const scans = new Map(jobs.filter((_, i) => i % 2 === 0).map(([file, importsOnly]) => [file, scanFile(file, { importsOnly })]));
  for (const [file, scan] of await fromWorker) scans.set(file, scan);
  await worker.terminate();
  return { checked, scans };
}

if (!isMainThread) {
  parentPort.postMessage(workerData.map(([file, importsOnly]) => [file, scanFile(file, { importsOnly })]));
} else {
  const { checked, scans } = await scanAll();
  report(checked, scans);
}

function report(checked, scans) {
  const graph = new Map(checked.map((file) => [file, scans.get(file).imports]));

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

  // An export is read when another file imports it by name, or all of its file's names at once.
  const readNames = new Map();
  for (const [reader, scan] of scans) {
    for (const [target, names] of scan.reads) {
      if (target === reader) continue;
      if (!readNames.has(target)) readNames.set(target, new Set());
      for (const n of names) readNames.get(target).add(n);
    }
  }
  for (const file of checked) {
    const names = readNames.get(file) ?? new Set();
    if (names.has("*")) continue;
    for (const name of scans.get(file).exports) {
      if (names.has(name)) continue;
      if (NEXT_SPECIAL_FILE.test(file) && NEXT_SPECIAL_EXPORTS.has(name)) continue;
      problems.push(`export no other file imports: ${file} ${name} (drop the export, or delete it when unused)`);
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
  console.log(`imports: no circle in ${ROOTS.join(", ")}, no upward import in server/, no export without a reader (${graph.size} files)`);
}
