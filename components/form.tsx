import {
  Children,
  cloneElement,
  isValidElement,
  useId,
  type ButtonHTMLAttributes,
  type CSSProperties,
  type InputHTMLAttributes,
  type ReactElement,
  type ReactNode,
  type SelectHTMLAttributes,
  type TextareaHTMLAttributes,
} from "react";
import Link from "next/link";
import { Icon } from "./icons";

/*
 * Form primitives. Server-safe (no "use client"): use them in Client Components with
 * handlers, or in Server Components for static markup.
 *
 * <Field label="Threshold" hint="Failures before escalation" error={errors.threshold}>
 *   <NumberInput name="threshold" min={1} defaultValue={3} />
 * </Field>
 * Field wires id / aria-describedby / aria-invalid into its single child control.
 */

type ControlA11y = { id?: string; "aria-describedby"?: string; "aria-invalid"?: boolean | "true" | "false" };

export function Field({
  label,
  hint,
  error,
  id,
  required,
  optional,
  inline = false,
  children,
}: {
  label: ReactNode;
  hint?: ReactNode;
  /** Error text shown under the control; also marks it aria-invalid. */
  error?: ReactNode;
  id?: string;
  required?: boolean;
  optional?: boolean;
  /** Label on the left, control on the right (for toggles / short selects in settings lists). */
  inline?: boolean;
  children: ReactNode;
}) {
  const auto = useId();
  const controlId = id ?? `f${auto.replace(/[^a-zA-Z0-9_-]/g, "")}`;
  const hintId = hint ? `${controlId}-hint` : undefined;
  const errorId = error ? `${controlId}-error` : undefined;
  const describedBy = [errorId, hintId].filter(Boolean).join(" ") || undefined;

  const only = Children.count(children) === 1 && isValidElement(children) ? (children as ReactElement<ControlA11y>) : null;
  const control = only
    ? cloneElement(only, {
        id: only.props.id ?? controlId,
        "aria-describedby": [only.props["aria-describedby"], describedBy].filter(Boolean).join(" ") || undefined,
        "aria-invalid": error ? true : only.props["aria-invalid"],
      })
    : children;

  const labelEl = (
    <label className="field-label" htmlFor={only ? (only.props.id ?? controlId) : undefined}>
      {label}
      {required && (
        <span className="field-required" aria-hidden="true">
          *
        </span>
      )}
      {optional && <span className="field-optional">(optional)</span>}
    </label>
  );
  const messages = (
    <>
      {error && (
        <span className="field-error" id={errorId}>
          <Icon name="alertCircle" size={14} />
          {error}
        </span>
      )}
      {hint && (
        <span className="field-hint" id={hintId}>
          {hint}
        </span>
      )}
    </>
  );

  if (inline) {
    return (
      <div className="field field-inline">
        <div className="stack" style={{ gap: 2 }}>
          {labelEl}
          {messages}
        </div>
        {control}
      </div>
    );
  }
  return (
    <div className="field">
      {labelEl}
      {control}
      {messages}
    </div>
  );
}

type InputProps = Omit<InputHTMLAttributes<HTMLInputElement>, "size"> & { size?: "sm" | "md"; mono?: boolean };

function inputClass(base: string, size?: "sm" | "md", mono?: boolean, extra?: string) {
  return [base, size === "sm" && "input-sm", mono && "input-mono", extra].filter(Boolean).join(" ");
}

export function TextInput({ size, mono, className, type = "text", ...rest }: InputProps) {
  return <input type={type} className={inputClass("input", size, mono, className)} {...rest} />;
}

/**
 * Number input with optional unit suffix ("ms", "%", "failures"). `chars`: the widest value it
 * accepts, in characters (components/config/meta.ts derives it from the field's range), so its
 * digits never clip; a text suffix gets room for its own length.
 */
export function NumberInput({
  size,
  suffix,
  chars,
  className,
  style,
  ...rest
}: Omit<InputProps, "type" | "mono"> & { suffix?: ReactNode; chars?: number }) {
  const input = (
    <input
      type="number"
      inputMode="decimal"
      className={inputClass("input", size, false, [chars && "input-num", className].filter(Boolean).join(" ") || undefined)}
      style={chars ? ({ "--num-chars": chars, ...style } as CSSProperties) : style}
      {...rest}
    />
  );
  if (!suffix) return input;
  return (
    <span className="input-group" style={typeof suffix === "string" ? ({ "--suffix-chars": suffix.length } as CSSProperties) : undefined}>
      {input}
      <span className="input-suffix" aria-hidden="true">
        {suffix}
      </span>
    </span>
  );
}

