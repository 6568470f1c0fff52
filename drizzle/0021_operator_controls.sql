CREATE TABLE "operator_hold" (
	"workspace_id" text NOT NULL,
	"scope" text NOT NULL,
	"target" text NOT NULL,
	"reason" text NOT NULL,
	"since" timestamp with time zone DEFAULT now() NOT NULL,
	"by" text NOT NULL,
	CONSTRAINT "operator_hold_workspace_id_scope_target_pk" PRIMARY KEY("workspace_id","scope","target")
);
--> statement-breakpoint
CREATE TABLE "pending_nudge" (
	"workspace_id" text NOT NULL,
	"id" bigserial NOT NULL,
	"session_id" text NOT NULL,
	"nudge_type" text NOT NULL,
	"pattern_type" text,
	"message" text NOT NULL,
	"source" text NOT NULL,
	"created_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"delivered_at" timestamp with time zone,
	CONSTRAINT "pending_nudge_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
ALTER TABLE "agent_session" ADD COLUMN "paused_by" text;--> statement-breakpoint
ALTER TABLE "agent_session" ADD COLUMN "pending_nudges" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "key_state" ADD COLUMN "manual" boolean DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX "pending_nudge_ws_session_open_idx" ON "pending_nudge" USING btree ("workspace_id","session_id","id") WHERE delivered_at is null;