-- The engine's KeyState moves out of `data` (which keeps the failure/result history) into a column
-- of its own, so that reading a state never decompresses a hot key's history.
ALTER TABLE "key_state" ADD COLUMN "trust" jsonb;--> statement-breakpoint
UPDATE "key_state" SET "trust" = "data"->'state', "data" = "data" - 'state';--> statement-breakpoint
ALTER TABLE "key_state" ALTER COLUMN "trust" SET NOT NULL;
