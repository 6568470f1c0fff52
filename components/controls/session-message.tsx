"use client";

/** A message to a running agent (sessions.message): queued, then delivered once as guidance on its next call. */
import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useId, useState } from "react";
import { Button, Field, FormError, Textarea } from "@/components/form";
import { Icon } from "@/components/icons";
import { RelativeTime } from "@/components/relative-time";
import { toast } from "@/components/toast";
import { errorMessage, useTRPC } from "@/lib/trpc/client";
import { NEEDS_MEMBER } from "./gated-button";
import "./controls.css";

const MAX_MESSAGE = 4096;

export interface MessageView {
  id: number;
  text: string;
  by: string | null;
  queuedAt: string;
  deliveredAt: string | null;
}

export function SessionMessageBox({ slug, sessionId, canOperate, running, messages }: { slug: string; sessionId: string; canOperate: boolean; running: boolean; messages: MessageView[] }) {
  const trpc = useTRPC();
  const router = useRouter();
  const id = useId();
  const [text, setText] = useState("");
  const send = useMutation(trpc.wsConfig.sessions.message.mutationOptions());
  const disabled = !canOperate || !running;
  const submit = async () => {
    if (!text.trim()) return;
    try {
      await send.mutateAsync({ workspaceSlug: slug, sessionId, text: text.trim() });
    } catch {
      return;
    }
    setText("");
    toast.success("Message queued", "The agent gets it with its next call.");
    router.refresh();
  };
  return (
    <section className="card" aria-labelledby={`${id}-title`}>
      <div className="card-head">
        <div>
          <h2 className="card-title" id={`${id}-title`}>
            Message the agent
          </h2>
          <p className="card-subtitle">Delivered once, as guidance, with the agent&apos;s next guard.check, hook or ingest answer.</p>
        </div>
      </div>
      <div className="card-body stack stack-sm">
        <form
          className="stack stack-sm"
          onSubmit={(e) => {
            e.preventDefault();
            void submit();
          }}
        >
          <Field
            label="Message"
            hint={!canOperate ? NEEDS_MEMBER : !running ? "The session has ended." : `${text.length.toLocaleString("en-US")} / ${MAX_MESSAGE.toLocaleString("en-US")} · Ctrl+Enter sends`}
          >
            <Textarea
              rows={3}
              value={text}
              maxLength={MAX_MESSAGE}
              disabled={disabled}
              placeholder="Stop retrying the deploy; open a PR instead."
              onChange={(e) => setText(e.target.value)}
              onKeyDown={(e) => {
                if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
                  e.preventDefault();
                  void submit();
                }
              }}
            />
          </Field>
          <FormError message={send.error ? errorMessage(send.error) : null} />
          <div className="row">
            <span className="spacer" />
            <Button type="submit" size="sm" variant="primary" disabled={disabled || !text.trim()} loading={send.isPending} title={!canOperate ? NEEDS_MEMBER : undefined}>
              <Icon name="inbox" /> Send
            </Button>
          </div>
        </form>
        {messages.length > 0 && (
          <ul className="controls-messages" aria-label="Messages sent">
            {messages.map((m) => (
              <li key={m.id}>
                <div className="text-sm">{m.text}</div>
                <div className="text-xs muted">
                  {m.by ?? "someone"} · queued <RelativeTime date={m.queuedAt} /> ·{" "}
                  {m.deliveredAt ? (
                    <span data-testid="message-delivered">
                      delivered <RelativeTime date={m.deliveredAt} />
                    </span>
                  ) : (
                    <span data-testid="message-waiting">waiting for the next call</span>
                  )}
                </div>
              </li>
            ))}
          </ul>
        )}
      </div>
    </section>
  );
}
