CREATE TABLE "open_call" (
	"workspace_id" text NOT NULL,
	"session_id" text NOT NULL,
	"call_id" text NOT NULL,
	"tool_name" text NOT NULL,
	"since" timestamp with time zone NOT NULL,
	"found_at" timestamp with time zone NOT NULL,
	"reported_at" timestamp with time zone,
	CONSTRAINT "open_call_workspace_id_session_id_call_id_pk" PRIMARY KEY("workspace_id","session_id","call_id")
);
