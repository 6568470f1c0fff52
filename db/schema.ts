/**
 * Database schema (drizzle). Two families of tables:
 *  - installation/organization data: users and auth (better-auth), organizations, members, workspaces;
 *  - workspace data: every table carries `workspace_id` as the first column of its primary key and of
 *    every unique constraint, so the schema can be distributed by workspace (Citus, SPEC 9).
 * Times are `timestamptz` as JS Dates at the edges; the engine works in epoch ms.
 */
import { getTableColumns, sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  boolean,
  doublePrecision,
  index,
  integer,
  smallint,
  json,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import type { FailureRecord, KeyHistory, KeyState, ResultLog, StoredResultLog } from "@/server/engine/types";

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });
const createdAt = () => ts("created_at").notNull().defaultNow();

// ---------------------------------------------------------------------------
// Auth (better-auth core schema; field names are better-auth's)
// ---------------------------------------------------------------------------

export const user = pgTable("user", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  email: text("email").notNull().unique(),
  emailVerified: boolean("email_verified").notNull().default(false),
  image: text("image"),
  createdAt: createdAt(),
  updatedAt: ts("updated_at").notNull().defaultNow(),
});

export const session = pgTable(
  "session",
  {
    id: text("id").primaryKey(),
    expiresAt: ts("expires_at").notNull(),
    token: text("token").notNull().unique(),
    createdAt: createdAt(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
    ipAddress: text("ip_address"),
    userAgent: text("user_agent"),
    userId: text("user_id")
      .notNull()
      .references(() => user.id, { onDelete: "cascade" }),
  },
  (t) => [index("session_user_idx").on(t.userId)],
);

export const account = pgTable(
  "account",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    providerId: text("provider_id").notNull(),
    userId: text("user_id")
      .notNull()
      .references(() => user.id, { onDelete: "cascade" }),
    accessToken: text("access_token"),
    refreshToken: text("refresh_token"),
    idToken: text("id_token"),
    accessTokenExpiresAt: ts("access_token_expires_at"),
    refreshTokenExpiresAt: ts("refresh_token_expires_at"),
    scope: text("scope"),
    password: text("password"),
    createdAt: createdAt(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [index("account_user_idx").on(t.userId)],
);

export const verification = pgTable("verification", {
  id: text("id").primaryKey(),
  identifier: text("identifier").notNull(),
  value: text("value").notNull(),
  expiresAt: ts("expires_at").notNull(),
  createdAt: createdAt(),
  updatedAt: ts("updated_at").notNull().defaultNow(),
});

// ---------------------------------------------------------------------------
// Tenancy
// ---------------------------------------------------------------------------

export const organization = pgTable("organization", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  /** Organization-level configuration document (defaults for its workspaces), camelCase ConfigDocument. */
  config: jsonb("config").notNull().default({}),
  createdAt: createdAt(),
});

export const ROLES = ["owner", "admin", "member", "viewer"] as const;
export type Role = (typeof ROLES)[number];

export const member = pgTable(
  "member",
  {
    organizationId: text("organization_id")
      .notNull()
      .references(() => organization.id, { onDelete: "cascade" }),
    userId: text("user_id")
      .notNull()
      .references(() => user.id, { onDelete: "cascade" }),
    role: text("role").$type<Role>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.userId] }), index("member_user_idx").on(t.userId)],
);

/**
 * An invitation by link to join an organization with a role (server/services/invitations.ts).
 * Only the SHA-256 of the link's token is stored; the link is shown once. Pending = not accepted,
 * not revoked and not expired.
 */
export const invitation = pgTable(
  "invitation",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organization.id, { onDelete: "cascade" }),
    /** Hex SHA-256 of the token in the link. */
    tokenHash: text("token_hash").notNull().unique(),
    role: text("role").$type<Role>().notNull(),
    createdBy: text("created_by"),
    /** The inviter's email, kept for the list and the audit log if their account goes. */
    createdByLabel: text("created_by_label").notNull(),
    createdAt: createdAt(),
    expiresAt: ts("expires_at").notNull(),
    revokedAt: ts("revoked_at"),
    /** Set when the link is used (claimed at sign-up before the account exists, so a link works once). */
    acceptedAt: ts("accepted_at"),
    acceptedBy: text("accepted_by"),
  },
  (t) => [index("invitation_org_idx").on(t.organizationId, t.createdAt)],
);

export const workspace = pgTable(
  "workspace",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organization.id, { onDelete: "cascade" }),
    slug: text("slug").notNull().unique(),
    name: text("name").notNull(),
    /** Workspace-level configuration document, camelCase ConfigDocument (SPEC 7.2). */
    config: jsonb("config").notNull().default({}),
    createdAt: createdAt(),
  },
  (t) => [index("workspace_org_idx").on(t.organizationId)],
);

export const API_KEY_SCOPES = ["agent", "admin"] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

