ALTER TABLE "failure" ADD COLUMN "fingerprint" text;--> statement-breakpoint
CREATE INDEX "failure_ws_fingerprint_time_idx" ON "failure" USING btree ("workspace_id","fingerprint","ts");