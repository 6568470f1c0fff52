-- Every event (every guard.check's recorded call too) inserted an entry into this index, for the
-- hourly retention job alone. Retention now deletes the ids of the events it deletes, by key.
DROP INDEX "event_id_ws_time_idx";
