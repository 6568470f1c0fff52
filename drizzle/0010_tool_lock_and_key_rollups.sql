CREATE TABLE "tool_lock" (
	"workspace_id" text NOT NULL,
	"tool_name" text NOT NULL,
	CONSTRAINT "tool_lock_workspace_id_tool_name_pk" PRIMARY KEY("workspace_id","tool_name")
);
--> statement-breakpoint
ALTER TABLE "daily_tool_stat" ADD COLUMN "failure_key" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "daily_tool_stat" DROP CONSTRAINT "daily_tool_stat_workspace_id_day_tool_name_pk";--> statement-breakpoint
ALTER TABLE "daily_tool_stat" ADD CONSTRAINT "daily_tool_stat_workspace_id_day_tool_name_failure_key_pk" PRIMARY KEY("workspace_id","day","tool_name","failure_key");