export const apiKey = pgTable(
  "api_key",
  {
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspace.id, { onDelete: "cascade" }),
    id: text("id").notNull(),
    name: text("name").notNull(),
    /** First characters of the key, for display ("vgl_AbCd…"). */
    prefix: text("prefix").notNull(),
    /** Hex SHA-256 of the full key; the key itself is never stored. */
    hash: text("hash").notNull(),
    scope: text("scope").$type<ApiKeyScope>().notNull(),
    createdBy: text("created_by"),
    createdAt: createdAt(),
    lastUsedAt: ts("last_used_at"),
    revokedAt: ts("revoked_at"),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    // Keys are looked up by hash alone (the bearer value names no workspace); uniqueness is per
    // workspace so the table stays distributable by workspace_id (SPEC 9). 256-bit random values
    // do not collide; headless init refuses a value already registered elsewhere.
    index("api_key_hash_idx").on(t.hash),
    uniqueIndex("api_key_ws_hash_idx").on(t.workspaceId, t.hash),
  ],
);

export const auditLog = pgTable(
  "audit_log",
  {
    organizationId: text("organization_id").notNull(),
    id: bigserial("id", { mode: "number" }).notNull(),
    workspaceId: text("workspace_id"),
    actorType: text("actor_type").$type<"user" | "api_key" | "system">().notNull(),
    actorId: text("actor_id"),
    /** Human label: the user's email or the API key's prefix. */
    actorLabel: text("actor_label").notNull(),
    action: text("action").notNull(),
    target: text("target"),
    before: jsonb("before"),
    after: jsonb("after"),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.id] }),
    index("audit_ws_time_idx").on(t.workspaceId, t.createdAt),
    index("audit_org_time_idx").on(t.organizationId, t.createdAt),
  ],
);

// ---------------------------------------------------------------------------
// Workspace data: event log, trust state, sessions, behaviour, models
// ---------------------------------------------------------------------------

/**
 * The raw event log, partitioned by day on `ts` (native range partitioning, see
 * drizzle/0003_partition_event_log.sql and server/services/partitions.ts) so retention drops whole
 * partitions. A partitioned table's unique keys must include `ts`, so idempotency by
 * (workspace_id, id) lives in `event_id` below, and the log has no key of its own: a row is found
 * by (workspace_id, ts) and then its id (a primary key would cost every event an index entry,
 * ~150 bytes, and a write). Arguments are never stored verbatim: `payload`
 * holds the extracted key params, the args hash and a redacted preview (SPEC 2).
 */
export const event = pgTable(
  "event",
  {
    workspaceId: text("workspace_id").notNull(),
    id: text("id").notNull(),
    sessionId: text("session_id").notNull(),
    type: text("type").notNull(),
    /** Event time as applied by the engine (after the per-session clock clamp). */
    ts: ts("ts").notNull(),
    receivedAt: ts("received_at").notNull().defaultNow(),
    /** Insertion order within the workspace; ties in `ts` are ordered by it. */
    seq: bigserial("seq", { mode: "number" }).notNull(),
    model: text("model"),
    toolName: text("tool_name"),
    callId: text("call_id"),
    failureKey: text("failure_key"),
    failed: boolean("failed"),
    severity: text("severity"),
    turnIndex: integer("turn_index"),
    payload: jsonb("payload").notNull(),
  },
  (t) => [
    index("event_ws_session_idx").on(t.workspaceId, t.sessionId, t.seq),
    index("event_ws_time_idx").on(t.workspaceId, t.ts),
    index("event_ws_call_idx").on(t.workspaceId, t.sessionId, t.callId),
    // Watch mode's "would have asked / denied / paused" and the Policies page's hits count only the
    // calls a rule or policy touched: without these, a window's count read every tool call in it.
    // The predicates are literal in the queries (server/dashboard/policies.ts) so the planner can use them.
    index("event_ws_would_decide_idx")
      .on(t.workspaceId, t.ts)
      .where(sql`type = 'tool.call' and (payload->'guard'->>'wouldDecide') in ('ask', 'deny', 'pause')`),
    index("event_ws_policy_hit_idx").on(t.workspaceId, t.ts).where(sql`type = 'tool.call' and (payload->'guard'->'policy') is not null`),
  ],
);

/**
 * Every accepted event id (the idempotency key of the partitioned event log). No index besides the
 * key: every event inserts a row here, and retention deletes the ids of the events it deletes (by
 * key), so an index on `ts` would cost every event for a job that runs once an hour.
 */
export const eventId = pgTable(
  "event_id",
  {
    workspaceId: text("workspace_id").notNull(),
    id: text("id").notNull(),
    ts: ts("ts").notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.id] })],
);

