-- Petstore schema, version 15: idempotency keys scoped by the identity of the API key that
-- sent them (a named key's id, an operator key's place in the server's key ring), which a
-- rotation keeps, instead of by a hash of its secret. Never edit this file once landed.
--
-- The records kept so far are scoped by the hash of a secret, which only that secret can
-- recognise: no statement here can tell whose identity they belong to. They are marked, and
-- the server moves each to its identity's scope when its client's key is next presented
-- (src/store/idempotency.rs, `adopt`) or, for the operator's keys, as the server starts;
-- the rest expire with the window. New records are scoped by identity (by_secret = 0).
ALTER TABLE idempotency_keys ADD COLUMN by_secret INTEGER NOT NULL DEFAULT 0 CHECK (by_secret IN (0, 1));
UPDATE idempotency_keys SET by_secret = 1;
