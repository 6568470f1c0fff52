import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  argsHash,
  canonicalJson,
  domainStateKey,
  extractFailureKey,
  globMatch,
  parentDir,
  parseMcpServer,
  sameCanonicalJson,
  toolStateKey,
} from "./failure-key";

const md5_8 = (s: string) => createHash("md5").update(s).digest("hex").slice(0, 8);

describe("extractFailureKey — default tool families", () => {
  it.each(["readFile", "writeFile", "updateFile", "removeFile", "Read", "Write", "Edit", "str_replace_editor"])(
    "file tool %s keys by parent directory of args.path",
    (tool) => {
      const k = extractFailureKey(tool, { path: "/etc/passwd" });
      expect(k.failureKey).toBe(`${tool}|path_prefix=/etc`);
      expect(k.params).toEqual({ path_prefix: "/etc" });
      expect(k.domain).toBeNull();
      expect(k.kind).toBe("path");
    },
  );

  it("file tools fall back to args.file_path", () => {
    expect(extractFailureKey("Read", { file_path: "/home/u/project/src/a.ts" }).failureKey).toBe(
      "Read|path_prefix=/home/u/project/src",
    );
  });

  it("parent dir edge cases behave like Python Path.parent", () => {
    expect(parentDir("/etc/passwd")).toBe("/etc");
    expect(parentDir("/etc/")).toBe("/");
    expect(parentDir("/")).toBe("/");
    expect(parentDir("file.txt")).toBe(".");
    expect(parentDir("")).toBe(".");
    expect(parentDir("a/b/c.txt")).toBe("a/b");
    expect(parentDir("/tmp/x/")).toBe("/tmp");
    expect(extractFailureKey("readFile", {}).failureKey).toBe("readFile|path_prefix=.");
  });

  it.each(["http_request", "fetch", "WebFetch"])("HTTP tool %s keys by host and first path segment", (tool) => {
    const k = extractFailureKey(tool, { url: "https://api.example.com/v1/data?x=1" });
    expect(k.failureKey).toBe(`${tool}|domain=api.example.com|path_prefix=v1`);
    expect(k.domain).toBe("api.example.com");
    expect(k.kind).toBe("url");
  });

  it("HTTP: empty path prefix when the URL has no path, port kept in the host, host lower-cased", () => {
    expect(extractFailureKey("http_request", { url: "https://api.example.com" }).failureKey).toBe(
      "http_request|domain=api.example.com|path_prefix=",
    );
    expect(extractFailureKey("fetch", { url: "http://API.Example.com:8080/x/y" }).failureKey).toBe(
      "fetch|domain=api.example.com:8080|path_prefix=x",
    );
    expect(extractFailureKey("fetch", { url: "api.example.com/v2/z" }).failureKey).toBe(
      "fetch|domain=api.example.com|path_prefix=v2",
    );
  });

  it("HTTP: a missing or unparsable URL gives empty params and no domain", () => {
    const k = extractFailureKey("http_request", {});
    expect(k.failureKey).toBe("http_request|domain=|path_prefix=");
    expect(k.domain).toBeNull();
  });

  it.each(["bash", "Bash", "execute_bash", "shell"])("command tool %s keys by the first word", (tool) => {
    const k = extractFailureKey(tool, { command: "  rm -rf /tmp/x " });
    expect(k.failureKey).toBe(`${tool}|command=rm`);
    expect(k.kind).toBe("command");
    expect(k.command).toBe("  rm -rf /tmp/x ");
  });

  it("command: sudo and env assignments are not skipped", () => {
    expect(extractFailureKey("bash", { command: "sudo rm -rf /" }).failureKey).toBe("bash|command=sudo");
    expect(extractFailureKey("bash", { command: "FOO=1 make" }).failureKey).toBe("bash|command=FOO=1");
    expect(extractFailureKey("bash", {}).failureKey).toBe("bash|command=");
  });

  it("MCP: server parsed from mcp_<server>_<tool> and mcp__<server>__<tool>", () => {
    expect(extractFailureKey("mcp_atlassian_search", {}).failureKey).toBe("mcp_atlassian_search|mcp_server=atlassian");
    expect(extractFailureKey("mcp_atlassian_create_issue", {}).failureKey).toBe(
      "mcp_atlassian_create_issue|mcp_server=atlassian",
    );
    expect(extractFailureKey("mcp__github__create_pull_request", {}).failureKey).toBe(
      "mcp__github__create_pull_request|mcp_server=github",
    );
    expect(parseMcpServer("mcp__my_server__do_thing")).toBe("my_server");
    expect(parseMcpServer("mcp_")).toBeNull();
    expect(parseMcpServer("readFile")).toBeNull();
  });

  it("MCP precedence: event.service > args._mcp_server > parsed name", () => {
    expect(extractFailureKey("mcp_atlassian_search", { _mcp_server: "jira" }, { service: "confluence" }).params).toEqual({
      mcp_server: "confluence",
    });
    expect(extractFailureKey("mcp_atlassian_search", { _mcp_server: "jira" }).params).toEqual({ mcp_server: "jira" });
    expect(extractFailureKey("mcp_atlassian_search", {}).params).toEqual({ mcp_server: "atlassian" });
    expect(extractFailureKey("mcp_atlassian_search", {}, { service: "" }).params).toEqual({ mcp_server: "atlassian" });
  });

  it("other tools key by args_hash = first 8 hex of MD5 of canonical JSON", () => {
    const args = { b: 2, a: { d: [1, { z: 1, y: 2 }], c: "x" } };
    const k = extractFailureKey("grep", args);
    const expected = md5_8('{"a":{"c":"x","d":[1,{"y":2,"z":1}]},"b":2}');
    expect(k.failureKey).toBe(`grep|args_hash=${expected}`);
    expect(k.argsHash).toBe(expected);
    expect(k.kind).toBe("hash");
  });
});

