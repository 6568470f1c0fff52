"use client";

/**
 * Filter toolbars that apply as they are picked: a select or checkbox changes the URL at once, a
 * text or date field after a short pause or on Enter. The URL is pushed (back and forward step
 * through filters); without JavaScript the GET form still submits on Enter.
 */
import { useRouter, useSearchParams } from "next/navigation";
import { useEffect, useRef, type CSSProperties, type FormEvent, type KeyboardEvent, type ReactNode } from "react";
import { ButtonLink } from "@/components/form";

const TEXT_FILTER_DELAY_MS = 600;

const TYPED = new Set(["text", "search", "date", "number", "email", "url"]);

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
    if (t.tagName === "INPUT" && TYPED.has(t.type)) {
      if (timer.current) clearTimeout(timer.current);
      timer.current = setTimeout(apply, TEXT_FILTER_DELAY_MS);
    } else apply();
  };
  const onKeyDown = (e: KeyboardEvent<HTMLFormElement>) => {
    if (e.key === "Enter" && (e.target as HTMLElement).tagName === "INPUT") {
      e.preventDefault();
      apply();
    }
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
