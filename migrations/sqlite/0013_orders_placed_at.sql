-- Petstore schema, version 13: an order keeps the moment the till made it. Never edit this
-- file once landed.
--
-- A sale taken offline reaches the server later, perhaps after midnight: `created_at` is
-- when the server received it, `placed_at` when the till made it (as the till says, within
-- the bounds the API checks), NULL for an order placed straight on the server. A counter
-- sale's `completed_at` is its `placed_at`, so the day's takings count it on the day it was
-- made.

ALTER TABLE orders ADD COLUMN placed_at TEXT;
