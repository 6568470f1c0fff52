/** Test helpers for invitation emails: a small SMTP server on a real socket, and a port nothing listens on. */
import net from "node:net";

export interface Received {
  auth: string | null;
  from: string;
  to: string[];
  data: string;
}

/** A minimal SMTP server (RFC 5321: EHLO, AUTH PLAIN, MAIL, RCPT, DATA, QUIT) keeping what it receives. */
export async function smtpReceiver() {
  const messages: Received[] = [];
  const server = net.createServer((socket) => {
    socket.setEncoding("utf8");
    let buffer = "";
    let inData = false;
    let current: Received = { auth: null, from: "", to: [], data: "" };
    const reply = (line: string) => socket.write(line + "\r\n");
    reply("220 receiver.test ESMTP");
    socket.on("data", (chunk: string) => {
      buffer += chunk;
      for (;;) {
        if (inData) {
          const end = buffer.indexOf("\r\n.\r\n");
          if (end < 0) return;
          current.data = buffer.slice(0, end).replace(/^\.\./gm, ".");
          buffer = buffer.slice(end + 5);
          inData = false;
          messages.push(current);
          current = { auth: current.auth, from: "", to: [], data: "" };
          reply("250 2.0.0 queued");
          continue;
        }
        const nl = buffer.indexOf("\r\n");
        if (nl < 0) return;
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 2);
        const verb = line.split(" ")[0].toUpperCase();
        if (verb === "EHLO") socket.write("250-receiver.test\r\n250-AUTH PLAIN\r\n250 8BITMIME\r\n");
        else if (verb === "HELO") reply("250 receiver.test");
        else if (verb === "AUTH") {
          current.auth = Buffer.from(line.split(" ")[2] ?? "", "base64").toString("utf8");
          reply("235 2.7.0 authenticated");
        } else if (verb === "MAIL") {
          current.from = line.slice(10).trim();
          reply("250 2.1.0 ok");
        } else if (verb === "RCPT") {
          current.to.push(line.slice(8).trim());
          reply("250 2.1.5 ok");
        } else if (verb === "DATA") {
          inData = true;
          reply("354 go ahead");
        } else if (verb === "QUIT") {
          reply("221 bye");
          socket.end();
        } else reply("250 ok");
      }
    });
    socket.on("error", () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return { port, messages, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** A port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}
