import { describe, expect, it } from "vitest";
import { serverArgs, serverNodeFlags } from "../../scripts/server-command.mjs";

describe("the command every launcher starts the server with", () => {
  it("serves the build with a larger young generation", () => {
    expect(serverArgs(3000, "0.0.0.0", "")).toEqual(["--max-semi-space-size=32", "scripts/serve.mjs", "-p", "3000", "-H", "0.0.0.0"]);
  });

  it("leaves the young generation to NODE_OPTIONS when it sets one", () => {
    expect(serverNodeFlags("--max-old-space-size=512 --max-semi-space-size=16")).toEqual([]);
    expect(serverArgs("8080", "127.0.0.1", "--max-semi-space-size=8")).toEqual(["scripts/serve.mjs", "-p", "8080", "-H", "127.0.0.1"]);
    expect(serverNodeFlags("--max-old-space-size=512")).toEqual(["--max-semi-space-size=32"]);
  });
});
