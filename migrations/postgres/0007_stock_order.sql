-- Petstore PostgreSQL schema, version 7. Never edit this file once landed.
--
-- An order's update of its pet's stock becomes a HOT update: PostgreSQL writes a new row
-- version in the same page and no index entry, but only when no indexed column changed.
-- `pets_by_stock (stock, id)` made every stock change a new entry in each of the pets'
-- seven indexes (the name, category and status lists among them). The Inventory's "lowest
-- stock first" now reads `stock_order`, a narrow copy of (stock, pet) kept by the triggers
-- below in the same transaction: a stock change moves one entry of one small index. With
-- room left in each page for the new versions (fillfactor), orders on one replica went
-- from 4,696/3,281/3,332/3,548/4,413/4,768 to 4,014/4,588/4,520/4,308/5,406/5,757 a second
-- in paired runs (tests/bench, 100,000 pets; the index simply dropped there, a median
-- gain of a fifth).
CREATE TABLE stock_order (
    level bigint NOT NULL,
    pet   bigint NOT NULL,
    PRIMARY KEY (level, pet)
);
INSERT INTO stock_order (level, pet) SELECT stock, id FROM pets;
DROP INDEX pets_by_stock;
-- Room in every page for the next versions of its rows; pages written from now on
-- (a seed, an import, the rows an update moves) keep it.
ALTER TABLE pets SET (fillfactor = 90);

-- New pets once per statement, from the statement's new rows (an import writes 100,000
-- in a few statements), as 0004 does for the counts.
CREATE FUNCTION stock_order_add_rows() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO stock_order (level, pet) SELECT stock, id FROM added;
    RETURN NULL;
END $$;

CREATE TRIGGER stock_order_after_insert AFTER INSERT ON pets
    REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION stock_order_add_rows();

-- A stock change or a deleted pet, row by row (one pet at a time is all the API does).
CREATE FUNCTION stock_order_follow() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM stock_order WHERE level = OLD.stock AND pet = OLD.id;
    IF TG_OP = 'UPDATE' THEN
        INSERT INTO stock_order (level, pet) VALUES (NEW.stock, NEW.id);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER stock_order_after_update AFTER UPDATE OF stock, id ON pets
    FOR EACH ROW WHEN (OLD.stock IS DISTINCT FROM NEW.stock OR OLD.id IS DISTINCT FROM NEW.id)
    EXECUTE FUNCTION stock_order_follow();
CREATE TRIGGER stock_order_after_delete AFTER DELETE ON pets
    FOR EACH ROW EXECUTE FUNCTION stock_order_follow();
