/**
 * Realistic traces of agents making progress: with the built-in configuration none of them may draw
 * a single pattern or nudge (SPEC 5 revision 2: "pause no agent that is making progress").
 */
import { describe, expect, it } from "vitest";
import { Trace } from "./trace";

describe("productive traces draw no nudge", () => {
  it("a coding agent reads twenty files, greps and globs, then edits (Claude Code tool names)", () => {
    const t = new Trace();
    t.user("Add a --json flag to the export command");
    t.text("Let me look at how the CLI is put together.");
    t.act("Glob", { pattern: "src/**/*.ts" }, { ok: Array.from({ length: 20 }, (_, i) => `src/m${i}.ts`) });
    t.act("Grep", { pattern: "export", path: "src" }, { ok: ["src/m3.ts:12", "src/m7.ts:4"] });
    for (let i = 0; i < 20; i++) t.act("Read", { file_path: `src/m${i}.ts`, description: `read module ${i}` }, { ok: `// module ${i}` });
    t.act("Grep", { pattern: "--csv", path: "src" }, { ok: ["src/m7.ts:30"] });
    t.text("The flag parsing lives in m7.ts; adding --json next to --csv.");
    t.act("Edit", { file_path: "src/m7.ts", old_string: "'--csv'", new_string: "'--csv', '--json'" }, { ok: "The file src/m7.ts has been updated." });
    t.act("Read", { file_path: "src/m7.ts" }, { ok: "// module 7 (edited)" }); // re-reading after an edit is fine
    t.act("Bash", { command: "npm test", timeout: 120000, description: "run the tests" }, { ok: "42 passing" });
    expect(t.effects).toEqual([]);
  });

  it("a test-fix loop where every run's output changes", () => {
    const t = new Trace();
    t.user("Make the test suite pass");
    const failures = ["3 failing: a, b, c", "2 failing: b, c", "1 failing: c"];
    for (const [i, f] of failures.entries()) {
      t.act("Bash", { command: "npm test" }, { error: f });
      t.act("Read", { file_path: `src/f${i}.ts` }, { ok: `source ${i}` });
      t.act("Edit", { file_path: `src/f${i}.ts`, old_string: `bug${i}`, new_string: `fix${i}` }, { ok: "updated" });
    }
    t.act("Bash", { command: "npm test" }, { ok: "all 120 passing" });
    expect(t.effects).toEqual([]);
  });

  it("a test-fix loop re-running the same command back to back while output changes (no edit in between)", () => {
    const t = new Trace();
    for (const out of ["building… 10%", "building… 55%", "build ok", "tests: 3 failing", "tests: 0 failing"]) {
      t.act("execute_command", { command: "npm run ci", task_progress: "2/5" }, { ok: out });
    }
    expect(t.effects).toEqual([]);
  });

  it("polling a job whose status changes", () => {
    const t = new Trace();
    for (const status of ["queued", "in_progress", "in_progress 30%", "in_progress 70%", "completed"]) {
      t.act("bash", { command: "gh run view 1234 --json status", request_id: `r${status}` }, { ok: { status } });
    }
    t.text("The CI run completed successfully.");
    expect(t.effects).toEqual([]);
  });

  it("a research agent paging through search results, each page different", () => {
    const t = new Trace();
    t.user("Collect every open issue about flaky tests");
    for (let page = 1; page <= 6; page++) {
      t.act("search_issues", { query: "flaky test is:open", page }, { ok: { page, items: [`#${page * 10}`, `#${page * 10 + 1}`] } });
    }
    t.act("search_issues", { query: "flaky test is:open", page: 7 }, { ok: { page: 7, items: [] } });
    t.text("Found 12 open issues about flaky tests.");
    expect(t.effects).toEqual([]);
  });

  it("polling a job through a read tool whose status changes, then acting on it", () => {
    const t = new Trace();
    const statuses = ["queued", "running 10%", "running 45%", "running 90%", "succeeded"];
    for (const [i, status] of statuses.entries()) t.act("get_job_status", { job_id: "j-77", attempt: i + 1 }, { ok: { status } });
    t.act("bash", { command: "curl -o out.json https://ci.example/jobs/j-77/artifact" }, { ok: "saved" });
    expect(t.effects).toEqual([]);
  });

  it("an OpenHands-style agent exploring with str_replace_editor view, then editing", () => {
    const t = new Trace();
    for (let i = 0; i < 8; i++) t.act("str_replace_editor", { command: "view", path: `/workspace/pkg/f${i}.py` }, { ok: `content ${i}` });
    t.act("str_replace_editor", { command: "str_replace", path: "/workspace/pkg/f3.py", old_str: "x", new_str: "y" }, { ok: "edited" });
    t.act("execute_bash", { command: "pytest -q" }, { ok: "8 passed" });
    expect(t.effects).toEqual([]);
  });
});
