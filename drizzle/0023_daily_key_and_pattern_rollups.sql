CREATE TABLE "daily_key_stat" (
	"workspace_id" text NOT NULL,
	"day" text NOT NULL,
	"failure_key" text NOT NULL,
	"model" text DEFAULT '' NOT NULL,
	"tool_name" text NOT NULL,
	"results" integer DEFAULT 0 NOT NULL,
	"failed" integer DEFAULT 0 NOT NULL,
	"last_failed_at" timestamp with time zone,
	"failures" integer DEFAULT 0 NOT NULL,
	"last_failure_at" timestamp with time zone,
	CONSTRAINT "daily_key_stat_workspace_id_day_failure_key_model_pk" PRIMARY KEY("workspace_id","day","failure_key","model")
);
--> statement-breakpoint
CREATE TABLE "daily_pattern_stat" (
	"workspace_id" text NOT NULL,
	"day" text NOT NULL,
	"pattern_type" text NOT NULL,
	"severity" text NOT NULL,
	"model" text DEFAULT '' NOT NULL,
	"detections" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "daily_pattern_stat_workspace_id_day_pattern_type_severity_model_pk" PRIMARY KEY("workspace_id","day","pattern_type","severity","model")
);
--> statement-breakpoint
-- The roll-ups start as the existing rows' aggregates.
INSERT INTO "daily_key_stat" ("workspace_id", "day", "failure_key", "model", "tool_name", "results", "failed", "last_failed_at", "failures", "last_failure_at")
SELECT "workspace_id", "day", "failure_key", "model", max("tool_name"), sum("results")::int, sum("failed")::int, max("last_failed_at"), sum("failures")::int, max("last_failure_at")
FROM (
  SELECT "workspace_id", to_char("ts" at time zone 'UTC', 'YYYY-MM-DD') AS "day", "failure_key", coalesce("model", '') AS "model", coalesce("tool_name", split_part("failure_key", '|', 1)) AS "tool_name",
    count(*) AS "results", count(*) FILTER (WHERE "failed") AS "failed", max("ts") FILTER (WHERE "failed") AS "last_failed_at", 0 AS "failures", NULL::timestamptz AS "last_failure_at"
  FROM "event" WHERE "type" = 'tool.result' AND "failure_key" IS NOT NULL
  GROUP BY 1, 2, 3, 4, 5
  UNION ALL
  SELECT "workspace_id", to_char("ts" at time zone 'UTC', 'YYYY-MM-DD'), "failure_key", coalesce("model", ''), "tool_name",
    0, 0, NULL::timestamptz, count(*), max("ts")
  FROM "failure"
  GROUP BY 1, 2, 3, 4, 5
) r
GROUP BY "workspace_id", "day", "failure_key", "model";--> statement-breakpoint
INSERT INTO "daily_pattern_stat" ("workspace_id", "day", "pattern_type", "severity", "model", "detections")
SELECT "workspace_id", to_char("ts" at time zone 'UTC', 'YYYY-MM-DD'), "pattern_type", "severity", coalesce("model", ''), count(*)::int
FROM "pattern_detection"
GROUP BY 1, 2, 3, 4, 5;
