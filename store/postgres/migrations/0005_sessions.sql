-- hds schema, version 5: sessions that can end (API.md section 17).
-- Independent of migration 0004.
--
-- session_generation counts a user's password changes: a token issued in
-- an earlier generation is refused. Existing users start at 0, the
-- generation of every token issued before this migration.
ALTER TABLE hds_users ADD COLUMN session_generation bigint NOT NULL DEFAULT 0;

-- Sessions ended by a logout, looked up by (user_id, session_id) on every
-- request; a row may be deleted once until has passed.
CREATE TABLE hds_ended_sessions (
    user_id    text NOT NULL REFERENCES hds_users (id) ON DELETE CASCADE,
    session_id text NOT NULL,
    until      timestamptz NOT NULL,
    PRIMARY KEY (user_id, session_id)
);
CREATE INDEX hds_ended_sessions_until ON hds_ended_sessions (until);

-- Refresh tokens already used (refresh is single-use): the primary key
-- makes exactly one of concurrent uses win.
CREATE TABLE hds_used_tokens (
    user_id  text NOT NULL REFERENCES hds_users (id) ON DELETE CASCADE,
    token_id text NOT NULL,
    until    timestamptz NOT NULL,
    PRIMARY KEY (user_id, token_id)
);
CREATE INDEX hds_used_tokens_until ON hds_used_tokens (until);
