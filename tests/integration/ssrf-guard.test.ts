/**
 * The notification SSRF guard: every special-purpose range (IANA IPv4 and IPv6 registries) is
 * refused on save and at delivery, IPv4 embedded in IPv6 is judged as the IPv4 it carries, and the
 * delivery connects to exactly the address it checked (a name that answers public, then private,
 * is never connected to the private one).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { LookupAddress } from "node:dns";
import { eq } from "drizzle-orm";
import { useTestApp } from "../support/use-test-app";
import { uid } from "../support/agent";
import { notificationChannel, notificationOutbox } from "@/db/schema";
import { SYSTEM_ACTOR } from "@/server/services/audit";
import { createChannel, sendTestNotification } from "@/server/services/notification-channels";
import { checkChannelUrl, refusedAddressReason, type Resolver } from "@/server/notifications/url-guard";

/** [address, what it is]: each must be refused. */
const REFUSED: [string, string][] = [
  ["0.0.0.0", "this network"],
  ["0.1.2.3", "this network"],
  ["10.0.0.1", "private-use"],
  ["100.64.0.1", "carrier-grade NAT"],
  ["100.127.255.254", "carrier-grade NAT"],
  ["127.0.0.1", "loopback"],
  ["127.255.255.254", "loopback"],
  ["169.254.169.254", "link-local (cloud metadata)"],
  ["172.16.0.1", "private-use"],
  ["172.31.255.254", "private-use"],
  ["192.0.0.8", "IETF protocol assignments"],
  ["192.0.2.5", "TEST-NET-1"],
  ["192.31.196.1", "AS112"],
  ["192.52.193.1", "AMT"],
  ["192.88.99.1", "6to4 relay anycast"],
  ["192.168.1.1", "private-use"],
  ["192.175.48.1", "direct delegation AS112"],
  ["198.18.0.1", "benchmarking"],
  ["198.19.255.254", "benchmarking"],
  ["198.51.100.7", "TEST-NET-2"],
  ["203.0.113.9", "TEST-NET-3"],
  ["224.0.0.1", "multicast"],
  ["239.255.255.250", "multicast"],
  ["240.0.0.1", "reserved"],
  ["255.255.255.255", "limited broadcast"],
  ["::", "unspecified"],
  ["::1", "loopback"],
  ["::ffff:127.0.0.1", "IPv4-mapped loopback"],
  ["::ffff:7f00:1", "IPv4-mapped loopback, hex"],
  ["::ffff:a9fe:a9fe", "IPv4-mapped link-local"],
  ["::ffff:0:10.0.0.1", "IPv4-translated private"],
  ["::ffff:0:c0a8:101", "IPv4-translated private, hex"],
  ["::127.0.0.1", "IPv4-compatible loopback"],
  ["::a00:1", "IPv4-compatible private, hex"],
  ["64:ff9b::127.0.0.1", "NAT64 loopback"],
  ["64:ff9b::a9fe:a9fe", "NAT64 link-local"],
  ["64:ff9b::c612:1", "NAT64 benchmarking"],
  ["64:ff9b:1::1", "local-use NAT64"],
  ["2002:7f00:1::1", "6to4 of loopback"],
  ["2002:a00:1::", "6to4 of private-use"],
  ["2002:c000:201::1", "6to4 of TEST-NET-1"],
  ["100::1", "discard-only"],
  ["2001::1", "Teredo"],
  ["2001:2::1", "benchmarking"],
  ["2001:db8::1", "documentation"],
  ["2620:4f:8000::1", "direct delegation AS112"],
  ["3fff::1", "documentation"],
  ["5f00::1", "SRv6 SIDs"],
  ["fc00::1", "unique-local"],
  ["fd12:3456::1", "unique-local"],
  ["fe80::1", "link-local"],
  ["fec0::1", "site-local"],
  ["ff02::1", "multicast"],
  ["4000::1", "outside global unicast"],
];

/** [address, what it is]: each must be allowed. */
const ALLOWED: [string, string][] = [
  ["8.8.8.8", "public"],
  ["1.1.1.1", "public"],
  ["100.63.255.255", "just below carrier-grade NAT"],
  ["100.128.0.1", "just above carrier-grade NAT"],
  ["172.15.255.255", "just below 172.16/12"],
  ["172.32.0.1", "just above 172.16/12"],
  ["192.0.1.1", "just below 192.0.0/24 ranges"],
  ["198.17.255.255", "just below benchmarking"],
  ["198.20.0.1", "just above benchmarking"],
  ["223.255.255.254", "just below multicast"],
  ["::ffff:8.8.8.8", "IPv4-mapped public"],
  ["::ffff:0:8.8.8.8", "IPv4-translated public"],
  ["64:ff9b::8.8.8.8", "NAT64 of public"],
  ["64:ff9b::808:808", "NAT64 of public, hex"],
  ["2002:808:808::1", "6to4 of public"],
  ["2001:4860:4860::8888", "global unicast"],
  ["2606:4700:4700::1111", "global unicast"],
  ["2a00:1450:4001::1", "global unicast"],
];

