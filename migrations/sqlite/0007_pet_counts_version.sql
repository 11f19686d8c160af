-- Petstore schema, version 7. Never edit this file once landed.
--
-- A version per pet count row: it goes up whenever a pet joins or leaves that category and
-- status, or is renamed in it, in the same transaction as the change. Read with the count,
-- it tells a reader whether a list of pets (filtered by category and status, in name or id
-- order) is the very list it saw before, which lets the store keep bookmarks into long
-- lists (see src/store/bookmarks.rs). A version never goes down and a row is never
-- deleted, so the sum of a list's versions changes whenever the list does.
ALTER TABLE pet_counts ADD COLUMN version INTEGER NOT NULL DEFAULT 1;

DROP TRIGGER pet_counts_after_insert;
CREATE TRIGGER pet_counts_after_insert AFTER INSERT ON pets
BEGIN
    INSERT INTO pet_counts (category_id, status, pets) VALUES (coalesce(NEW.category_id, 0), NEW.status, 1)
        ON CONFLICT (category_id, status) DO UPDATE SET pets = pets + 1, version = version + 1;
END;

DROP TRIGGER pet_counts_after_delete;
CREATE TRIGGER pet_counts_after_delete AFTER DELETE ON pets
BEGIN
    UPDATE pet_counts SET pets = pets - 1, version = version + 1
        WHERE category_id = coalesce(OLD.category_id, 0) AND status = OLD.status;
END;

DROP TRIGGER pet_counts_after_update;
CREATE TRIGGER pet_counts_after_update AFTER UPDATE OF category_id, status ON pets
    WHEN OLD.category_id IS NOT NEW.category_id OR OLD.status IS NOT NEW.status
BEGIN
    UPDATE pet_counts SET pets = pets - 1, version = version + 1
        WHERE category_id = coalesce(OLD.category_id, 0) AND status = OLD.status;
    INSERT INTO pet_counts (category_id, status, pets) VALUES (coalesce(NEW.category_id, 0), NEW.status, 1)
        ON CONFLICT (category_id, status) DO UPDATE SET pets = pets + 1, version = version + 1;
END;

-- A rename moves a pet within its list's name order; an id never changes in Petstore, but
-- a list in id order would move too if one did.
CREATE TRIGGER pet_counts_after_rename AFTER UPDATE OF name_folded, id ON pets
    WHEN OLD.name_folded IS NOT NEW.name_folded OR OLD.id IS NOT NEW.id
BEGIN
    UPDATE pet_counts SET version = version + 1
        WHERE category_id = coalesce(NEW.category_id, 0) AND status = NEW.status;
END;
