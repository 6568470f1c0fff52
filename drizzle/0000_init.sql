CREATE TABLE "account" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"provider_id" text NOT NULL,
	"user_id" text NOT NULL,
	"access_token" text,
	"refresh_token" text,
	"id_token" text,
	"access_token_expires_at" timestamp with time zone,
	"refresh_token_expires_at" timestamp with time zone,
	"scope" text,
	"password" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "agent_session" (
	"workspace_id" text NOT NULL,
	"session_id" text NOT NULL,
	"agent" text DEFAULT 'default' NOT NULL,
	"model" text,
	"started_at" timestamp with time zone,
	"ended_at" timestamp with time zone,
	"first_event_at" timestamp with time zone,
	"last_event_at" timestamp with time zone,
	"clock" bigint,
	"paused" boolean DEFAULT false NOT NULL,
	"pause_reason" text,
	"paused_at" timestamp with time zone,
	"settings" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"behaviour" jsonb,
	"event_count" integer DEFAULT 0 NOT NULL,
	"call_count" integer DEFAULT 0 NOT NULL,
	"failure_count" integer DEFAULT 0 NOT NULL,
	"pattern_count" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "agent_session_workspace_id_session_id_pk" PRIMARY KEY("workspace_id","session_id")
);
--> statement-breakpoint
CREATE TABLE "api_key" (
	"workspace_id" text NOT NULL,
	"id" text NOT NULL,
	"name" text NOT NULL,
	"prefix" text NOT NULL,
	"hash" text NOT NULL,
	"scope" text NOT NULL,
	"created_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "api_key_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
CREATE TABLE "approval" (
	"workspace_id" text NOT NULL,
	"id" text NOT NULL,
	"kind" text DEFAULT 'recovery' NOT NULL,
	"failure_key" text NOT NULL,
	"tool_name" text NOT NULL,
	"status" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"resolved_at" timestamp with time zone,
	"resolved_by" text,
	"comment" text,
	CONSTRAINT "approval_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
CREATE TABLE "audit_log" (
	"organization_id" text NOT NULL,
	"id" bigserial NOT NULL,
	"workspace_id" text,
	"actor_type" text NOT NULL,
	"actor_id" text,
	"actor_label" text NOT NULL,
	"action" text NOT NULL,
	"target" text,
	"before" jsonb,
	"after" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "audit_log_organization_id_id_pk" PRIMARY KEY("organization_id","id")
);
--> statement-breakpoint
CREATE TABLE "daily_tool_stat" (
	"workspace_id" text NOT NULL,
	"day" text NOT NULL,
	"tool_name" text NOT NULL,
	"results" integer DEFAULT 0 NOT NULL,
	"failures" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "daily_tool_stat_workspace_id_day_tool_name_pk" PRIMARY KEY("workspace_id","day","tool_name")
);
--> statement-breakpoint
CREATE TABLE "event" (
	"workspace_id" text NOT NULL,
	"id" text NOT NULL,
	"session_id" text NOT NULL,
	"type" text NOT NULL,
	"ts" timestamp with time zone NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	"seq" bigserial NOT NULL,
	"model" text,
	"tool_name" text,
	"call_id" text,
	"failure_key" text,
	"failed" boolean,
	"severity" text,
	"turn_index" integer,
	"payload" jsonb NOT NULL,
	CONSTRAINT "event_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
CREATE TABLE "failure" (
	"workspace_id" text NOT NULL,
	"id" bigserial NOT NULL,
	"event_id" text NOT NULL,
	"failure_key" text NOT NULL,
	"tool_name" text NOT NULL,
	"domain" text,
	"severity" text NOT NULL,
	"weight" double precision NOT NULL,
	"ts" timestamp with time zone NOT NULL,
	"session_id" text NOT NULL,
	"agent" text NOT NULL,
	"model" text,
	"error_message" text,
	"http_status" integer,
	"args_hash" text,
	CONSTRAINT "failure_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
CREATE TABLE "global_tool_pattern" (
	"organization_id" text NOT NULL,
	"tool_name" text NOT NULL,
	"status" text NOT NULL,
	"workspace_ids" jsonb NOT NULL,
	"avg_failure_rate" double precision NOT NULL,
	"detected_at" timestamp with time zone NOT NULL,
	"cleared_at" timestamp with time zone,
	"cleared_by" text,
	CONSTRAINT "global_tool_pattern_organization_id_tool_name_pk" PRIMARY KEY("organization_id","tool_name")
);
--> statement-breakpoint
CREATE TABLE "installation" (
	"key" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "key_state" (
	"workspace_id" text NOT NULL,
	"failure_key" text NOT NULL,
	"tool_name" text NOT NULL,
	"level" text NOT NULL,
	"domain" text,
	"state" text NOT NULL,
	"effective_state" text NOT NULL,
	"effective_failures" double precision DEFAULT 0 NOT NULL,
	"threshold" double precision,
	"consecutive_failures" integer DEFAULT 0 NOT NULL,
	"total_calls" integer DEFAULT 0 NOT NULL,
	"total_failures" integer DEFAULT 0 NOT NULL,
	"last_failure_at" timestamp with time zone,
	"last_event_at" timestamp with time zone,
	"escalation_expires" timestamp with time zone,
	"data" jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "key_state_workspace_id_failure_key_pk" PRIMARY KEY("workspace_id","failure_key")
);
--> statement-breakpoint
CREATE TABLE "member" (
	"organization_id" text NOT NULL,
	"user_id" text NOT NULL,
	"role" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "member_organization_id_user_id_pk" PRIMARY KEY("organization_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "model_behaviour_profile" (
	"workspace_id" text NOT NULL,
	"model" text NOT NULL,
	"pattern_counts" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"nudges_sent" integer DEFAULT 0 NOT NULL,
	"nudges_effective" integer DEFAULT 0 NOT NULL,
	"turns" integer DEFAULT 0 NOT NULL,
	"stalled_turns" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "model_behaviour_profile_workspace_id_model_pk" PRIMARY KEY("workspace_id","model")
);
--> statement-breakpoint
CREATE TABLE "model_suggestion" (
	"workspace_id" text NOT NULL,
	"session_id" text NOT NULL,
	"failure_key" text NOT NULL,
	"current_model" text NOT NULL,
	"suggested_model" text NOT NULL,
	"strategy" text NOT NULL,
	"current_success_rate" double precision NOT NULL,
	"suggested_success_rate" double precision NOT NULL,
	"ts" timestamp with time zone NOT NULL,
	CONSTRAINT "model_suggestion_workspace_id_session_id_failure_key_current_model_pk" PRIMARY KEY("workspace_id","session_id","failure_key","current_model")
);
--> statement-breakpoint
CREATE TABLE "model_tool_profile" (
	"workspace_id" text NOT NULL,
	"model" text NOT NULL,
	"failure_key" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"failures" integer DEFAULT 0 NOT NULL,
	"last_failure_at" timestamp with time zone,
	CONSTRAINT "model_tool_profile_workspace_id_model_failure_key_pk" PRIMARY KEY("workspace_id","model","failure_key")
);
--> statement-breakpoint
CREATE TABLE "nudge" (
	"workspace_id" text NOT NULL,
	"id" bigserial NOT NULL,
	"session_id" text NOT NULL,
	"model" text,
	"pattern_type" text,
	"nudge_type" text NOT NULL,
	"message" text NOT NULL,
	"ts" timestamp with time zone NOT NULL,
	CONSTRAINT "nudge_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
CREATE TABLE "organization" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"config" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "pattern_detection" (
	"workspace_id" text NOT NULL,
	"id" bigserial NOT NULL,
	"session_id" text NOT NULL,
	"model" text,
	"pattern_type" text NOT NULL,
	"severity" text NOT NULL,
	"count" integer NOT NULL,
	"tool_sequence" jsonb NOT NULL,
	"ts" timestamp with time zone NOT NULL,
	CONSTRAINT "pattern_detection_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
CREATE TABLE "session" (
	"id" text PRIMARY KEY NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"token" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"ip_address" text,
	"user_agent" text,
	"user_id" text NOT NULL,
	CONSTRAINT "session_token_unique" UNIQUE("token")
);
--> statement-breakpoint
CREATE TABLE "state_transition" (
	"workspace_id" text NOT NULL,
	"id" bigserial NOT NULL,
	"failure_key" text NOT NULL,
	"from_state" text NOT NULL,
	"to_state" text NOT NULL,
	"reason" text,
	"actor" text,
	"at" timestamp with time zone NOT NULL,
	CONSTRAINT "state_transition_workspace_id_id_pk" PRIMARY KEY("workspace_id","id")
);
--> statement-breakpoint
CREATE TABLE "user" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"email" text NOT NULL,
	"email_verified" boolean DEFAULT false NOT NULL,
	"image" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "user_email_unique" UNIQUE("email")
);
--> statement-breakpoint
CREATE TABLE "verification" (
	"id" text PRIMARY KEY NOT NULL,
	"identifier" text NOT NULL,
	"value" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "workspace" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"slug" text NOT NULL,
	"name" text NOT NULL,
	"config" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "workspace_slug_unique" UNIQUE("slug")
);
--> statement-breakpoint
ALTER TABLE "account" ADD CONSTRAINT "account_user_id_user_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."user"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_key" ADD CONSTRAINT "api_key_workspace_id_workspace_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspace"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "member" ADD CONSTRAINT "member_organization_id_organization_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organization"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "member" ADD CONSTRAINT "member_user_id_user_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."user"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "session" ADD CONSTRAINT "session_user_id_user_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."user"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workspace" ADD CONSTRAINT "workspace_organization_id_organization_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organization"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "account_user_idx" ON "account" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "session_ws_last_event_idx" ON "agent_session" USING btree ("workspace_id","last_event_at");--> statement-breakpoint
CREATE INDEX "session_ws_agent_start_idx" ON "agent_session" USING btree ("workspace_id","agent","started_at");--> statement-breakpoint
CREATE INDEX "session_ws_paused_idx" ON "agent_session" USING btree ("workspace_id") WHERE paused;--> statement-breakpoint
CREATE UNIQUE INDEX "api_key_hash_idx" ON "api_key" USING btree ("hash");--> statement-breakpoint
CREATE INDEX "approval_ws_status_idx" ON "approval" USING btree ("workspace_id","status","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "approval_ws_pending_key_idx" ON "approval" USING btree ("workspace_id","failure_key") WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX "audit_ws_time_idx" ON "audit_log" USING btree ("workspace_id","created_at");--> statement-breakpoint
CREATE INDEX "audit_org_time_idx" ON "audit_log" USING btree ("organization_id","created_at");--> statement-breakpoint
CREATE INDEX "event_ws_session_idx" ON "event" USING btree ("workspace_id","session_id","seq");--> statement-breakpoint
CREATE INDEX "event_ws_time_idx" ON "event" USING btree ("workspace_id","ts");--> statement-breakpoint
CREATE INDEX "event_ws_key_time_idx" ON "event" USING btree ("workspace_id","failure_key","ts");--> statement-breakpoint
CREATE INDEX "event_ws_call_idx" ON "event" USING btree ("workspace_id","session_id","call_id");--> statement-breakpoint
CREATE INDEX "failure_ws_key_time_idx" ON "failure" USING btree ("workspace_id","failure_key","ts");--> statement-breakpoint
CREATE INDEX "failure_ws_domain_time_idx" ON "failure" USING btree ("workspace_id","domain","ts");--> statement-breakpoint
CREATE INDEX "failure_ws_time_idx" ON "failure" USING btree ("workspace_id","ts");--> statement-breakpoint
CREATE INDEX "failure_ws_tool_time_idx" ON "failure" USING btree ("workspace_id","tool_name","ts");--> statement-breakpoint
CREATE INDEX "key_state_ws_tool_idx" ON "key_state" USING btree ("workspace_id","tool_name");--> statement-breakpoint
CREATE INDEX "key_state_ws_state_idx" ON "key_state" USING btree ("workspace_id","effective_state");--> statement-breakpoint
CREATE INDEX "key_state_ws_last_failure_idx" ON "key_state" USING btree ("workspace_id","last_failure_at");--> statement-breakpoint
CREATE INDEX "member_user_idx" ON "member" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "model_suggestion_ws_time_idx" ON "model_suggestion" USING btree ("workspace_id","ts");--> statement-breakpoint
CREATE INDEX "model_tool_ws_key_idx" ON "model_tool_profile" USING btree ("workspace_id","failure_key");--> statement-breakpoint
CREATE INDEX "nudge_ws_time_idx" ON "nudge" USING btree ("workspace_id","ts");--> statement-breakpoint
CREATE INDEX "nudge_ws_session_idx" ON "nudge" USING btree ("workspace_id","session_id","ts");--> statement-breakpoint
CREATE INDEX "pattern_ws_time_idx" ON "pattern_detection" USING btree ("workspace_id","ts");--> statement-breakpoint
CREATE INDEX "pattern_ws_session_idx" ON "pattern_detection" USING btree ("workspace_id","session_id","ts");--> statement-breakpoint
CREATE INDEX "session_user_idx" ON "session" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "transition_ws_key_idx" ON "state_transition" USING btree ("workspace_id","failure_key","at");--> statement-breakpoint
CREATE INDEX "transition_ws_time_idx" ON "state_transition" USING btree ("workspace_id","at");--> statement-breakpoint
CREATE INDEX "workspace_org_idx" ON "workspace" USING btree ("organization_id");