-- A model's behaviour counters spread over a few rows (db/schema.ts, modelBehaviourProfile.shard).
-- (drizzle-kit wrote the new key before the column it names; the column comes first here.)
ALTER TABLE "model_behaviour_profile" ADD COLUMN "shard" smallint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "model_behaviour_profile" DROP CONSTRAINT "model_behaviour_profile_workspace_id_model_pk";--> statement-breakpoint
ALTER TABLE "model_behaviour_profile" ADD CONSTRAINT "model_behaviour_profile_workspace_id_model_shard_pk" PRIMARY KEY("workspace_id","model","shard");
