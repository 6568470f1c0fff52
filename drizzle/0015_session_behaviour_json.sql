-- A session's behaviour state is written whole by every guard.check and ingest batch of the session
-- and only ever read whole, by Vigil (never queried inside by SQL). As jsonb, PostgreSQL parsed it into
-- its binary form (keys sorted, values built) on every write, and turned it back into text on every
-- read: ~10 % of the database's CPU per guard.check. As json it is checked and stored as sent.
ALTER TABLE "agent_session" ALTER COLUMN "behaviour" SET DATA TYPE json USING "behaviour"::json;--> statement-breakpoint
-- A new type resets the column's compression (measured on PostgreSQL 15): lz4 again, as 0012 set it.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)) THEN
    ALTER TABLE "agent_session" ALTER COLUMN "behaviour" SET COMPRESSION lz4;
  END IF;
END $$;