/** Failure history: one row per failed tool.result, with its classification. */
export const failure = pgTable(
  "failure",
  {
    workspaceId: text("workspace_id").notNull(),
    id: bigserial("id", { mode: "number" }).notNull(),
    eventId: text("event_id").notNull(),
    failureKey: text("failure_key").notNull(),
    toolName: text("tool_name").notNull(),
    domain: text("domain"),
    severity: text("severity").notNull(),
    weight: doublePrecision("weight").notNull(),
    ts: ts("ts").notNull(),
    sessionId: text("session_id").notNull(),
    agent: text("agent").notNull(),
    model: text("model"),
    errorMessage: text("error_message"),
    httpStatus: integer("http_status"),
    argsHash: text("args_hash"),
    /** The error message's failure group (server/engine/failure-fingerprint.ts), set at ingest. */
    fingerprint: text("fingerprint"),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    index("failure_ws_fingerprint_time_idx").on(t.workspaceId, t.fingerprint, t.ts),
    index("failure_ws_key_time_idx").on(t.workspaceId, t.failureKey, t.ts),
    index("failure_ws_domain_time_idx").on(t.workspaceId, t.domain, t.ts),
    index("failure_ws_time_idx").on(t.workspaceId, t.ts),
    index("failure_ws_tool_time_idx").on(t.workspaceId, t.toolName, t.ts),
  ],
);

/**
 * Trust state per failure key, including the `@domain:<d>` and `@tool:<t>` level states.
 * `trust` is the engine's KeyState and `data` where its result log begins; the state's failures
 * are `key_failure` rows and its result log (kept under a rate rule only) `key_result_chunk` rows —
 * all apart, so that guard.check, approvals, resets and status read and write the small state
 * without the history; the other columns mirror them for dashboard queries.
 */
export const keyState = pgTable(
  "key_state",
  {
    workspaceId: text("workspace_id").notNull(),
    failureKey: text("failure_key").notNull(),
    toolName: text("tool_name").notNull(),
    level: text("level").$type<"key" | "domain" | "tool">().notNull(),
    domain: text("domain"),
    /** Plugin of the key's last result (plugin rules apply by it, e.g. when a recovery is denied). */
    pluginName: text("plugin_name"),
    state: text("state").notNull(),
    effectiveState: text("effective_state").notNull(),
    effectiveFailures: doublePrecision("effective_failures").notNull().default(0),
    threshold: doublePrecision("threshold"),
    consecutiveFailures: integer("consecutive_failures").notNull().default(0),
    totalCalls: integer("total_calls").notNull().default(0),
    totalFailures: integer("total_failures").notNull().default(0),
    lastFailureAt: ts("last_failure_at"),
    lastEventAt: ts("last_event_at"),
    escalationExpires: ts("escalation_expires"),
    trust: jsonb("trust").$type<KeyState>().notNull(),
    data: jsonb("data").$type<KeyHistory>().notNull(),
    /** Set by a person (keys.setState, SPEC 4.6): the engine's transitions keep the state until a reset. */
    manual: boolean("manual").notNull().default(false),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.failureKey] }),
    index("key_state_ws_tool_idx").on(t.workspaceId, t.toolName),
    index("key_state_ws_state_idx").on(t.workspaceId, t.effectiveState),
    index("key_state_ws_last_failure_idx").on(t.workspaceId, t.lastFailureAt),
  ],
);

/**
 * The failures a trust state keeps (the engine's FailureRecord, as it made it), one row each,
 * inserted as they come and deleted once the state no longer reads them. They used to be a
 * list inside `key_state.data`, which every batch touching the key rewrote whole: with 30 % of the
 * bench's results failing in the rule's filter, the 45 keys' lists grew to ~40 KB each within
 * 112,000 events and ingest fell from ~5,400 to ~2,900 events/s. Per state, `seq` order is time
 * order (the state's clock never goes back), so the failures out of the window are a prefix.
 */
export const keyFailure = pgTable(
  "key_failure",
  {
    workspaceId: text("workspace_id").notNull(),
    failureKey: text("failure_key").notNull(),
    seq: bigint("seq", { mode: "number" }).notNull(),
    record: jsonb("record").$type<FailureRecord>().notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.failureKey, t.seq] })],
);

/**
 * A trust state's result log under a rate rule, in chunks of RESULT_CHUNK_SIZE consecutive seqs
 * (server/engine/key-history.ts, resultChunks): a batch rewrites the chunks its results fall in and
 * deletes the ones the window passed, instead of the whole log (36,000 results for a key called 10
 * times a second under a one-hour window). `key_state.data.resultsFrom` says where the log begins.
 */
export const keyResultChunk = pgTable(
  "key_result_chunk",
  {
    workspaceId: text("workspace_id").notNull(),
    failureKey: text("failure_key").notNull(),
    chunk: integer("chunk").notNull(),
    log: jsonb("log").$type<StoredResultLog | ResultLog>().notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.failureKey, t.chunk] })],
);

