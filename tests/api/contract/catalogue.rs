//! Pets and categories: listing, uniqueness, references, deletions.

use petstore::domain::*;
use petstore::{Error, ErrorCode, Petstore};

use super::support::*;
use ErrorCode::*;
use PetStatus::*;

pub(super) async fn pets_are_listed_filtered_sorted_and_paged(p: &dyn Petstore, t: &mut Transcript) {
    let dogs = t.ok("create Dogs", p.create_category(category("Dogs")).await).id;
    let cats = t.ok("create Cats", p.create_category(category("Cats")).await).id;
    assert_eq!((dogs, cats), (cid(1), cid(2)));

    let rex = t.ok("create Rex", p.create_pet(pet_in("Rex", dogs)).await);
    assert_eq!(
        (rex.id, rex.name.as_str(), rex.category_id, rex.status),
        (pid(1), "Rex", Some(dogs), Available)
    );
    assert_eq!(rex.description, None);
    let shy = NewPet {
        status: Pending,
        description: Some(Description::parse("Shy").unwrap()),
        ..pet_in(" bella ", cats)
    };
    let bella = t.ok("create bella", p.create_pet(shy).await);
    assert_eq!((bella.id, bella.name.as_str(), bella.status), (pid(2), "bella", Pending));
    assert_eq!(bella.description.as_deref(), Some("Shy"));
    t.ok("create Élise", p.create_pet(pet_in("Élise", cats)).await);
    t.ok("create Max", p.create_pet(NewPet { status: Sold, ..pet_in("Max", dogs) }).await);
    t.ok("create Charlie", p.create_pet(pet("Charlie")).await);
    assert_eq!(t.ok("get Rex", p.get_pet(rex.id).await), rex);

    let list = |filter: PetFilter, page: Page| p.list_pets(filter, page);
    let everything = t.ok("list all", list(PetFilter::default(), all()).await);
    assert_eq!(names(&everything), ["Rex", "bella", "Élise", "Max", "Charlie"]);
    assert_eq!(everything.total, 5);
    assert_eq!(everything.items[0], rex);

    let by_status = PetFilter { statuses: vec![Pending, Sold], ..Default::default() };
    let listed = t.ok("pending or sold", list(by_status, all()).await);
    assert_eq!((names(&listed), listed.total), (vec!["bella", "Max"], 2));

    let listed = t.ok("cats", list(PetFilter { category_id: Some(cats), ..Default::default() }, all()).await);
    assert_eq!(names(&listed), ["bella", "Élise"]);
    let available_dogs =
        PetFilter { category_id: Some(dogs), statuses: vec![Available], ..Default::default() };
    assert_eq!(names(&t.ok("available dogs", list(available_dogs, all()).await)), ["Rex"]);

    // Case-insensitive, and beyond ASCII: "ÉLI" finds "Élise".
    for (q, expected) in [("ÉLI", vec!["Élise"]), ("éLiSe", vec!["Élise"]), ("LI", vec!["Élise", "Charlie"])]
    {
        let filter = PetFilter { name_contains: Some(name(q)), ..Default::default() };
        let listed = t.ok(&format!("q={q}"), list(filter, all()).await);
        assert_eq!(names(&listed), expected, "q={q}");
        assert_eq!(listed.total, expected.len() as u64);
    }
    // LIKE wildcards in the search text match literally.
    for q in ["%", "_"] {
        let filter = PetFilter { name_contains: Some(name(q)), ..Default::default() };
        let listed = t.ok(&format!("q={q}"), list(filter, all()).await);
        assert_eq!((listed.items.len(), listed.total), (0, 0), "q={q}");
    }
    // The loose search: a name with one typo from four letters on, or a description.
    for (text, expected) in [("Bela", vec!["bella"]), ("SHY", vec!["bella"]), ("Charrlie", vec!["Charlie"])] {
        let filter = PetFilter { search: Some(name(text)), ..Default::default() };
        let listed = t.ok(&format!("search={text}"), list(filter, all()).await);
        assert_eq!((names(&listed), listed.total), (expected, 1), "search={text}");
    }

    let by_ids = PetFilter { ids: vec![pid(5), pid(1), pid(99)], ..Default::default() };
    let listed = t.ok("ids 5, 1, 99", list(by_ids, all()).await);
    assert_eq!((names(&listed), listed.total), (vec!["Rex", "Charlie"], 2));

    // Sorting by name is checked on the ASCII names; ids break ties.
    let ascii = vec![pid(1), pid(2), pid(4), pid(5)];
    let sorted = PetFilter { ids: ascii.clone(), sort: PetSort::Name, ..Default::default() };
    assert_eq!(names(&t.ok("sort name", list(sorted, all()).await)), ["bella", "Charlie", "Max", "Rex"]);
    let sorted = PetFilter { ids: ascii, sort: PetSort::NameDesc, ..Default::default() };
    assert_eq!(names(&t.ok("sort -name", list(sorted, all()).await)), ["Rex", "Max", "Charlie", "bella"]);
    let sorted = PetFilter { sort: PetSort::IdDesc, ..Default::default() };
    assert_eq!(
        names(&t.ok("sort -id", list(sorted, all()).await)),
        ["Charlie", "Max", "Élise", "bella", "Rex"]
    );

    for (limit, offset, expected) in
        [(2, 0, vec!["Rex", "bella"]), (2, 2, vec!["Élise", "Max"]), (2, 4, vec!["Charlie"])]
    {
        let listed =
            t.ok(&format!("page {limit}/{offset}"), list(PetFilter::default(), page(limit, offset)).await);
        assert_eq!((names(&listed), listed.total), (expected, 5));
    }
    let beyond = t.ok("page beyond the end", list(PetFilter::default(), page(2, 10)).await);
    assert_eq!((beyond.items.len(), beyond.total), (0, 5));
}