describe("domain of a call", () => {
  it("event.domain wins, then URL host, then MCP server, then null", () => {
    expect(extractFailureKey("http_request", { url: "https://a.com/x" }, { domain: "custom" }).domain).toBe("custom");
    expect(extractFailureKey("http_request", { url: "https://a.com/x" }).domain).toBe("a.com");
    expect(extractFailureKey("mcp_atlassian_search", {}).domain).toBe("atlassian");
    expect(extractFailureKey("mcp_atlassian_search", {}, { service: "jira" }).domain).toBe("jira");
    expect(extractFailureKey("bash", { command: "ls" }).domain).toBeNull();
    expect(extractFailureKey("grep", { q: 1 }, { domain: "search" }).domain).toBe("search");
  });
});

describe("workspace extractor rules", () => {
  it("each kind reads the configured field", () => {
    const ex = [
      { tool: "my_read*", kind: "path" as const, field: "target" },
      { tool: "call_api", kind: "url" as const, field: "endpoint" },
      { tool: "run_*", kind: "command" as const, field: "cmd" },
      { tool: "tool_?", kind: "mcp" as const, field: "server" },
      { tool: "search", kind: "hash" as const, field: "query" },
      { tool: "search_all", kind: "hash" as const, field: "*" },
    ];
    expect(extractFailureKey("my_reader", { target: "/var/log/syslog" }, {}, ex).failureKey).toBe(
      "my_reader|path_prefix=/var/log",
    );
    const url = extractFailureKey("call_api", { endpoint: "https://svc.io/api/x" }, {}, ex);
    expect(url.failureKey).toBe("call_api|domain=svc.io|path_prefix=api");
    expect(url.domain).toBe("svc.io");
    const cmd = extractFailureKey("run_shell", { cmd: "git status" }, {}, ex);
    expect(cmd.failureKey).toBe("run_shell|command=git");
    expect(cmd.kind).toBe("command");
    const mcp = extractFailureKey("tool_x", { server: "slack" }, {}, ex);
    expect(mcp.failureKey).toBe("tool_x|mcp_server=slack");
    expect(mcp.domain).toBe("slack");
    expect(extractFailureKey("search", { query: "q", page: 2 }, {}, ex).failureKey).toBe(
      `search|args_hash=${md5_8('"q"')}`,
    );
    expect(extractFailureKey("search_all", { query: "q", page: 2 }, {}, ex).failureKey).toBe(
      `search_all|args_hash=${argsHash({ page: 2, query: "q" })}`,
    );
  });

  it("first matching rule wins, and rules win over the defaults", () => {
    const ex = [
      { tool: "bash", kind: "hash" as const, field: "*" },
      { tool: "b*", kind: "command" as const, field: "command" },
    ];
    expect(extractFailureKey("bash", { command: "ls" }, {}, ex).failureKey).toBe(`bash|args_hash=${argsHash({ command: "ls" })}`);
    expect(extractFailureKey("bash", { command: "ls" }, {}, []).failureKey).toBe("bash|command=ls");
  });

  it("non-matching rules fall through to the defaults", () => {
    const ex = [{ tool: "other", kind: "hash" as const, field: "*" }];
    expect(extractFailureKey("readFile", { path: "/a/b" }, {}, ex).failureKey).toBe("readFile|path_prefix=/a");
  });

  it("globs are anchored and escape regex characters", () => {
    expect(globMatch("mcp_*", "mcp_x_y")).toBe(true);
    expect(globMatch("mcp_*", "xmcp_x")).toBe(false);
    expect(globMatch("a.b", "axb")).toBe(false);
    expect(globMatch("a.b", "a.b")).toBe(true);
    expect(globMatch("t?ol", "tool")).toBe(true);
  });
});

