-- Petstore schema, version 9 (PostgreSQL): an order keeps the moment the till made it.
-- Never edit this file once landed.
--
-- As SQLite's 0013: `created_at` is when the server received the order, `placed_at` when
-- the till made it (NULL for an order placed straight on the server), and a counter sale's
-- `completed_at` is its `placed_at`. A column with no default: no table rewrite.

ALTER TABLE orders ADD COLUMN placed_at text;
