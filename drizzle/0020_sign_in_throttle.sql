-- Sign-in attempts per throttle key (an account, a client address) in the current window: every
-- instance on the database counts into the same rows, so the throttle's bound holds for a fleet.
CREATE TABLE "sign_in_throttle" (
	"key" text PRIMARY KEY NOT NULL,
	"attempts" integer NOT NULL,
	"window_ends_at" timestamp with time zone NOT NULL
);
