import type { ReactNode } from "react";
import { TRPCReactProvider } from "@/lib/trpc/client";
import { Icon } from "@/components/icons";

export default function AuthLayout({ children }: { children: ReactNode }) {
  return (
    <TRPCReactProvider>
      <main className="center-page">
        <div className="auth-wrap">
          <div className="brand auth-brand">
            <span className="brand-mark" aria-hidden="true">
              <Icon name="shield" size={12} strokeWidth={2} />
            </span>
            Vigil
          </div>
          {children}
        </div>
      </main>
    </TRPCReactProvider>
  );
}
