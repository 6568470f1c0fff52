/** Tables in docs/ that are generated from a registry stay equal to it. */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { riskRulesMarkdownTable } from "@/server/engine/risk-rules";
import { stallPatternsMarkdownTable } from "@/server/engine/stall-patterns";

const doc = (name: string) => readFileSync(path.resolve(import.meta.dirname, "../../docs", name), "utf8");

describe("docs tables", () => {
  it("docs/configuration.md lists the built-in risk rules exactly as server/engine/risk-rules.ts declares them", () => {
    expect(doc("configuration.md")).toContain(riskRulesMarkdownTable());
  });

  it("docs/agent-api.md lists the stall patterns, what each counts and its ladder, as server/engine/stall-patterns/ declares them", () => {
    expect(doc("agent-api.md")).toContain(stallPatternsMarkdownTable());
  });
});