describe("canonical JSON and args hash", () => {
  it("sorts keys recursively, keeps array order", () => {
    expect(canonicalJson({ b: 1, a: [{ d: 1, c: 2 }, 3] })).toBe('{"a":[{"c":2,"d":1},3],"b":1}');
  });

  it("hash is independent of key order", () => {
    expect(argsHash({ a: 1, b: { c: 2, d: 3 } })).toBe(argsHash({ b: { d: 3, c: 2 }, a: 1 }));
    expect(argsHash({ a: [1, 2] })).not.toBe(argsHash({ a: [2, 1] }));
    expect(argsHash({})).toBe(md5_8("{}"));
  });

  it("property: any permutation of keys gives the same hash", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (obj) => {
        const reversed = Object.fromEntries(Object.entries(obj).reverse());
        expect(argsHash(reversed)).toBe(argsHash(obj));
        expect(argsHash(obj)).toMatch(/^[0-9a-f]{8}$/);
      }),
    );
  });
});

describe("sameCanonicalJson (a result's args against its call's)", () => {
  /** A deep copy with every object's keys in reverse order. */
  const reordered = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(reordered) : v !== null && typeof v === "object" ? Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, reordered(x)])) : v;

  it("true for a copy with keys in any order; true only when the canonical JSON is the same", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        expect(sameCanonicalJson(a, reordered(JSON.parse(JSON.stringify(a))))).toBe(true);
        if (sameCanonicalJson(a, b)) expect(canonicalJson(b)).toBe(canonicalJson(a));
      }),
      { numRuns: 500 },
    );
  });

  it("false for a changed value, an extra key, a longer array, or what is not plain JSON", () => {
    expect(sameCanonicalJson({ url: "https://a/1", method: "GET" }, { method: "GET", url: "https://a/1" })).toBe(true);
    expect(sameCanonicalJson({ url: "https://a/1" }, { url: "https://a/2" })).toBe(false);
    expect(sameCanonicalJson({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(sameCanonicalJson({ a: 1, b: undefined }, { a: 1 })).toBe(true); // canonicalJson drops undefined
    expect(sameCanonicalJson([1, 2], [1, 2, 3])).toBe(false);
    expect(sameCanonicalJson({ a: [1] }, { a: { 0: 1 } })).toBe(false);
    expect(sameCanonicalJson({ a: 1 }, { a: "1" })).toBe(false);
    expect(sameCanonicalJson({ a: NaN }, { a: NaN })).toBe(false); // unsure: computed again
    const d = new Date(0);
    expect(sameCanonicalJson({ d }, { d })).toBe(false);
  });
});

describe("level keys", () => {
  it("formats domain and tool state keys", () => {
    expect(domainStateKey("atlassian")).toBe("@domain:atlassian");
    expect(toolStateKey("bash")).toBe("@tool:bash");
  });
});
