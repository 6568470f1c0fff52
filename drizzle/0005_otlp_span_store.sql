CREATE TABLE "otlp_session" (
	"workspace_id" text NOT NULL,
	"session_id" text NOT NULL,
	"organization_id" text NOT NULL,
	"last_span_at" timestamp with time zone NOT NULL,
	"ended_at" timestamp with time zone,
	CONSTRAINT "otlp_session_workspace_id_session_id_pk" PRIMARY KEY("workspace_id","session_id")
);
--> statement-breakpoint
CREATE TABLE "otlp_span" (
	"workspace_id" text NOT NULL,
	"trace_id" text NOT NULL,
	"span_id" text NOT NULL,
	"span" jsonb NOT NULL,
	"start_at" timestamp with time zone NOT NULL,
	"received_at" timestamp with time zone NOT NULL,
	"applied_at" timestamp with time zone,
	CONSTRAINT "otlp_span_workspace_id_trace_id_span_id_pk" PRIMARY KEY("workspace_id","trace_id","span_id")
);
--> statement-breakpoint
CREATE TABLE "otlp_trace" (
	"workspace_id" text NOT NULL,
	"trace_id" text NOT NULL,
	"organization_id" text NOT NULL,
	"last_span_at" timestamp with time zone NOT NULL,
	"root_arrived" boolean DEFAULT false NOT NULL,
	"due_at" timestamp with time zone NOT NULL,
	"pending" boolean DEFAULT true NOT NULL,
	"applied_at" timestamp with time zone,
	CONSTRAINT "otlp_trace_workspace_id_trace_id_pk" PRIMARY KEY("workspace_id","trace_id")
);
--> statement-breakpoint
CREATE INDEX "otlp_session_open_idx" ON "otlp_session" USING btree ("ended_at","last_span_at");--> statement-breakpoint
CREATE INDEX "otlp_span_ws_received_idx" ON "otlp_span" USING btree ("workspace_id","received_at");--> statement-breakpoint
CREATE INDEX "otlp_trace_due_idx" ON "otlp_trace" USING btree ("pending","due_at");