pub(super) async fn missing_resources_are_not_found(p: &dyn Petstore, t: &mut Transcript) {
    // The client asks `GET /pets?id=7` and must turn the empty list into the store's error.
    let e = t.fails("get pet 7", p.get_pet(pid(7)).await, NotFound);
    assert_eq!(e, Error::not_found(PetId::WHAT, 7));

    let rex = t.ok("create Rex", p.create_pet(pet("Rex")).await);
    t.ok("delete Rex", p.delete_pet(rex.id).await);
    let e = t.fails("get deleted Rex", p.get_pet(rex.id).await, NotFound);
    assert_eq!(e, Error::not_found(PetId::WHAT, 1));

    let patch = PetPatch { name: Some(name("Ghost")), ..Default::default() };
    t.fails("replace pet 7", p.replace_pet(pid(7), pet("Ghost")).await, NotFound);
    t.fails("update pet 7", p.update_pet(pid(7), patch).await, NotFound);
    t.fails("delete pet 7", p.delete_pet(pid(7)).await, NotFound);
    t.fails("inventory of 7", p.get_inventory(pid(7)).await, NotFound);
    t.fails("count 7", p.set_inventory(pid(7), count(3)).await, NotFound);
    t.fails("adjust 7", p.adjust_inventory(pid(7), adjustment(1, "found")).await, NotFound);
    t.fails("trail of 7", p.list_adjustments(pid(7), all()).await, NotFound);
    t.fails("get category 7", p.get_category(cid(7)).await, NotFound);
    t.fails("replace category 7", p.replace_category(cid(7), category("Ghosts")).await, NotFound);
    t.fails("delete category 7", p.delete_category(cid(7)).await, NotFound);
    t.fails("get order 7", p.get_order(oid(7)).await, NotFound);
    t.fails("complete order 7", p.update_order(oid(7), complete()).await, NotFound);
    t.fails("cancel order 7", p.cancel_order(oid(7)).await, NotFound);
}

