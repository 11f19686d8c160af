-- Idempotency keys scoped by the identity of the API key that sent them (a named key's id,
-- an operator key's place in the server's key ring), which a rotation keeps, instead of by
-- a hash of its secret (SQLite's migration 0015). Never edit this file once landed.
--
-- The records kept so far are scoped by the hash of a secret, which only that secret can
-- recognise: no statement here can tell whose identity they belong to. They are marked, and
-- a replica moves each to its identity's scope when its client's key is next presented
-- (src/postgres/idempotency.rs, `claim`) or, for the operator's keys, as it starts; the rest
-- expire with the window. New records are scoped by identity (by_secret false).
ALTER TABLE idempotency_keys ADD COLUMN by_secret boolean NOT NULL DEFAULT true;
ALTER TABLE idempotency_keys ALTER COLUMN by_secret SET DEFAULT false;