const { data: _history, ...keyStateSummaryColumns } = getTableColumns(keyState);
/** key_state's columns but the history (`data`): what lists, details and status read. */
export const keyStateSummary = keyStateSummaryColumns;
export type KeyStateSummary = Omit<typeof keyState.$inferSelect, "data">;

/**
 * One row per (workspace, tool) that ever had a result: the lock a security block takes to block
 * the whole tool at once (FOR UPDATE) while ordinary batches of the tool only share it (FOR KEY
 * SHARE), so writers on different keys of one tool never wait for each other. A row lock routed by
 * workspace_id, unlike an advisory lock, holds on Citus.
 */
export const toolLock = pgTable(
  "tool_lock",
  {
    workspaceId: text("workspace_id").notNull(),
    toolName: text("tool_name").notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.toolName] })],
);

/** Every state change of a key, for the key's timeline. */
export const stateTransition = pgTable(
  "state_transition",
  {
    workspaceId: text("workspace_id").notNull(),
    id: bigserial("id", { mode: "number" }).notNull(),
    failureKey: text("failure_key").notNull(),
    fromState: text("from_state").notNull(),
    toState: text("to_state").notNull(),
    reason: text("reason"),
    actor: text("actor"),
    at: ts("at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    index("transition_ws_key_idx").on(t.workspaceId, t.failureKey, t.at),
    index("transition_ws_time_idx").on(t.workspaceId, t.at),
  ],
);

export const approval = pgTable(
  "approval",
  {
    workspaceId: text("workspace_id").notNull(),
    id: text("id").notNull(),
    kind: text("kind").$type<"recovery" | "tool_call" | "reset">().notNull().default("recovery"),
    failureKey: text("failure_key").notNull(),
    toolName: text("tool_name").notNull(),
    status: text("status").$type<"pending" | "approved" | "denied">().notNull(),
    createdAt: ts("created_at").notNull(),
    resolvedAt: ts("resolved_at"),
    resolvedBy: text("resolved_by"),
    comment: text("comment"),
    // Tool-call approvals (SPEC 7.2) only: the waiting call and what the person sees of it.
    sessionId: text("session_id"),
    callId: text("call_id"),
    agent: text("agent"),
    model: text("model"),
    argsPreview: text("args_preview"),
    reason: text("reason"),
    /** How an approved tool call was approved: this call only, or this key for the rest of the session. */
    scope: text("scope").$type<"once" | "session">(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    index("approval_ws_status_idx").on(t.workspaceId, t.status, t.createdAt),
    // At most one pending recovery per key.
    uniqueIndex("approval_ws_pending_key_idx")
      .on(t.workspaceId, t.failureKey)
      .where(sql`status = 'pending' and kind = 'recovery'`),
    // One tool-call approval per call (a CLI's call id is unique within its session).
    uniqueIndex("approval_ws_session_call_idx")
      .on(t.workspaceId, t.sessionId, t.callId)
      .where(sql`kind = 'tool_call'`),
    // Session-scoped grants: approved-for-the-session tool calls, looked up by session and key.
    index("approval_ws_session_grant_idx")
      .on(t.workspaceId, t.sessionId, t.failureKey)
      .where(sql`kind = 'tool_call' and scope = 'session' and status = 'approved'`),
  ],
);

/** An agent session: identity, clock, pause state, setting overrides and behaviour-engine state. */
export const agentSession = pgTable(
  "agent_session",
  {
    workspaceId: text("workspace_id").notNull(),
    sessionId: text("session_id").notNull(),
    agent: text("agent").notNull().default("default"),
    model: text("model"),
    startedAt: ts("started_at"),
    endedAt: ts("ended_at"),
    firstEventAt: ts("first_event_at"),
    lastEventAt: ts("last_event_at"),
    /** Per-session clock (SPEC 4.4), epoch ms: the time of the last event, as `last_event_at`. */
    clock: bigint("clock", { mode: "number" }),
    /**
     * The minute of the last event (`clock` / 60,000), indexed in place of `last_event_at`: every
     * guard.check and batch of a session rewrites its row, and an update that changes no indexed
     * column is HOT (no new index entries, the row stays on its page). The sessions list orders by
     * this column, then by `last_event_at`, which is the same order.
     */
    activeMinute: bigint("active_minute", { mode: "number" }).generatedAlwaysAs(sql`clock / 60000`),
    paused: boolean("paused").notNull().default(false),
    pauseReason: text("pause_reason"),
    pausedAt: ts("paused_at"),
    /** Who paused the session (sessions.pause: a person's email or a key's prefix); null when Vigil did. */
    pausedBy: text("paused_by"),
    /** Nudges wait in pending_nudge for this session: its next check, hook or ingest answer delivers them. */
    pendingNudges: boolean("pending_nudges").notNull().default(false),
    settings: jsonb("settings").notNull().default({}),
    /**
     * The engine's behaviour state (server/engine/behaviour-state.ts), written and read whole on every
     * guard.check and batch, never looked into by SQL: json, kept as sent, not jsonb, which PostgreSQL
     * would rebuild on every write and turn back into text on every read (drizzle/0015).
     */
    behaviour: json("behaviour"),
    eventCount: integer("event_count").notNull().default(0),
    callCount: integer("call_count").notNull().default(0),
    failureCount: integer("failure_count").notNull().default(0),
    patternCount: integer("pattern_count").notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.sessionId] }),
    index("session_ws_active_minute_idx").on(t.workspaceId, t.activeMinute.desc().nullsLast()),
    // Both decay-timeline indexes carry INCLUDE columns (drizzle/0027): session_id, ended_at here;
    // agent, started_at, ended_at in session_ws_ended_idx — so the timeline is an index-only scan.
    index("session_ws_agent_start_idx").on(t.workspaceId, t.agent, t.startedAt),
    index("session_ws_paused_idx").on(t.workspaceId).where(sql`paused`),
    // Session decay reads the failures' sessions that have ended (server/ingest/load.ts,
    // timelineStatement): most of them are still running, and this finds those that are not
    // without reading a wide session row per failure.
    index("session_ws_ended_idx").on(t.workspaceId, t.sessionId).where(sql`ended_at is not null`),
  ],
);

