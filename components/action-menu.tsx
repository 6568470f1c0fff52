"use client";

import { useEffect, useId, useRef, useState, type ReactNode } from "react";
import { Icon } from "./icons";

export interface ActionMenuItem {
  label: string;
  /** A link (a download when `download`), or an action. */
  href?: string;
  download?: boolean;
  onSelect?: () => void;
  danger?: boolean;
  disabled?: boolean;
}

/**
 * A button opening a menu of links or actions (WAI-ARIA menu button): Enter, Space or ↓ open it on
 * the first item, ↑ on the last; ↑/↓/Home/End move, Escape closes back to the button, Tab leaves.
 */
export function ActionMenu({ label, items, trigger, align = "end", className }: { label: string; items: ActionMenuItem[]; trigger?: ReactNode; align?: "start" | "end"; className?: string }) {
  const [open, setOpen] = useState(false);
  const id = useId();
  const root = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  const itemRefs = useRef<Array<HTMLAnchorElement | HTMLButtonElement | null>>([]);
  const focusItem = (i: number) => {
    const enabled = items.map((it, n) => (it.disabled ? -1 : n)).filter((n) => n >= 0);
    if (!enabled.length) return;
    const at = i < 0 ? enabled.at(-1)! : enabled.includes(i) ? i : enabled[0];
    itemRefs.current[at]?.focus();
  };
  const [focusOnOpen, setFocusOnOpen] = useState<"first" | "last" | null>(null);

  useEffect(() => {
    if (!open) return;
    if (focusOnOpen) focusItem(focusOnOpen === "first" ? 0 : -1);
    const onDown = (e: PointerEvent) => {
      if (!root.current?.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener("pointerdown", onDown);
    return () => document.removeEventListener("pointerdown", onDown);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [open]);

  const close = (refocus: boolean) => {
    setOpen(false);
    if (refocus) button.current?.focus();
  };

  const onMenuKey = (e: React.KeyboardEvent) => {
    const current = itemRefs.current.findIndex((el) => el === document.activeElement);
    const step = (d: number) => {
      for (let n = 1; n <= items.length; n++) {
        const i = (current + d * n + items.length) % items.length;
        if (!items[i].disabled) return itemRefs.current[i]?.focus();
      }
    };
    if (e.key === "ArrowDown") step(1);
    else if (e.key === "ArrowUp") step(-1);
    else if (e.key === "Home") focusItem(0);
    else if (e.key === "End") focusItem(-1);
    else if (e.key === "Escape") close(true);
    else if (e.key === "Tab") return setOpen(false);
    else return;
    e.preventDefault();
  };

  return (
    <div className={`action-menu${className ? ` ${className}` : ""}`} ref={root}>
      <button
        ref={button}
        type="button"
        className="btn btn-secondary btn-sm"
        aria-haspopup="menu"
        aria-label={trigger ? label : undefined}
        aria-expanded={open}
        aria-controls={open ? id : undefined}
        onClick={() => {
          setFocusOnOpen(null);
          setOpen((o) => !o);
        }}
        onKeyDown={(e) => {
          if (e.key === "ArrowDown" || e.key === "ArrowUp") {
            e.preventDefault();
            setFocusOnOpen(e.key === "ArrowDown" ? "first" : "last");
            setOpen(true);
          } else if ((e.key === "Enter" || e.key === " ") && !open) {
            e.preventDefault();
            setFocusOnOpen("first");
            setOpen(true);
          }
        }}
      >
        {trigger ?? (
          <>
            {label} <Icon name="chevronDown" size={14} />
          </>
        )}
      </button>
      {open && (
        <ul id={id} role="menu" aria-label={label} className={`menu action-menu-list action-menu-${align}`} onKeyDown={onMenuKey}>
          {items.map((it, i) => (
            <li key={it.label} role="none">
              {it.href && !it.disabled ? (
                <a
                  ref={(el) => {
                    itemRefs.current[i] = el;
                  }}
                  role="menuitem"
                  tabIndex={-1}
                  className="menu-item"
                  href={it.href}
                  download={it.download || undefined}
                  onClick={() => close(false)}
                >
                  {it.label}
                </a>
              ) : (
                <button
                  ref={(el) => {
                    itemRefs.current[i] = el;
                  }}
                  type="button"
                  role="menuitem"
                  tabIndex={-1}
                  className={`menu-item${it.danger ? " menu-item-danger" : ""}`}
                  disabled={it.disabled}
                  aria-disabled={it.disabled || undefined}
                  onClick={() => {
                    close(true);
                    it.onSelect?.();
                  }}
                >
                  {it.label}
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
