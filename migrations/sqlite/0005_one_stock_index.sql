-- Petstore schema, version 5. Never edit this file once landed.
--
-- One index for the Inventory's stock order instead of two. An order moves its pet's entry
-- in every index holding `stock`, and the two such indexes (`pets_by_stock` of 0001 and
-- `pets_by_status_stock` of 0004) made 4 of the 6 random pages each order wrote. This one
-- keeps the stock-then-id order and carries the status, so the status filter is read from
-- the index alone (the list query keeps SQLite off the status indexes, see inventory.rs).
DROP INDEX pets_by_stock;
DROP INDEX pets_by_status_stock;
CREATE INDEX pets_by_stock_and_status ON pets (stock, id, status);