export const patternDetection = pgTable(
  "pattern_detection",
  {
    workspaceId: text("workspace_id").notNull(),
    id: bigserial("id", { mode: "number" }).notNull(),
    sessionId: text("session_id").notNull(),
    model: text("model"),
    patternType: text("pattern_type").notNull(),
    severity: text("severity").notNull(),
    count: integer("count").notNull(),
    toolSequence: jsonb("tool_sequence").notNull(),
    ts: ts("ts").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    index("pattern_ws_time_idx").on(t.workspaceId, t.ts),
    index("pattern_ws_session_idx").on(t.workspaceId, t.sessionId, t.ts),
  ],
);

export const nudge = pgTable(
  "nudge",
  {
    workspaceId: text("workspace_id").notNull(),
    id: bigserial("id", { mode: "number" }).notNull(),
    sessionId: text("session_id").notNull(),
    model: text("model"),
    patternType: text("pattern_type"),
    nudgeType: text("nudge_type").notNull(),
    message: text("message").notNull(),
    ts: ts("ts").notNull(),
    /** The engine's verdict (SPEC 5): true/false once decided, null while open or for guidance nudges. */
    effective: boolean("effective"),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    index("nudge_ws_time_idx").on(t.workspaceId, t.ts),
    index("nudge_ws_session_idx").on(t.workspaceId, t.sessionId, t.ts),
  ],
);

export const modelToolProfile = pgTable(
  "model_tool_profile",
  {
    workspaceId: text("workspace_id").notNull(),
    model: text("model").notNull(),
    failureKey: text("failure_key").notNull(),
    attempts: integer("attempts").notNull().default(0),
    failures: integer("failures").notNull().default(0),
    lastFailureAt: ts("last_failure_at"),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.model, t.failureKey] }),
    index("model_tool_ws_key_idx").on(t.workspaceId, t.failureKey),
  ],
);

export const modelBehaviourProfile = pgTable(
  "model_behaviour_profile",
  {
    workspaceId: text("workspace_id").notNull(),
    model: text("model").notNull(),
    patternCounts: jsonb("pattern_counts").notNull().default({}),
    nudgesSent: integer("nudges_sent").notNull().default(0),
    nudgesEffective: integer("nudges_effective").notNull().default(0),
    turns: integer("turns").notNull().default(0),
    stalledTurns: integer("stalled_turns").notNull().default(0),
    /** The model's API calls that failed (`model.error`, SPEC 7.6): the model's, never a tool's. */
    modelErrors: integer("model_errors").notNull().default(0),
    /**
     * A model's counters are spread over a few rows (MODEL_PROFILE_SHARDS), each batch adding to
     * one: every session of a model writes its profile, and an increment holds its row until the
     * transaction commits, so with one row per model the checks of a fleet queued one by one there.
     * Readers sum the rows (server/dashboard/patterns-data.ts).
     */
    shard: smallint("shard").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.model, t.shard] })],
);

export const modelSuggestion = pgTable(
  "model_suggestion",
  {
    workspaceId: text("workspace_id").notNull(),
    sessionId: text("session_id").notNull(),
    failureKey: text("failure_key").notNull(),
    currentModel: text("current_model").notNull(),
    suggestedModel: text("suggested_model").notNull(),
    strategy: text("strategy").notNull(),
    currentSuccessRate: doublePrecision("current_success_rate").notNull(),
    suggestedSuccessRate: doublePrecision("suggested_success_rate").notNull(),
    ts: ts("ts").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.sessionId, t.failureKey, t.currentModel] }),
    index("model_suggestion_ws_time_idx").on(t.workspaceId, t.ts),
  ],
);

