CREATE TABLE "daily_failure_group" (
	"workspace_id" text NOT NULL,
	"day" text NOT NULL,
	"fingerprint" text NOT NULL,
	"failures" integer DEFAULT 0 NOT NULL,
	"first_at" timestamp with time zone NOT NULL,
	"last_at" timestamp with time zone NOT NULL,
	"error_message" text,
	CONSTRAINT "daily_failure_group_workspace_id_day_fingerprint_pk" PRIMARY KEY("workspace_id","day","fingerprint")
);
--> statement-breakpoint
CREATE TABLE "daily_failure_group_member" (
	"workspace_id" text NOT NULL,
	"day" text NOT NULL,
	"fingerprint" text NOT NULL,
	"kind" text NOT NULL,
	"value" text NOT NULL,
	CONSTRAINT "daily_failure_group_member_pk" PRIMARY KEY("workspace_id","day","fingerprint","kind","value")
);
--> statement-breakpoint
CREATE TABLE "daily_key_total" (
	"workspace_id" text NOT NULL,
	"day" text NOT NULL,
	"failure_key" text NOT NULL,
	"tool_name" text NOT NULL,
	"results" integer DEFAULT 0 NOT NULL,
	"failed" integer DEFAULT 0 NOT NULL,
	"last_failed_at" timestamp with time zone,
	"failures" integer DEFAULT 0 NOT NULL,
	"last_failure_at" timestamp with time zone,
	CONSTRAINT "daily_key_total_workspace_id_day_failure_key_pk" PRIMARY KEY("workspace_id","day","failure_key")
);
--> statement-breakpoint
CREATE INDEX "daily_key_stat_key_day_idx" ON "daily_key_stat" USING btree ("workspace_id","failure_key","day");
--> statement-breakpoint
-- The roll-ups start as the existing rows' aggregates (the raw definitions the pages read before).
INSERT INTO "daily_key_total" ("workspace_id", "day", "failure_key", "tool_name", "results", "failed", "last_failed_at", "failures", "last_failure_at")
SELECT "workspace_id", "day", "failure_key", max("tool_name"), sum("results")::int, sum("failed")::int, max("last_failed_at"), sum("failures")::int, max("last_failure_at")
FROM "daily_key_stat"
GROUP BY 1, 2, 3;--> statement-breakpoint
INSERT INTO "daily_failure_group" ("workspace_id", "day", "fingerprint", "failures", "first_at", "last_at", "error_message")
SELECT "workspace_id", to_char("ts" at time zone 'UTC', 'YYYY-MM-DD'), "fingerprint", count(*)::int, min("ts"), max("ts"), max("error_message")
FROM "failure"
WHERE "fingerprint" IS NOT NULL
GROUP BY 1, 2, 3;--> statement-breakpoint
INSERT INTO "daily_failure_group_member" ("workspace_id", "day", "fingerprint", "kind", "value")
SELECT DISTINCT f."workspace_id", to_char(f."ts" at time zone 'UTC', 'YYYY-MM-DD'), f."fingerprint", m.kind, m.value
FROM "failure" f
CROSS JOIN LATERAL (VALUES ('key', f."failure_key"), ('tool', f."tool_name"), ('agent', f."agent"), ('session', f."session_id")) AS m(kind, value)
WHERE f."fingerprint" IS NOT NULL;
