import { describe, expect, it } from "vitest";
import { MAX_REGEX_LENGTH, UnsafePatternError, checkRegexSafe, compileBuiltInRegex, compileGlob, compileSafeRegex } from "./safe-pattern";

describe("checkRegexSafe", () => {
  it.each([
    ["(a)\\1", "backreference"],
    ["(?<x>a)\\k<x>", "backreference"],
    ["a(?=b)", "lookaround"],
    ["a(?!b)", "lookaround"],
    ["(?<=a)b", "lookaround"],
    ["(?<!a)b", "lookaround"],
    ["(unclosed", "not a valid regular expression"],
    ["[z-a]", "not a valid regular expression"],
    ["a".repeat(MAX_REGEX_LENGTH + 1), "longer than 512"],
    ["", "empty"],
    ["\\p{L}", "\\p"],
    ["[^]", "[^]"],
    ["a{1001}", "not supported by linear-time matching"],
  ])("%j is refused (%s)", (source, problem) => {
    expect(checkRegexSafe(source)).toContain(problem);
    expect(() => compileSafeRegex(source)).toThrow(UnsafePatternError);
  });

  it.each(["(a+)+$", "(a|aa)+$", "^(\\w+\\s?)*$", "(.*a){12}$", "\\bterraform\\s+destroy\\b", "a".repeat(MAX_REGEX_LENGTH)])("%j is accepted", (source) => {
    expect(checkRegexSafe(source)).toBeNull();
  });
});

describe("compileSafeRegex", () => {
  it("keeps JavaScript's meaning: \\s covers Unicode spaces, . stops at \\r, [ inside a class is a literal, escapes", () => {
    expect(compileSafeRegex("a\\sb").test("a\u00a0b")).toBe(true);
    expect(compileSafeRegex("a.b").test("a\rb")).toBe(false);
    expect(compileSafeRegex("a.b").test("a b")).toBe(true);
    expect(compileSafeRegex("[[:a]+$").test("x:[a")).toBe(true);
    expect(compileSafeRegex("[[:alpha:]]").test("b")).toBe(false);
    expect(compileSafeRegex("\\u0041\\/\\ \\.").test("A/ .")).toBe(true);
    expect(compileSafeRegex("\\u0041\\/\\ \\.").test("A/ x")).toBe(false);
    expect(compileSafeRegex("^rm$", { caseInsensitive: true }).test("RM")).toBe(true);
    expect(compileSafeRegex("^rm$").test("RM")).toBe(false);
  });

  // A backtracking engine would not finish these within the test's time-out (the thread-hold bound
  // itself is measured through the server by tests/integration/adversarial-input.test.ts).
  it("answers input that makes a backtracking engine exponential", () => {
    const input = "a".repeat(100_000) + "!";
    expect(compileSafeRegex("(a+)+$").test(input)).toBe(false);
    expect(compileSafeRegex("(a|aa)+$").test(input)).toBe(false);
    expect(compileSafeRegex("^(\\w+\\s?)*$").test(input)).toBe(false);
    expect(compileSafeRegex("(.*a){12}$").test(input)).toBe(false);
    expect(compileSafeRegex("(.*a){12}!$").test(input)).toBe(true);
  });

  it("replaceAll replaces leftmost matches with their groups, as String.prototype.replace does", () => {
    const re = compileBuiltInRegex("\\b(key)=(\\w+)");
    const input = "key=abc x key=d keyx=e";
    expect(re.replaceAll(input, (_m, name, value) => `${name}=<${value.length}>`)).toBe(input.replace(/\b(key)=(\w+)/g, (_m, n: string, v: string) => `${n}=<${v.length}>`));
  });
});

