-- A trust state's failures move out of key_state.data, which every batch touching the key rewrote
-- whole (with a flaky upstream, tens of KB per key per batch), into one row each, appended as they come.
CREATE TABLE "key_failure" (
	"workspace_id" text NOT NULL,
	"failure_key" text NOT NULL,
	"seq" bigint NOT NULL,
	"record" jsonb NOT NULL,
	CONSTRAINT "key_failure_workspace_id_failure_key_seq_pk" PRIMARY KEY("workspace_id","failure_key","seq")
);--> statement-breakpoint
INSERT INTO "key_failure" ("workspace_id", "failure_key", "seq", "record")
SELECT k."workspace_id", k."failure_key", (x->>'seq')::bigint, x
FROM "key_state" k CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(k."data"->'failures') = 'array' THEN k."data"->'failures' ELSE '[]'::jsonb END) AS x
WHERE x ? 'seq'
ON CONFLICT DO NOTHING;--> statement-breakpoint
UPDATE "key_state" SET "data" = "data" - 'failures' WHERE "data" ? 'failures';