describe("address table", () => {
  it.each(REFUSED)("refuses %s (%s)", (address) => {
    expect(refusedAddressReason(address)).not.toBeNull();
    const url = `http://${address.includes(":") ? `[${address}]` : address}:8080/hook`;
    expect(checkChannelUrl(url, false), url).toMatch(/private or reserved/);
    expect(checkChannelUrl(url, true), url).toBeNull();
  });
  it.each(ALLOWED)("allows %s (%s)", (address) => {
    expect(refusedAddressReason(address)).toBeNull();
    const url = `https://${address.includes(":") ? `[${address}]` : address}/hook`;
    expect(checkChannelUrl(url, false), url).toBeNull();
  });
  it("names the IPv4 an IPv6 form carries and the range it is in", () => {
    expect(refusedAddressReason("64:ff9b::a9fe:a9fe")).toMatch(/NAT64.*169\.254\.169\.254.*link-local/);
    expect(refusedAddressReason("2002:a00:1::")).toMatch(/6to4.*10\.0\.0\.1.*private-use/);
    expect(refusedAddressReason("198.18.0.1")).toMatch(/benchmarking \(198\.18\.0\.0\/15\)/);
  });
  it("refuses what is not an address (a zone index, garbage)", () => {
    expect(refusedAddressReason("fe80::1%eth0")).not.toBeNull();
    expect(refusedAddressReason("not-an-ip")).not.toBeNull();
  });
});

/** A real receiver on 127.0.0.1: records what reaches it. */
function startReceiver() {
  const requests: { host: string | undefined; body: string }[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      requests.push({ host: req.headers.host, body });
      res.writeHead(200).end("ok");
    });
  });
  return {
    requests,
    server,
    port: () => (server.address() as AddressInfo).port,
    start: () => new Promise<void>((r) => server.listen(0, "127.0.0.1", r)),
    stop: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

describe("delivery connects to the address it checked", () => {
  const app = useTestApp("pglite");
  const receiver = startReceiver();
  beforeAll(() => receiver.start());
  afterAll(() => receiver.stop());

  /** A resolver for one name that answers the given addresses in turn (the last one again after), counting lookups. */
  function resolverAnswering(name: string, ...answers: string[]) {
    const asked: string[] = [];
    const resolve: Resolver = async (hostname) => {
      asked.push(hostname);
      if (hostname !== name) throw Object.assign(new Error(`unknown ${hostname}`), { code: "ENOTFOUND" });
      const address = answers[Math.min(asked.length - 1, answers.length - 1)];
      return [{ address, family: address.includes(":") ? 6 : 4 } satisfies LookupAddress];
    };
    return { resolve, asked };
  }

  async function channelFor(host: string) {
    const ws = await app.seedWorkspace();
    const scope = { workspaceId: ws.workspaceId, organizationId: ws.organizationId, actor: SYSTEM_ACTOR };
    const url = `http://${host}:${receiver.port()}/hook`;
    expect(checkChannelUrl(url, false)).toBeNull(); // a name passes the save-time check
    const { channel } = await createChannel(app.db, scope, { name: "ops", type: "webhook", url, events: ["key_escalated"], minSeverity: "info", quietPeriodSeconds: 0 });
    return { scope, channel };
  }
  const lastAttempt = async (outboxId: string) => (await app.db.select().from(notificationOutbox).where(eq(notificationOutbox.id, outboxId)))[0];

  it("a name that answers a public address, then a private one, is never connected to the private one", async () => {
    const host = `rebind-${uid()}.example.com`;
    const { scope, channel } = await channelFor(host);
    const { resolve, asked } = resolverAnswering(host, "198.20.0.1", "127.0.0.1");
    receiver.requests.length = 0;
    const sent = await sendTestNotification(app.db, scope, channel.id, { allowPrivate: false, resolve, requestTimeoutMs: 400, baseUrl: "https://vigil.example.com" });
    expect(receiver.requests).toEqual([]);
    expect(sent.status).not.toBe("sent");
    expect(asked).toEqual([host]); // resolved once: the connection used the checked answer
  });

  it("a name that resolves to a private address is refused before any connection, and the log says why", async () => {
    const host = `private-${uid()}.example.com`;
    const { scope, channel } = await channelFor(host);
    for (const address of ["127.0.0.1", "::ffff:127.0.0.1", "64:ff9b::7f00:1"]) {
      receiver.requests.length = 0;
      const { resolve } = resolverAnswering(host, address);
      const sent = await sendTestNotification(app.db, scope, channel.id, { allowPrivate: false, resolve, requestTimeoutMs: 1_000 });
      expect(receiver.requests, address).toEqual([]);
      expect(sent, address).toMatchObject({ status: "pending", statusCode: null });
      expect((await lastAttempt(sent.outboxId)).lastResponse, address).toMatch(new RegExp(`^refused: Host ${host} resolves to .*loopback`));
    }
  });

  it("when allowed, the request reaches the resolved address with the channel's host name in Host", async () => {
    const host = `allowed-${uid()}.example.com`;
    const { scope, channel } = await channelFor(host);
    const { resolve, asked } = resolverAnswering(host, "127.0.0.1");
    receiver.requests.length = 0;
    const sent = await sendTestNotification(app.db, scope, channel.id, { allowPrivate: true, resolve, requestTimeoutMs: 2_000 });
    expect(sent).toMatchObject({ status: "sent", statusCode: 200 });
    expect(receiver.requests).toHaveLength(1);
    expect(receiver.requests[0].host).toBe(`${host}:${receiver.port()}`);
    expect(JSON.parse(receiver.requests[0].body)).toMatchObject({ test: true });
    expect(asked).toEqual([host]);
  });

  it("a literal private address in a saved URL is refused at delivery too", async () => {
    const { scope, channel } = await channelFor(`lit-${uid()}.example.com`);
    // The URL changed under the guard (saved while private targets were allowed).
    await app.db.update(notificationChannel).set({ url: `http://[::ffff:127.0.0.1]:${receiver.port()}/hook` }).where(eq(notificationChannel.id, channel.id));
    receiver.requests.length = 0;
    const sent = await sendTestNotification(app.db, scope, channel.id, { allowPrivate: false });
    expect(receiver.requests).toEqual([]);
    expect((await lastAttempt(sent.outboxId)).lastResponse).toMatch(/^refused: Points at a private or reserved address: .*IPv4-mapped.*127\.0\.0\.1/);
  });
});
