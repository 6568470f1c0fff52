-- A trust state's result log (under a rate rule) moves out of key_state.data, which every batch
-- touching the key rewrote whole, into chunks of 1,024 results. Rows stored before keep their log
-- in key_state.data until the key's next batch writes it as chunks (server/engine/trust.ts).
CREATE TABLE "key_result_chunk" (
	"workspace_id" text NOT NULL,
	"failure_key" text NOT NULL,
	"chunk" integer NOT NULL,
	"log" jsonb NOT NULL,
	CONSTRAINT "key_result_chunk_workspace_id_failure_key_chunk_pk" PRIMARY KEY("workspace_id","failure_key","chunk")
);
