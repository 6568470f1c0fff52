DROP INDEX "api_key_hash_idx";--> statement-breakpoint
CREATE UNIQUE INDEX "api_key_ws_hash_idx" ON "api_key" USING btree ("workspace_id","hash");--> statement-breakpoint
CREATE INDEX "api_key_hash_idx" ON "api_key" USING btree ("hash");