describe("compileGlob", () => {
  it("any mode: * any run (slashes too), ? one character, whole input, case-sensitive unless asked", () => {
    const g = compileGlob("git push --force*", { star: "any" });
    expect(g.test("git push --force origin feature/x")).toBe(true);
    expect(g.test("git push --forc")).toBe(false);
    expect(compileGlob("mcp_*", { star: "any" }).test("mcp_x/y")).toBe(true);
    expect(compileGlob("mcp_*", { star: "any" }).test("xmcp_x")).toBe(false);
    expect(compileGlob("t?ol", { star: "any" }).test("tool")).toBe(true);
    expect(compileGlob("t?ol", { star: "any" }).test("tol")).toBe(false);
    expect(compileGlob("a.b", { star: "any" }).test("axb")).toBe(false);
    expect(compileGlob("BASH", { star: "any" }).test("bash")).toBe(false);
    expect(compileGlob("BASH", { star: "any", caseInsensitive: true }).test("bash")).toBe(true);
    expect(compileGlob("Ba*", { star: "any", caseInsensitive: true }).test("bASH")).toBe(true);
  });

  it("path mode: * stops at /, ** crosses it (SPEC 4.5)", () => {
    expect(compileGlob("src/*.ts", { star: "path" }).test("src/a.ts")).toBe(true);
    expect(compileGlob("src/*.ts", { star: "path" }).test("src/a/b.ts")).toBe(false);
    expect(compileGlob("src/**.ts", { star: "path" }).test("src/a/b.ts")).toBe(true);
    expect(compileGlob("**/.ssh/**", { star: "path" }).test("/home/u/.ssh/id_rsa")).toBe(true);
    expect(compileGlob("https://prod.example.com/**", { star: "path" }).test("https://prod.example.com/v1/orders")).toBe(true);
    expect(compileGlob("https://prod.example.com/*", { star: "path" }).test("https://prod.example.com/v1/orders")).toBe(false);
    expect(compileGlob("**/*.pem", { star: "path" }).test("/etc/ssl/key.pem")).toBe(true);
    expect(compileGlob("**/*.pem", { star: "path" }).test("/etc/ssl/key.pem/x")).toBe(false);
    expect(compileGlob("a?c", { star: "path" }).test("a/c")).toBe(true);
  });

  it("matches characters, not UTF-16 units, and literals of any kind", () => {
    expect(compileGlob("?", { star: "any" }).test("😀")).toBe(true);
    expect(compileGlob("(a)[b]{c}+$^\\", { star: "any" }).test("(a)[b]{c}+$^\\")).toBe(true);
    expect(compileGlob("", { star: "any" }).test("")).toBe(true);
    expect(compileGlob("*", { star: "path" }).test("")).toBe(true);
  });

  it("agrees with a backtracking reference on many small cases (property)", () => {
    const reference = (glob: string, s: string, path: boolean) => {
      let re = "^";
      for (let i = 0; i < glob.length; i++) {
        const ch = glob[i];
        if (ch === "*") {
          let run = 1;
          while (glob[i + 1] === "*") (run++, i++);
          re += run > 1 || !path ? "[\\s\\S]*" : "[^/]*";
        } else if (ch === "?") re += "[\\s\\S]";
        else re += ch.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
      }
      return new RegExp(re + "$").test(s);
    };
    const alphabet = ["a", "b", "/", "*", "?"];
    let seed = 7;
    const pick = (xs: string[]) => xs[(seed = (seed * 1103515245 + 12345) % 2147483648) % xs.length];
    for (let i = 0; i < 1500; i++) {
      const glob = Array.from({ length: 1 + (i % 7) }, () => pick(alphabet)).join("");
      const input = Array.from({ length: i % 9 }, () => pick(["a", "b", "/"])).join("");
      for (const star of ["any", "path"] as const) expect(compileGlob(glob, { star }).test(input), `${glob} ${input} ${star}`).toBe(reference(glob, input, star === "path"));
    }
  });

  it("compiles once per pattern and options, and answers where a regex translation is polynomial", () => {
    expect(compileGlob("*a*", { star: "any" })).toBe(compileGlob("*a*", { star: "any" }));
    expect(compileGlob("*a*", { star: "any" })).not.toBe(compileGlob("*a*", { star: "path" }));
    const many = compileGlob("*a".repeat(60) + "b", { star: "any" });
    expect(many.test("a".repeat(100_000))).toBe(false);
    expect(many.test("a".repeat(100_000) + "b")).toBe(true);
  });
});
