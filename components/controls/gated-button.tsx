import type { ComponentProps } from "react";
import { Button } from "@/components/form";

/** Why a viewer's button is disabled: shown as its tooltip (the server refuses the action too). */
export const NEEDS_MEMBER = "Needs the member role or higher";

/**
 * A button a viewer sees but cannot use: disabled, with the reason as a tooltip on a wrapper
 * (a disabled button gets no pointer events of its own).
 */
export function GatedButton({ allowed, deniedReason = NEEDS_MEMBER, ...props }: ComponentProps<typeof Button> & { allowed: boolean; deniedReason?: string }) {
  if (allowed) return <Button {...props} />;
  return (
    <span className="controls-gated" title={deniedReason} tabIndex={0} aria-label={`${deniedReason}`}>
      <Button {...props} disabled aria-disabled="true" />
    </span>
  );
}
