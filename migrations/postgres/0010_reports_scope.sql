-- A third scope of API key, `reports`, which calls only the GET operations that carry no
-- personal data (src/api_key.rs; migrations/sqlite/0014).
ALTER TABLE api_keys DROP CONSTRAINT api_keys_scope_check;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_scope_check CHECK (scope IN ('read', 'write', 'reports'));