/** Daily roll-up per tool (kept past retention): results and failures per day. */
export const dailyToolStat = pgTable(
  "daily_tool_stat",
  {
    workspaceId: text("workspace_id").notNull(),
    day: text("day").notNull(), // YYYY-MM-DD (UTC)
    toolName: text("tool_name").notNull(),
    /**
     * One row per failure key, not per tool: a batch only locks roll-up rows of keys it already
     * holds, so writers on different keys of one tool never wait for each other. Readers sum.
     */
    failureKey: text("failure_key").notNull().default(""),
    results: integer("results").notNull().default(0),
    failures: integer("failures").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.day, t.toolName, t.failureKey] })],
);

/** The counters of a key's day, in daily_key_stat (per model) and daily_key_total (all models). */
const keyDayCounts = () => ({
  results: integer("results").notNull().default(0),
  failed: integer("failed").notNull().default(0),
  lastFailedAt: ts("last_failed_at"),
  failures: integer("failures").notNull().default(0),
  lastFailureAt: ts("last_failure_at"),
});

/**
 * Daily roll-up of tool results per failure key and model (`''` for none), kept in step with the
 * raw rows by the batch (server/ingest/persist.ts) and pruned with them (retention.ts): the Models,
 * Overview and Failures pages read whole days here and only a range's partial edge days raw.
 * `results`/`failed`/`last_failed_at` count tool.result events (event.model); `failures`/
 * `last_failure_at` count failure rows (failure.model).
 */
export const dailyKeyStat = pgTable(
  "daily_key_stat",
  {
    workspaceId: text("workspace_id").notNull(),
    day: text("day").notNull(), // YYYY-MM-DD (UTC)
    failureKey: text("failure_key").notNull(),
    model: text("model").notNull().default(""),
    toolName: text("tool_name").notNull(),
    ...keyDayCounts(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.day, t.failureKey, t.model] }),
    // Failure counts read only the rows with failures: most keys of a day only succeed.
    index("daily_key_stat_failures_idx").on(t.workspaceId, t.day).where(sql`failures > 0`),
    // The cells of a few keys ranked elsewhere (daily_key_total): their days, not the window's keys.
    index("daily_key_stat_key_day_idx").on(t.workspaceId, t.failureKey, t.day),
  ],
);

/**
 * daily_key_stat summed over models: a row per UTC day and failure key, to rank keys over a window
 * (Models' matrix, Overview's top keys) from a sixth of the rows. Kept by the same statements, pruned
 * and recounted with it.
 */
export const dailyKeyTotal = pgTable(
  "daily_key_total",
  {
    workspaceId: text("workspace_id").notNull(),
    day: text("day").notNull(), // YYYY-MM-DD (UTC)
    failureKey: text("failure_key").notNull(),
    toolName: text("tool_name").notNull(),
    ...keyDayCounts(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.day, t.failureKey] })],
);

/**
 * Failures per UTC day and failure group (`failure.fingerprint`): the Failures page's groups and
 * Overview's top reasons over a window read these rows instead of every failure of it. `errorMessage`
 * is the day's greatest message (the raw aggregate's `max(error_message)`).
 */
export const dailyFailureGroup = pgTable(
  "daily_failure_group",
  {
    workspaceId: text("workspace_id").notNull(),
    day: text("day").notNull(), // YYYY-MM-DD (UTC)
    fingerprint: text("fingerprint").notNull(),
    failures: integer("failures").notNull().default(0),
    firstAt: ts("first_at").notNull(),
    lastAt: ts("last_at").notNull(),
    errorMessage: text("error_message"),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.day, t.fingerprint] })],
);

/**
 * The distinct failure keys, tools, agents and sessions of a failure group per UTC day (`kind`:
 * 'key' | 'tool' | 'agent' | 'session'): a group's distinct counts and names over a window, read
 * from an index alone — the primary key's (by day) for a window of a few days, the group index's
 * (a group's values of a kind in order, each value's days together) for a longer one.
 */
export const dailyFailureGroupMember = pgTable(
  "daily_failure_group_member",
  {
    workspaceId: text("workspace_id").notNull(),
    day: text("day").notNull(), // YYYY-MM-DD (UTC)
    fingerprint: text("fingerprint").notNull(),
    kind: text("kind").$type<"key" | "tool" | "agent" | "session">().notNull(),
    value: text("value").notNull(),
  },
  (t) => [
    primaryKey({ name: "daily_failure_group_member_pk", columns: [t.workspaceId, t.day, t.fingerprint, t.kind, t.value] }),
    index("daily_failure_group_member_group_idx").on(t.workspaceId, t.fingerprint, t.kind, t.value, t.day),
  ],
);

