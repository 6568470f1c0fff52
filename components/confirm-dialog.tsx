"use client";

import { useEffect, useId, useRef, useState, type ReactNode } from "react";
import { Button } from "./form";

/**
 * Accessible confirmation modal built on <dialog>.showModal(): the page behind is inert,
 * focus is trapped inside, Escape cancels, focus returns to the trigger on close.
 *
 * const [open, setOpen] = useState(false);
 * <ConfirmDialog open={open} onOpenChange={setOpen} title="Reset all keys?" tone="danger"
 *   confirmLabel="Reset all" confirmText="reset" onConfirm={async () => { await m.mutateAsync(); }} />
 *
 * If `onConfirm` returns a promise the confirm button shows a spinner until it settles; the
 * dialog closes on success and stays open (showing the error) if it throws.
 */
export function ConfirmDialog({
  open,
  onOpenChange,
  title,
  description,
  children,
  confirmLabel = "Confirm",
  cancelLabel = "Cancel",
  tone = "primary",
  confirmText,
  onConfirm,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  title: ReactNode;
  description?: ReactNode;
  /** Extra content (e.g. a guidance textarea). */
  children?: ReactNode;
  confirmLabel?: string;
  cancelLabel?: string;
  tone?: "primary" | "danger";
  /** When set, the user must type this text to enable the confirm button. */
  confirmText?: string;
  onConfirm: () => unknown;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const returnFocus = useRef<HTMLElement | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [typed, setTyped] = useState("");
  const id = useId();

  useEffect(() => {
    const dlg = ref.current;
    if (!dlg) return;
    if (open && !dlg.open) {
      returnFocus.current = document.activeElement as HTMLElement | null;
      setError(null);
      setTyped("");
      dlg.showModal();
    } else if (!open && dlg.open) {
      dlg.close();
    }
  }, [open]);

  // Native close (Escape, form method=dialog) → sync state and restore focus.
  const handleClose = () => {
    if (open) onOpenChange(false);
    returnFocus.current?.focus?.();
  };

  const onKeyDown = (e: React.KeyboardEvent<HTMLDialogElement>) => {
    if (e.key === "Escape" && busy) {
      e.preventDefault();
      return;
    }
    if (e.key !== "Tab") return;
    const nodes = ref.current?.querySelectorAll<HTMLElement>(
      'button:not(:disabled), input:not(:disabled), textarea:not(:disabled), select:not(:disabled), a[href], [tabindex]:not([tabindex="-1"])',
    );
    if (!nodes || nodes.length === 0) return;
    const first = nodes[0];
    const last = nodes[nodes.length - 1];
    if (e.shiftKey && document.activeElement === first) {
      e.preventDefault();
      last.focus();
    } else if (!e.shiftKey && document.activeElement === last) {
      e.preventDefault();
      first.focus();
    }
  };

  const confirm = async () => {
    setError(null);
    try {
      const r = onConfirm();
      if (r && typeof (r as Promise<unknown>).then === "function") {
        setBusy(true);
        await r;
      }
      onOpenChange(false);
    } catch (err) {
      setError(err instanceof Error ? err.message : "Something went wrong.");
    } finally {
      setBusy(false);
    }
  };

  const blocked = confirmText !== undefined && typed.trim() !== confirmText;

  return (
    <dialog
      ref={ref}
      className="dialog"
      aria-labelledby={`${id}-title`}
      aria-describedby={description ? `${id}-desc` : undefined}
      onClose={handleClose}
      onCancel={(e) => {
        if (busy) e.preventDefault();
      }}
      onKeyDown={onKeyDown}
      onClick={(e) => {
        // click on the backdrop (the dialog element itself) closes
        if (e.target === ref.current && !busy) onOpenChange(false);
      }}
    >
      {open && (
        <>
          <div className="dialog-body">
            <h2 className="dialog-title" id={`${id}-title`}>
              {title}
            </h2>
            {description && (
              <div className="dialog-description" id={`${id}-desc`}>
                {description}
              </div>
            )}
            {children}
            {confirmText !== undefined && (
              <label className="field">
                <span className="field-hint">
                  Type <strong className="mono">{confirmText}</strong> to confirm
                </span>
                <input className="input" value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" spellCheck={false} />
              </label>
            )}
            {error && (
              <div className="callout" data-tone="danger" role="alert">
                {error}
              </div>
            )}
          </div>
          <div className="dialog-footer">
            <Button variant="secondary" onClick={() => onOpenChange(false)} disabled={busy}>
              {cancelLabel}
            </Button>
            <Button
              variant={tone === "danger" ? "danger" : "primary"}
              onClick={confirm}
              loading={busy}
              disabled={blocked}
            >
              {confirmLabel}
            </Button>
          </div>
        </>
      )}
    </dialog>
  );
}
