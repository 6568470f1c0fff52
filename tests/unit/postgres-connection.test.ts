import { describe, expect, it } from "vitest";
import { postgresConnection } from "@/db/client";

describe("postgresConnection (libpq's ?host= and ?port= for postgres-js)", () => {
  it("leaves a plain URL as it is", () => {
    expect(postgresConnection("postgres://u:p@db.internal:5433/vigil")).toEqual({ url: "postgres://u:p@db.internal:5433/vigil", options: {} });
    expect(postgresConnection("postgres://u@db/vigil?sslmode=require")).toEqual({ url: "postgres://u@db/vigil?sslmode=require", options: {} });
  });

  it("takes a socket directory and a port out of the query, keeping the other parameters", () => {
    expect(postgresConnection("postgres://vigil@localhost/vigil?host=/var/run/postgresql&application_name=vigil&port=5434")).toEqual({
      url: "postgres://vigil@localhost/vigil?application_name=vigil",
      options: { host: "/var/run/postgresql", port: 5434 },
    });
    expect(postgresConnection("postgres://vigil@localhost/vigil?host=%2Ftmp%2Fpg")).toEqual({ url: "postgres://vigil@localhost/vigil", options: { host: "/tmp/pg" } });
  });

  it("takes a host name from the query too, as libpq does", () => {
    expect(postgresConnection("postgres://vigil@localhost/vigil?host=db.internal")).toEqual({ url: "postgres://vigil@localhost/vigil", options: { host: "db.internal" } });
  });

  it("refuses a port that is not one, naming it", () => {
    expect(() => postgresConnection("postgres://vigil@localhost/vigil?port=abc")).toThrow(/DATABASE_URL: port must be a number from 1 to 65535, got "abc"/);
    expect(() => postgresConnection("postgres://vigil@localhost/vigil?port=70000")).toThrow(/port/);
  });
});
