-- The @idemq/postgres table for the default name (idemq_records); the same SQL as migrate().
-- Run it with your migration tool; schemaSql({ table }) gives it for another name.
CREATE TABLE IF NOT EXISTS "idemq_records" (
  scope            text        NOT NULL,
  request_id       text        NOT NULL,
  -- I in progress, C completed, F failed, R released
  state            "char"      NOT NULL CHECK (state IN ('I', 'C', 'F', 'R')),
  attempt          integer     NOT NULL,
  fencing_token    bigint      NOT NULL,
  -- the claim's owner token; NULL once the record has ended (C, F, R)
  owner_token      text,
  fingerprint      text,
  lease_expires_at timestamptz,
  retain_ms        double precision,
  completed_at     timestamptz,
  -- every statement treats a record past this time as absent; the sweeper deletes it
  expires_at       timestamptz NOT NULL,
  -- JSON of the last failure: {"name","message","code"?}
  last_error       text,
  -- UTF-8 of the stored result (bytea: a result may hold any character, NUL too)
  result           bytea,
  result_omitted   text,
  PRIMARY KEY (scope, request_id)
);
CREATE INDEX IF NOT EXISTS "idemq_records_expires_at" ON "idemq_records" (expires_at);
