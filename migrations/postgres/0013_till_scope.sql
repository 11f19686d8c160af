-- A fourth scope of API key, `till`, a till's key, which reads as `read` does and writes
-- only for the staff member signed in at it (src/api_key.rs). Never edit this file once
-- landed.
ALTER TABLE api_keys DROP CONSTRAINT api_keys_scope_check;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_scope_check CHECK (scope IN ('read', 'write', 'reports', 'till'));
