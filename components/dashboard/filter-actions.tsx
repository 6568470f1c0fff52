"use client";

/**
 * Filter toolbars that apply as they are picked: a select picked with the pointer or a checkbox
 * changes the URL at once; a text or date field, and a closed select stepped through with the arrow
 * keys (each key is a change), after a short pause, on Enter or on leaving the field. The URL is
 * pushed (back and forward step through filters); without JavaScript the GET form still submits on
 * Enter.
 */
import { useRouter, useSearchParams } from "next/navigation";
import { useEffect, useRef, type CSSProperties, type FormEvent, type KeyboardEvent, type ReactNode } from "react";
import { ButtonLink } from "@/components/form";

const TEXT_FILTER_DELAY_MS = 600;

const TYPED = new Set(["text", "search", "date", "number", "email", "url"]);

/** Keys that change a closed select's value where they are pressed: arrows, paging, and type-ahead letters. */
const STEP_KEYS = /^(?:Arrow(?:Up|Down|Left|Right)|Home|End|PageUp|PageDown|.)$/u;

/** The form's fields as a query string, empty values left out. */
function filterQuery(form: HTMLFormElement): string {
  const q = new URLSearchParams();
  for (const [k, v] of new FormData(form)) if (typeof v === "string" && v.trim() !== "") q.append(k, v.trim());
  return q.toString();
}

export function FilterForm({
  action,
  children,
  className = "toolbar",
  style,
  label,
  role = "search",
}: {
  action: string;
  children: ReactNode;
  className?: string;
  style?: CSSProperties;
  label?: string;
  role?: string;
}) {
  const router = useRouter();
  const current = useSearchParams().toString();
  const form = useRef<HTMLFormElement>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  // The select a key other than Enter went to last: its next change is a step, not a pick.
  const keyedSelect = useRef<EventTarget | null>(null);
  const pushed = useRef(current);
  // The fields are uncontrolled: whenever the URL is not the one this form pushed (Clear, back and
  // forward, or this page shown again from the router's history) they are set to show it; a field
  // being typed in keeps what is typed.
  useEffect(() => {
    const f = form.current;
    if (!f) return;
    const q = new URLSearchParams(current);
    for (const el of Array.from(f.elements)) {
      if (!(el instanceof HTMLInputElement || el instanceof HTMLSelectElement) || !el.name) continue;
      if (el instanceof HTMLInputElement) {
        if (el.type === "hidden" || (TYPED.has(el.type) && el === document.activeElement)) continue;
        if (el.type === "checkbox" || el.type === "radio") {
          el.checked = q.getAll(el.name).includes(el.value);
          continue;
        }
      }
      const want = q.get(el.name) ?? "";
      if (el.value !== want) el.value = want;
    }
    pushed.current = current;
  });
  useEffect(() => () => void (timer.current && clearTimeout(timer.current)), []);

  const apply = () => {
    if (timer.current) clearTimeout(timer.current);
    timer.current = null;
    if (!form.current) return;
    const qs = filterQuery(form.current);
    if (qs === pushed.current) return;
    pushed.current = qs;
    router.push(qs ? `${action}?${qs}` : action, { scroll: false });
  };
  const onChange = (e: FormEvent<HTMLFormElement>) => {
    const t = e.target as HTMLInputElement;
    const stepped = t.tagName === "SELECT" && keyedSelect.current === t;
    keyedSelect.current = null;
    if ((t.tagName === "INPUT" && TYPED.has(t.type)) || stepped) {
      if (timer.current) clearTimeout(timer.current);
      timer.current = setTimeout(apply, TEXT_FILTER_DELAY_MS);
    } else apply();
  };
  const onKeyDown = (e: KeyboardEvent<HTMLFormElement>) => {
    const tag = (e.target as HTMLElement).tagName;
    if (e.key === "Enter" && (tag === "INPUT" || tag === "SELECT")) {
      e.preventDefault();
      apply();
    } else if (tag === "SELECT" && STEP_KEYS.test(e.key)) keyedSelect.current = e.target;
  };
  // Leaving a field applies what it was left at.
  const onBlur = () => {
    keyedSelect.current = null;
    if (timer.current) apply();
  };
  return (
    <form
      ref={form}
      className={className}
      style={style}
      method="get"
      action={action}
      role={role}
      aria-label={label}
      onChange={onChange}
      onKeyDown={onKeyDown}
      onBlur={onBlur}
      onSubmit={(e) => {
        e.preventDefault();
        apply();
      }}
    >
      {children}
    </form>
  );
}

/** The end of a filter toolbar: a link back to the unfiltered page (the time range stays) when filtered. */
export function FilterActions({ clearHref, filtered }: { clearHref: string; filtered: boolean }) {
  if (!filtered) return null;
  return (
    <ButtonLink href={clearHref} size="sm" variant="ghost">
      Clear
    </ButtonLink>
  );
}
