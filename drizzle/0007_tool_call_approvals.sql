DROP INDEX "approval_ws_pending_key_idx";--> statement-breakpoint
ALTER TABLE "approval" ADD COLUMN "session_id" text;--> statement-breakpoint
ALTER TABLE "approval" ADD COLUMN "call_id" text;--> statement-breakpoint
ALTER TABLE "approval" ADD COLUMN "agent" text;--> statement-breakpoint
ALTER TABLE "approval" ADD COLUMN "model" text;--> statement-breakpoint
ALTER TABLE "approval" ADD COLUMN "args_preview" text;--> statement-breakpoint
ALTER TABLE "approval" ADD COLUMN "reason" text;--> statement-breakpoint
ALTER TABLE "approval" ADD COLUMN "scope" text;--> statement-breakpoint
CREATE UNIQUE INDEX "approval_ws_session_call_idx" ON "approval" USING btree ("workspace_id","session_id","call_id") WHERE kind = 'tool_call';--> statement-breakpoint
CREATE INDEX "approval_ws_session_grant_idx" ON "approval" USING btree ("workspace_id","session_id","failure_key") WHERE kind = 'tool_call' and scope = 'session' and status = 'approved';--> statement-breakpoint
CREATE UNIQUE INDEX "approval_ws_pending_key_idx" ON "approval" USING btree ("workspace_id","failure_key") WHERE status = 'pending' and kind = 'recovery';