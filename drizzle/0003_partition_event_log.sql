-- The raw event log becomes a table partitioned by day on "ts" (SPEC 9: retention drops partitions).
-- Unique keys of a partitioned table must include the partition key, so idempotency by
-- (workspace_id, id) moves to "event_id". Rows of the old table are carried over.
-- Daily partitions are created and dropped by server/services/partitions.ts; the default partition
-- takes anything outside them. (Hand-written: drizzle-kit does not generate partitioned tables.)
CREATE TABLE "event_id" (
	"workspace_id" text NOT NULL,
	"id" text NOT NULL,
	"ts" timestamp with time zone NOT NULL,
	CONSTRAINT "event_id_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
ALTER TABLE "event" RENAME TO "event_unpartitioned";--> statement-breakpoint
ALTER SEQUENCE "event_seq_seq" OWNED BY NONE;--> statement-breakpoint
DROP INDEX "event_ws_session_idx";--> statement-breakpoint
DROP INDEX "event_ws_time_idx";--> statement-breakpoint
DROP INDEX "event_ws_call_idx";--> statement-breakpoint
ALTER TABLE "event_unpartitioned" DROP CONSTRAINT "event_workspace_id_id_pk";--> statement-breakpoint
CREATE TABLE "event" (
	"workspace_id" text NOT NULL,
	"id" text NOT NULL,
	"session_id" text NOT NULL,
	"type" text NOT NULL,
	"ts" timestamp with time zone NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	"seq" bigint DEFAULT nextval('event_seq_seq') NOT NULL,
	"model" text,
	"tool_name" text,
	"call_id" text,
	"failure_key" text,
	"failed" boolean,
	"severity" text,
	"turn_index" integer,
	"payload" jsonb NOT NULL,
	CONSTRAINT "event_workspace_id_id_ts_pk" PRIMARY KEY("workspace_id","id","ts")
) PARTITION BY RANGE ("ts");
--> statement-breakpoint
ALTER SEQUENCE "event_seq_seq" OWNED BY "event"."seq";--> statement-breakpoint
CREATE TABLE "event_default" PARTITION OF "event" DEFAULT;--> statement-breakpoint
CREATE INDEX "event_ws_session_idx" ON "event" USING btree ("workspace_id","session_id","seq");--> statement-breakpoint
CREATE INDEX "event_ws_time_idx" ON "event" USING btree ("workspace_id","ts");--> statement-breakpoint
CREATE INDEX "event_ws_call_idx" ON "event" USING btree ("workspace_id","session_id","call_id");--> statement-breakpoint
INSERT INTO "event" SELECT * FROM "event_unpartitioned";--> statement-breakpoint
INSERT INTO "event_id" ("workspace_id", "id", "ts") SELECT "workspace_id", "id", "ts" FROM "event_unpartitioned";--> statement-breakpoint
DROP TABLE "event_unpartitioned";--> statement-breakpoint
CREATE INDEX "event_id_ws_time_idx" ON "event_id" USING btree ("workspace_id","ts");
