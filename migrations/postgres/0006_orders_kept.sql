-- Cancelled orders are kept (see migrations/sqlite/0010): cancelling stamps cancelled_at
-- instead of deleting the row. 0002's trigger on orders already fires on UPDATE, so a
-- cancellation reaches the feed as an order `updated`.

ALTER TABLE orders ADD COLUMN cancelled_at text;

-- A pet's open orders (the status rules count them: not complete, not cancelled) stay
-- one index range. Still a full index on pet_id first, for the trigger that keeps a pet
-- with orders (0005), for finding a pet's orders and for
-- deleting a pet's cancelled orders with it.
DROP INDEX orders_by_pet;
CREATE INDEX orders_by_pet ON orders (pet_id, complete, cancelled_at, id);
-- The open and the completed lists: only orders not cancelled, so the index is the same
-- size as before and a page of open orders never steps over cancelled ones. Placing an
-- order writes the same number of index entries as before: a new order is not cancelled,
-- so it never enters orders_cancelled.
DROP INDEX orders_by_complete;
CREATE INDEX orders_by_complete ON orders (complete, id) WHERE cancelled_at IS NULL;
CREATE INDEX orders_cancelled ON orders (id) WHERE cancelled_at IS NOT NULL;

-- The stock history: a change of an open order's quantity is an adjustment naming the order
-- (see migrations/sqlite/0010). Placing an order writes none, and this key is never checked
-- when one is placed (only when an adjustment is written or an order deleted).
ALTER TABLE inventory_adjustments ADD COLUMN order_id bigint REFERENCES orders (id) ON DELETE CASCADE;
CREATE INDEX inventory_adjustments_by_order ON inventory_adjustments (order_id) WHERE order_id IS NOT NULL;
