-- Petstore schema, version 18: each staff member's proof key, with which the server checks
-- who made a write a till took while it could not reach the server (src/staff/proof.rs).
-- Never edit this file once landed.
--
-- The key is made from the PIN, which the server sees only when a PIN is set or typed: a
-- member whose PIN was set before this version gets theirs at their next sign-in with it.
-- A till's mirror keeps this schema too, and never has a key here.
ALTER TABLE staff ADD COLUMN proof_key BLOB CHECK (proof_key IS NULL OR length(proof_key) = 32);