export type SelectOption = { value: string; label: string; disabled?: boolean };

export function Select({
  options,
  placeholder,
  size,
  className,
  children,
  ...rest
}: Omit<SelectHTMLAttributes<HTMLSelectElement>, "size"> & {
  options?: SelectOption[];
  placeholder?: string;
  size?: "sm" | "md";
}) {
  return (
    <select className={inputClass("select", size, false, className)} {...rest}>
      {placeholder !== undefined && (
        <option value="" disabled={rest.required}>
          {placeholder}
        </option>
      )}
      {options?.map((o) => (
        <option key={o.value} value={o.value} disabled={o.disabled}>
          {o.label}
        </option>
      ))}
      {children}
    </select>
  );
}

export function Textarea({ className, mono, ...rest }: TextareaHTMLAttributes<HTMLTextAreaElement> & { mono?: boolean }) {
  return <textarea className={inputClass("textarea", undefined, mono, className)} {...rest} />;
}

/** Checkbox with its label (and optional hint) to the right. `toggle` renders it as a switch. */
export function Checkbox({
  label,
  hint,
  toggle = false,
  className,
  ...rest
}: Omit<InputHTMLAttributes<HTMLInputElement>, "type"> & { label?: ReactNode; hint?: ReactNode; toggle?: boolean }) {
  const input = (
    <input type="checkbox" role={toggle ? "switch" : undefined} className={toggle ? "switch" : undefined} {...rest} />
  );
  if (!label) return input;
  return (
    <label className={["check", className].filter(Boolean).join(" ")} data-disabled={rest.disabled || undefined}>
      {input}
      <span className="check-text">
        <span>{label}</span>
        {hint && <span className="check-hint">{hint}</span>}
      </span>
    </label>
  );
}

/** Switch: a checkbox with role="switch". Use inside <Field inline> or with its own `label`. */
export function Toggle(props: Omit<InputHTMLAttributes<HTMLInputElement>, "type"> & { label?: ReactNode; hint?: ReactNode }) {
  return <Checkbox toggle {...props} />;
}

/* ---------- Buttons ---------- */

export type ButtonVariant = "primary" | "secondary" | "danger" | "ghost";
export type ButtonSize = "xs" | "sm" | "md";

function buttonClass(variant: ButtonVariant = "secondary", size: ButtonSize = "md", extra?: string | false, iconOnly?: boolean) {
  return ["btn", `btn-${variant}`, size !== "md" && `btn-${size}`, iconOnly && "btn-icon", extra].filter(Boolean).join(" ");
}

export function Button({
  variant = "secondary",
  size = "md",
  loading = false,
  iconOnly = false,
  className,
  disabled,
  children,
  type = "button",
  ...rest
}: ButtonHTMLAttributes<HTMLButtonElement> & {
  variant?: ButtonVariant;
  size?: ButtonSize;
  /** Shows a spinner, sets aria-busy and disables the button. */
  loading?: boolean;
  /** Square icon button; give it an aria-label. */
  iconOnly?: boolean;
}) {
  return (
    <button
      type={type}
      className={buttonClass(variant, size, className, iconOnly)}
      disabled={disabled || loading}
      aria-busy={loading || undefined}
      {...rest}
    >
      {loading && <span className="spinner" aria-hidden="true" />}
      {children}
    </button>
  );
}

/** A next/link styled as a button. */
export function ButtonLink({
  href,
  variant = "secondary",
  size = "md",
  className,
  children,
  ...rest
}: {
  href: string;
  variant?: ButtonVariant;
  size?: ButtonSize;
  className?: string;
  children: ReactNode;
  "aria-label"?: string;
  title?: string;
}) {
  return (
    <Link href={href} className={buttonClass(variant, size, className)} {...rest}>
      {children}
    </Link>
  );
}

/** A form's error that belongs to no single field ("Could not reach the server"); nothing when there is none. */
export function FormError({ message }: { message: string | null | undefined }) {
  if (!message) return null;
  return (
    <div className="callout" data-tone="danger" role="alert">
      <Icon name="alertCircle" />
      <span>{message}</span>
    </div>
  );
}
