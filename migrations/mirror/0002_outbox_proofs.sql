-- Mirror schema, version 2: staff at a till that follows a server, and who made each write
-- taken offline. Never edit this file once landed.
--
-- A write a till takes while it cannot reach the server is made by the staff member signed
-- in at the till (perhaps with a manager's approval). The server learns who from proofs made
-- with their PINs over the write's Idempotency-Key (src/staff/proof.rs), made when the write
-- is queued, while the PINs' keys are at hand, and sent with it: the header values, as sent.
-- NULL for a write queued before this version, or by a till with no one signed in (it is
-- sent as the till's key's).
ALTER TABLE outbox ADD COLUMN staff_proof TEXT;
ALTER TABLE outbox ADD COLUMN approval_proof TEXT;

-- When the server's staff were last read (GET /staff/credentials) into the shop's `staff`
-- table of the mirror: NULL until then, and for a till whose key may not read them (not a
-- till's key), which then writes as its key, as before staff.
ALTER TABLE mirror_state ADD COLUMN staff_read_at TEXT;
