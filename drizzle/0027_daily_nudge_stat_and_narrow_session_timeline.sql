CREATE TABLE "daily_nudge_stat" (
	"workspace_id" text NOT NULL,
	"day" text NOT NULL,
	"pattern_type" text DEFAULT '' NOT NULL,
	"model" text DEFAULT '' NOT NULL,
	"nudges" integer DEFAULT 0 NOT NULL,
	"interrupts" integer DEFAULT 0 NOT NULL,
	"sent" integer DEFAULT 0 NOT NULL,
	"effective" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "daily_nudge_stat_workspace_id_day_pattern_type_model_pk" PRIMARY KEY("workspace_id","day","pattern_type","model")
);
--> statement-breakpoint
-- The roll-up starts as the existing nudges' aggregates (the Patterns page's raw definitions).
INSERT INTO "daily_nudge_stat" ("workspace_id", "day", "pattern_type", "model", "nudges", "interrupts", "sent", "effective")
SELECT "workspace_id", to_char("ts" at time zone 'UTC', 'YYYY-MM-DD'), coalesce("pattern_type", ''), coalesce("model", ''), count(*)::int,
  (count(*) FILTER (WHERE "nudge_type" = 'interrupt'))::int,
  (count(*) FILTER (WHERE "pattern_type" IS NOT NULL AND "nudge_type" <> 'guidance'))::int,
  (count(*) FILTER (WHERE "effective" AND "pattern_type" IS NOT NULL AND "nudge_type" <> 'guidance'))::int
FROM "nudge"
GROUP BY 1, 2, 3, 4;--> statement-breakpoint
-- Session decay's timeline (server/ingest/load.ts) reads these columns alone: carried in its two
-- indexes, the read is an index-only scan instead of a wide agent_session row per session. Every
-- column added is already indexed (or in the partial index's predicate), so the hot-path updates
-- of a session row stay HOT. drizzle-kit cannot declare INCLUDE: db/schema.ts names the indexes.
DROP INDEX "session_ws_ended_idx";--> statement-breakpoint
CREATE INDEX "session_ws_ended_idx" ON "agent_session" USING btree ("workspace_id","session_id") INCLUDE ("agent","started_at","ended_at") WHERE ended_at is not null;--> statement-breakpoint
DROP INDEX "session_ws_agent_start_idx";--> statement-breakpoint
CREATE INDEX "session_ws_agent_start_idx" ON "agent_session" USING btree ("workspace_id","agent","started_at") INCLUDE ("session_id","ended_at");
