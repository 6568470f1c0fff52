"use client";

import { useEffect, useSyncExternalStore } from "react";
import { Icon } from "./icons";

/*
 * Minimal toasts. Mount <Toaster /> once (AppShell already does); call `toast(...)` from any
 * client code:  toast({ title: "Key reset", tone: "success" })  or  toast.error("Could not save").
 */

export type ToastTone = "neutral" | "success" | "error";
export type ToastInput = { title: string; description?: string; tone?: ToastTone; durationMs?: number };
type ToastItem = Required<Omit<ToastInput, "description">> & { id: number; description?: string };

let items: ToastItem[] = [];
let seq = 0;
const listeners = new Set<() => void>();
const emit = () => listeners.forEach((l) => l());
const EMPTY: ToastItem[] = [];

function dismissToast(id: number) {
  items = items.filter((t) => t.id !== id);
  emit();
}

export function toast(input: ToastInput | string): number {
  const t = typeof input === "string" ? { title: input } : input;
  const id = ++seq;
  items = [
    ...items.slice(-4),
    { id, title: t.title, description: t.description, tone: t.tone ?? "neutral", durationMs: t.durationMs ?? (t.tone === "error" ? 8000 : 4000) },
  ];
  emit();
  return id;
}
toast.success = (title: string, description?: string) => toast({ title, description, tone: "success" });
toast.error = (title: string, description?: string) => toast({ title, description, tone: "error" });

function subscribe(l: () => void) {
  listeners.add(l);
  return () => listeners.delete(l);
}

export function Toaster() {
  const list = useSyncExternalStore(subscribe, () => items, () => EMPTY);
  return (
    <div className="toaster" aria-live="polite" aria-relevant="additions">
      {list.map((t) => (
        <ToastView key={t.id} item={t} />
      ))}
    </div>
  );
}

function ToastView({ item }: { item: ToastItem }) {
  useEffect(() => {
    const h = window.setTimeout(() => dismissToast(item.id), item.durationMs);
    return () => window.clearTimeout(h);
  }, [item.id, item.durationMs]);
  return (
    <div className="toast" data-tone={item.tone} role={item.tone === "error" ? "alert" : "status"}>
      <span className="toast-icon">
        <Icon name={item.tone === "success" ? "checkCircle" : item.tone === "error" ? "alertCircle" : "info"} />
      </span>
      <div className="toast-text">
        <div className="toast-title">{item.title}</div>
        {item.description && <div className="toast-description">{item.description}</div>}
      </div>
      <button type="button" className="btn btn-ghost btn-xs btn-icon" aria-label="Dismiss" onClick={() => dismissToast(item.id)}>
        <Icon name="x" size={14} />
      </button>
    </div>
  );
}