/** Daily roll-up of pattern detections (Patterns page), written with the detections and pruned with them. */
export const dailyPatternStat = pgTable(
  "daily_pattern_stat",
  {
    workspaceId: text("workspace_id").notNull(),
    day: text("day").notNull(), // YYYY-MM-DD (UTC)
    patternType: text("pattern_type").notNull(),
    severity: text("severity").notNull(),
    model: text("model").notNull().default(""),
    detections: integer("detections").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.day, t.patternType, t.severity, t.model] })],
);

/**
 * Nudges per UTC day, pattern and model (the Patterns page's nudge counts): `nudges` every nudge
 * ('' pattern: none), `interrupts` those of type interrupt, `sent` the pattern nudges that get a
 * verdict (not guidance) and `effective` those judged effective — a verdict adds to its nudge's
 * day. Kept by the batch's shared-counter statements, as daily_pattern_stat.
 */
export const dailyNudgeStat = pgTable(
  "daily_nudge_stat",
  {
    workspaceId: text("workspace_id").notNull(),
    day: text("day").notNull(), // YYYY-MM-DD (UTC)
    patternType: text("pattern_type").notNull().default(""),
    model: text("model").notNull().default(""),
    nudges: integer("nudges").notNull().default(0),
    interrupts: integer("interrupts").notNull().default(0),
    sent: integer("sent").notNull().default(0),
    effective: integer("effective").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.day, t.patternType, t.model] })],
);

/** Organization-level global tool patterns (SPEC 6 promotion). */
export const globalToolPattern = pgTable(
  "global_tool_pattern",
  {
    organizationId: text("organization_id").notNull(),
    toolName: text("tool_name").notNull(),
    status: text("status").$type<"active" | "cleared">().notNull(),
    workspaceIds: jsonb("workspace_ids").notNull(),
    avgFailureRate: doublePrecision("avg_failure_rate").notNull(),
    detectedAt: ts("detected_at").notNull(),
    clearedAt: ts("cleared_at"),
    clearedBy: text("cleared_by"),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.toolName] })],
);

/** Installation-wide values (e.g. the generated auth secret when VIGIL_AUTH_SECRET is unset). */
export const installation = pgTable("installation", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
});

/**
 * Sign-in attempts per throttle key (an account, a client address) in the current window, shared
 * by every instance on the database (server/sign-in-throttle.ts).
 */
export const signInThrottle = pgTable("sign_in_throttle", {
  key: text("key").primaryKey(),
  attempts: integer("attempts").notNull(),
  windowEndsAt: ts("window_ends_at").notNull(),
});

// ---------------------------------------------------------------------------
// OpenTelemetry ingest (SPEC 7.4 revision 2): spans are stored on receipt, traces applied later
// ---------------------------------------------------------------------------

/** An acknowledged span, kept until retention: a 200 never loses a span. `appliedAt` null = not applied yet. */
export const otlpSpan = pgTable(
  "otlp_span",
  {
    workspaceId: text("workspace_id").notNull(),
    traceId: text("trace_id").notNull(),
    spanId: text("span_id").notNull(),
    /** The decoded span (server/otlp/store.ts serializes it; nanosecond times as strings). */
    span: jsonb("span").notNull(),
    startAt: ts("start_at").notNull(),
    receivedAt: ts("received_at").notNull(),
    appliedAt: ts("applied_at"),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.traceId, t.spanId] }), index("otlp_span_ws_received_idx").on(t.workspaceId, t.receivedAt)],
);

/** One row per trace with spans waiting: applied once `dueAt` has passed (root arrived → at once; else settle time). */
export const otlpTrace = pgTable(
  "otlp_trace",
  {
    workspaceId: text("workspace_id").notNull(),
    traceId: text("trace_id").notNull(),
    organizationId: text("organization_id").notNull(),
    lastSpanAt: ts("last_span_at").notNull(),
    /** The root span (no parent) is stored: the trace is due as soon as a span arrives. */
    rootArrived: boolean("root_arrived").notNull().default(false),
    dueAt: ts("due_at").notNull(),
    /** True while some span of the trace is not applied. */
    pending: boolean("pending").notNull().default(true),
    appliedAt: ts("applied_at"),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.traceId] }), index("otlp_trace_due_idx").on(t.pending, t.dueAt)],
);

/** Sessions fed by OTLP, so they can be ended after the idle time (SPEC 7.4 "Session end"). */
export const otlpSession = pgTable(
  "otlp_session",
  {
    workspaceId: text("workspace_id").notNull(),
    sessionId: text("session_id").notNull(),
    organizationId: text("organization_id").notNull(),
    lastSpanAt: ts("last_span_at").notNull(),
    endedAt: ts("ended_at"),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.sessionId] }), index("otlp_session_open_idx").on(t.endedAt, t.lastSpanAt)],
);

