/**
 * The store's SQL, one statement per transition. Every statement reads the time once, as
 * `statement_timestamp()` (the database's clock, fixed for the statement, fresh for each one
 * inside a transaction), and treats a record past `expires_at` as absent.
 */

const NOW = 'statement_timestamp()';
const NOW_US = `(extract(epoch from ${NOW}) * 1000000)::bigint`;
const ms = (column: string) => `floor(extract(epoch from ${column}) * 1000)::float8`;
const after = (msExpression: string) => `${NOW} + ${msExpression} * interval '1 millisecond'`;
const LIVE = `r.expires_at > ${NOW}`;

export interface Statements {
  claim: string;
  complete: string;
  completeMany: string;
  fail: string;
  renew: string;
  release: string;
  inspect: string;
  sweep: string;
}

/** The statements on `table` (an already quoted identifier). */
export function statements(table: string): Statements {
  return {
    /*
     * Claims a batch of distinct ids ($1 scopes, $2 ids, $3 leases, $4 retentions,
     * $5 fingerprints, $6 new owner tokens). The upsert takes over what may be taken over; the
     * rows it left alone are read back and answered from. A row it left alone that the read
     * cannot answer for (one a concurrent statement committed after this one began) is `retry`:
     * the caller claims that id again. Rows are locked in key order, so batches never deadlock.
     */
    claim: `WITH q AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::float8[], $4::float8[], $5::text[], $6::text[])
    WITH ORDINALITY AS q(scope, request_id, lease_ms, retain_ms, fingerprint, token, i)
), claimed AS (
  INSERT INTO ${table} AS r (scope, request_id, state, attempt, fencing_token, owner_token,
    fingerprint, lease_expires_at, retain_ms, expires_at)
  SELECT q.scope, q.request_id, 'I', 1, ${NOW_US}, q.token, q.fingerprint, ${after('q.lease_ms')},
    q.retain_ms, ${after('(q.lease_ms + q.retain_ms)')}
  FROM q ORDER BY q.scope, q.request_id
  ON CONFLICT (scope, request_id) DO UPDATE SET
    state = 'I',
    attempt = CASE WHEN NOT (${LIVE}) THEN 1 WHEN r.state = 'R' THEN r.attempt
      ELSE r.attempt + 1 END,
    fencing_token = greatest(r.fencing_token + 1, excluded.fencing_token),
    owner_token = excluded.owner_token,
    fingerprint = CASE WHEN ${LIVE} THEN coalesce(excluded.fingerprint, r.fingerprint)
      ELSE excluded.fingerprint END,
    lease_expires_at = excluded.lease_expires_at,
    retain_ms = excluded.retain_ms,
    expires_at = excluded.expires_at,
    completed_at = NULL,
    result = NULL,
    result_omitted = NULL,
    last_error = CASE WHEN ${LIVE} THEN r.last_error END
  WHERE NOT (${LIVE})
    OR ((excluded.fingerprint IS NULL OR r.fingerprint IS NULL OR r.fingerprint = excluded.fingerprint)
      AND (r.state IN ('F', 'R') OR r.lease_expires_at <= ${NOW}))
  RETURNING r.scope, r.request_id, r.attempt, r.fencing_token, r.lease_expires_at, r.last_error,
    r.fingerprint
)
SELECT q.i::int AS i, 'claimed' AS status, c.attempt, c.fencing_token::float8 AS fencing_token,
  ${ms('c.lease_expires_at')} AS lease_expires_at, c.last_error,
  NULL::float8 AS completed_at, NULL::bytea AS result, NULL AS result_omitted,
  NULL::float8 AS retry_after_ms, c.fingerprint
FROM q JOIN claimed c ON c.scope = q.scope AND c.request_id = q.request_id
UNION ALL
SELECT q.i::int, CASE
    WHEN NOT (${LIVE}) THEN 'retry'
    WHEN q.fingerprint IS NOT NULL AND r.fingerprint IS NOT NULL AND r.fingerprint <> q.fingerprint
      THEN 'key-reuse'
    WHEN r.state = 'C' THEN 'duplicate'
    WHEN r.state = 'I' AND r.lease_expires_at > ${NOW} THEN 'in-progress'
    ELSE 'retry' END,
  r.attempt, NULL, NULL, NULL, ${ms('r.completed_at')}, r.result, r.result_omitted,
  ceil(extract(epoch from r.lease_expires_at - ${NOW}) * 1000)::float8, r.fingerprint
FROM q JOIN ${table} r ON r.scope = q.scope AND r.request_id = q.request_id
WHERE NOT EXISTS (SELECT 1 FROM claimed c WHERE c.scope = q.scope AND c.request_id = q.request_id)`,

    /* Completes one record: $1 scope, $2 id, $3 token, $4 ttl, $5 result, $6 omission. */
    complete: `UPDATE ${table} r SET state = 'C', owner_token = NULL, lease_expires_at = NULL,
  completed_at = ${NOW}, expires_at = ${after('$4::float8')}, result = $5::bytea,
  result_omitted = CASE WHEN $5::bytea IS NULL THEN $6::text END, last_error = NULL
WHERE r.scope = $1 AND r.request_id = $2 AND r.owner_token = $3 AND r.state = 'I' AND ${LIVE}`,

    /*
     * Completes a batch of distinct ids (arrays as in \`complete\`), locking rows in key order;
     * answers the ordinals of the requests that completed.
     */
    completeMany: `WITH q AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::float8[], $5::bytea[], $6::text[])
    WITH ORDINALITY AS q(scope, request_id, token, ttl_ms, result, result_omitted, i)
), owned AS (
  SELECT r.scope, r.request_id FROM ${table} r JOIN q ON r.scope = q.scope
    AND r.request_id = q.request_id AND r.owner_token = q.token
  WHERE r.state = 'I' AND ${LIVE}
  ORDER BY r.scope, r.request_id FOR UPDATE OF r
)
UPDATE ${table} r SET state = 'C', owner_token = NULL, lease_expires_at = NULL,
  completed_at = ${NOW}, expires_at = ${after('q.ttl_ms')}, result = q.result,
  result_omitted = CASE WHEN q.result IS NULL THEN q.result_omitted END, last_error = NULL
FROM q
WHERE r.scope = q.scope AND r.request_id = q.request_id AND r.owner_token = q.token
  AND r.state = 'I' AND ${LIVE}
  AND (r.scope, r.request_id) IN (SELECT scope, request_id FROM owned)
RETURNING q.i::int AS i`,

    /* Fails one record: $1 scope, $2 id, $3 token, $4 ttl, $5 error (json). */
    fail: `UPDATE ${table} r SET state = 'F', owner_token = NULL, lease_expires_at = NULL,
  expires_at = ${after('$4::float8')}, last_error = $5::text
WHERE r.scope = $1 AND r.request_id = $2 AND r.owner_token = $3 AND r.state = 'I' AND ${LIVE}`,

    /* Renews one lease: $1 scope, $2 id, $3 token, $4 lease; the record lives lease + retain. */
    renew: `UPDATE ${table} r SET lease_expires_at = ${after('$4::float8')},
  expires_at = greatest(r.expires_at, ${after('($4::float8 + r.retain_ms)')})
WHERE r.scope = $1 AND r.request_id = $2 AND r.owner_token = $3 AND r.state = 'I' AND ${LIVE}`,

    /* Releases one claim, keeping its expiry: $1 scope, $2 id, $3 token. */
    release: `UPDATE ${table} r SET state = 'R', owner_token = NULL, lease_expires_at = NULL
WHERE r.scope = $1 AND r.request_id = $2 AND r.owner_token = $3 AND r.state = 'I' AND ${LIVE}`,

    inspect: `SELECT r.state, r.attempt, r.fencing_token::float8 AS fencing_token, r.fingerprint,
  ${ms('r.lease_expires_at')} AS lease_expires_at, ${ms('r.completed_at')} AS completed_at,
  ${ms('r.expires_at')} AS expires_at, r.last_error, r.result, r.result_omitted
FROM ${table} r WHERE r.scope = $1 AND r.request_id = $2 AND ${LIVE}`,

    /* Deletes at most $1 expired records, skipping rows a claim holds; answers how many. */
    sweep: `DELETE FROM ${table} r WHERE (r.scope, r.request_id) IN (
  SELECT s.scope, s.request_id FROM ${table} s WHERE s.expires_at <= now()
  ORDER BY s.expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)`,
  };
}
