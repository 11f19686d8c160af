-- Petstore schema, version 10: cancelled orders are kept. Never edit this file once landed.
--
-- Cancelling an order returns its stock and stamps `cancelled_at` instead of deleting the
-- row, so the order stays for the record (and the stock history can show it). The change
-- feed's triggers need nothing new: a cancellation is an UPDATE, so 0008's
-- changes_order_updated reports it as an order `updated`, as clients now read it.

ALTER TABLE orders ADD COLUMN cancelled_at TEXT;

-- The status rules count a pet's open orders (not complete, not cancelled) and the Orders
-- screen lists the open or the completed ones: each of those reads stays one index range
-- with `cancelled_at` in the index (a range of NULLs), however many cancelled orders pile up.
-- orders_by_pet stays a full index on pet_id first: deleting a pet finds its orders (the
-- cancelled ones, deleted with it) and the foreign key check by it.
DROP INDEX orders_by_pet;
CREATE INDEX orders_by_pet ON orders (pet_id, complete, cancelled_at);
DROP INDEX orders_by_complete;
CREATE INDEX orders_by_complete ON orders (complete) WHERE cancelled_at IS NULL;
-- The Cancelled tab. Placing an order never writes to it (a new order is not cancelled).
CREATE INDEX orders_cancelled ON orders (cancelled_at) WHERE cancelled_at IS NOT NULL;

-- The stock history (GET /store/inventory/{petId}/history) derives an order's entries from
-- its row; the one stock movement the row cannot tell, a change of an open order's quantity,
-- is an adjustment that names the order. Such rows go with their order. Placing an order
-- writes none (it is the hot write).
ALTER TABLE inventory_adjustments ADD COLUMN order_id INTEGER REFERENCES orders (id) ON DELETE CASCADE;
CREATE INDEX inventory_adjustments_by_order ON inventory_adjustments (order_id) WHERE order_id IS NOT NULL;