// ---------------------------------------------------------------------------
// Notifications (webhook / Slack channels and their transactional outbox)
// ---------------------------------------------------------------------------

export const notificationChannel = pgTable(
  "notification_channel",
  {
    workspaceId: text("workspace_id").notNull(),
    id: text("id").notNull(),
    name: text("name").notNull(),
    type: text("type").$type<"webhook" | "slack">().notNull(),
    /** Secret for Slack (the URL is the credential); never returned after creation. */
    url: text("url").notNull(),
    /** HMAC secret of webhook channels; never returned after creation/rotation. */
    secret: text("secret").notNull(),
    events: jsonb("events").$type<string[]>().notNull(),
    minSeverity: text("min_severity").$type<"info" | "warning" | "critical">().notNull().default("info"),
    quietPeriodSeconds: integer("quiet_period_seconds").notNull().default(0),
    enabled: boolean("enabled").notNull().default(true),
    createdAt: createdAt(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.id] })],
);

export const notificationOutbox = pgTable(
  "notification_outbox",
  {
    workspaceId: text("workspace_id").notNull(),
    id: text("id").notNull(),
    channelId: text("channel_id").notNull(),
    event: text("event").notNull(),
    severity: text("severity").notNull(),
    /** The key, tool or session the notification is about (quiet-period grouping). */
    subject: text("subject").notNull(),
    payload: jsonb("payload").notNull(),
    status: text("status").$type<"pending" | "sent" | "failed" | "suppressed">().notNull(),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: ts("next_attempt_at").notNull(),
    leaseUntil: ts("lease_until"),
    lastStatusCode: integer("last_status_code"),
    lastResponse: text("last_response"),
    createdAt: ts("created_at").notNull(),
    sentAt: ts("sent_at"),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    index("notification_outbox_due_idx").on(t.nextAttemptAt).where(sql`status = 'pending'`),
    index("notification_outbox_channel_idx").on(t.workspaceId, t.channelId, t.createdAt),
    index("notification_outbox_subject_idx").on(t.workspaceId, t.channelId, t.subject, t.createdAt),
  ],
);

/**
 * Operator holds (SPEC 4.6): every session of an agent name (`scope` agent, `target` the name), or
 * the whole workspace (`scope` workspace, `target` ''), paused by a person until lifted. A session's
 * own pause stays on its row (`agent_session.paused`). guard.check reads the holds with the session.
 */
export const operatorHold = pgTable(
  "operator_hold",
  {
    workspaceId: text("workspace_id").notNull(),
    scope: text("scope").$type<"workspace" | "agent">().notNull(),
    target: text("target").notNull(),
    reason: text("reason").notNull(),
    since: ts("since").notNull().defaultNow(),
    by: text("by").notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.scope, t.target] })],
);

/**
 * Nudges and guidance that have not reached the agent yet (SPEC 4.6): a person's message, resume
 * guidance of an agent or the workspace, a nudge detected from OTLP (whose answers carry no
 * effects). Delivered once, on the session's next guard.check, hook answer or ingest.events answer;
 * `agent_session.pending_nudges` says that a session has some, so the checks that must deliver
 * them find out in the read they make anyway.
 */
export const pendingNudge = pgTable(
  "pending_nudge",
  {
    workspaceId: text("workspace_id").notNull(),
    id: bigserial("id", { mode: "number" }).notNull(),
    sessionId: text("session_id").notNull(),
    nudgeType: text("nudge_type").notNull(),
    patternType: text("pattern_type"),
    message: text("message").notNull(),
    /** `message` (sessions.message), `resume` (agent or workspace resume guidance), `otlp`. */
    source: text("source").notNull(),
    createdBy: text("created_by"),
    createdAt: ts("created_at").notNull().defaultNow(),
    deliveredAt: ts("delivered_at"),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    index("pending_nudge_ws_session_open_idx").on(t.workspaceId, t.sessionId, t.id).where(sql`delivered_at is null`),
  ],
);

/**
 * Open calls (SPEC 5.1): a `tool.call` found with no `tool.result` after `open_call_seconds` by the
 * sweep (server/ingest/open-call-sweep.ts). The row is the mark that the call was raised, so a call
 * is raised once whatever the number of sweeping instances (insert … on conflict do nothing); its
 * `hung_call` pattern effect goes out with the session's next answer (`reported_at`).
 */
export const openCall = pgTable(
  "open_call",
  {
    workspaceId: text("workspace_id").notNull(),
    sessionId: text("session_id").notNull(),
    callId: text("call_id").notNull(),
    toolName: text("tool_name").notNull(),
    /** The call's time. */
    since: ts("since").notNull(),
    foundAt: ts("found_at").notNull(),
    reportedAt: ts("reported_at"),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.sessionId, t.callId] })],
);