pub(super) async fn categories_are_unique_and_kept_while_in_use(p: &dyn Petstore, t: &mut Transcript) {
    let described =
        NewCategory { description: Some(Description::parse("Good boys").unwrap()), ..category("Dogs") };
    let dogs = t.ok("create Dogs", p.create_category(described).await);
    assert_eq!((dogs.id, dogs.name.as_str(), dogs.pet_count), (cid(1), "Dogs", 0));
    assert_eq!(dogs.description.as_deref(), Some("Good boys"));
    assert_eq!(t.ok("get Dogs", p.get_category(dogs.id).await), dogs);

    t.fails("create dogs", p.create_category(category("dogs")).await, DuplicateName);
    t.fails("create DOGS", p.create_category(category("  DOGS ")).await, DuplicateName);
    let cats = t.ok("create Cats", p.create_category(category("Cats")).await);
    assert_eq!(cats.id, cid(2));

    let felines = t.ok("rename Cats", p.replace_category(cats.id, category("Felines")).await);
    assert_eq!(
        (felines.id, felines.name.as_str(), felines.created_at),
        (cats.id, "Felines", cats.created_at)
    );
    t.fails("rename Felines to DOGS", p.replace_category(cats.id, category("DOGS")).await, DuplicateName);
    // A category may change the case of its own name; the replacement drops the description.
    let renamed = t.ok("rename Dogs to DOGS", p.replace_category(dogs.id, category("DOGS")).await);
    assert_eq!((renamed.name.as_str(), renamed.description), ("DOGS", None));

    let rex = t.ok("create Rex", p.create_pet(pet_in("Rex", dogs.id)).await);
    t.ok("create Fido", p.create_pet(pet_in("Fido", dogs.id)).await);
    assert_eq!(t.ok("get DOGS", p.get_category(dogs.id).await).pet_count, 2);

    let listed = t.ok("list", p.list_categories(all()).await);
    let rows: Vec<(&str, i64)> = listed.items.iter().map(|c| (c.name.as_str(), c.pet_count)).collect();
    assert_eq!((rows, listed.total), (vec![("DOGS", 2), ("Felines", 0)], 2));
    let second = t.ok("list page 2", p.list_categories(page(1, 1)).await);
    assert_eq!((second.items[0].id, second.total), (cats.id, 2));

    t.fails("delete DOGS", p.delete_category(dogs.id).await, CategoryInUse);
    t.ok("delete Felines", p.delete_category(cats.id).await);
    t.fails("get Felines", p.get_category(cats.id).await, NotFound);

    let homeless = PetPatch { category_id: Some(None), ..Default::default() };
    let moved = t.ok("Rex leaves DOGS", p.update_pet(rex.id, homeless).await);
    assert_eq!(moved.category_id, None);
    assert_eq!(t.ok("get DOGS", p.get_category(dogs.id).await).pet_count, 1);
}

pub(super) async fn references_and_deletions_are_checked(p: &dyn Petstore, t: &mut Transcript) {
    t.fails("create in category 9", p.create_pet(pet_in("Rex", cid(9))).await, InvalidReference);
    t.fails("order pet 9", p.place_order(order(pid(9), 1)).await, InvalidReference);
    let rex = pet_with_stock(p, t, "Rex", 1).await;
    assert_eq!(rex.id, pid(1), "a refused create takes no id");
    t.fails("move into category 9", p.replace_pet(rex.id, pet_in("Rex", cid(9))).await, InvalidReference);
    let into_nothing = PetPatch { category_id: Some(Some(cid(9))), ..Default::default() };
    t.fails("patch into category 9", p.update_pet(rex.id, into_nothing).await, InvalidReference);
    t.fails("empty patch", p.update_pet(rex.id, PetPatch::default()).await, ValidationFailed);

    let full =
        NewPet { status: Sold, description: Some(Description::parse("Old boy").unwrap()), ..pet("Rex II") };
    let replaced = t.ok("replace Rex", p.replace_pet(rex.id, full).await);
    assert_eq!((replaced.name.as_str(), replaced.status), ("Rex II", Sold));
    assert_eq!((replaced.description.as_deref(), replaced.created_at), (Some("Old boy"), rex.created_at));
    let partial = PetPatch { status: Some(Available), description: Some(None), ..Default::default() };
    let patched = t.ok("patch Rex", p.update_pet(rex.id, partial).await);
    assert_eq!((patched.name.as_str(), patched.status, patched.description), ("Rex II", Available, None));

    t.ok("order Rex", p.place_order(order(rex.id, 1)).await);
    t.fails("delete Rex", p.delete_pet(rex.id).await, PetHasOrders);
    let fido = t.ok("create Fido", p.create_pet(pet("Fido")).await);
    t.ok("delete Fido", p.delete_pet(fido.id).await);
    let left = t.ok("list", p.list_pets(PetFilter::default(), all()).await);
    assert_eq!((names(&left), left.total), (vec!["Rex II"], 1));
}
