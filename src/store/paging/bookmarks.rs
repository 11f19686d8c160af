//! Bookmarks into long lists. SQLite finds the row at offset N of a list by stepping over
//! the N rows before it along the index, so the fiftieth page of a category cost fifty times
//! the first (at a million pets, two thirds of serving such a page). A bookmark is the sort
//! key of the row at a round position of one list (every `STRIDE`-th row): a page further
//! on starts from the nearest bookmark before it and steps over fewer than `STRIDE` rows.
//!
//! "From the bookmark on" is, for a list by name, the rows of the bookmark's name from its
//! id on, then the rows of later names: two index ranges, read one after the other
//! ([`read`]). The row value `(name_folded, id) >= (?, ?)`
//! would say the same, but SQLite seeks on its first column only and steps over every pet
//! of that name, and a name can be shared by thousands of pets.
//!
//! A bookmark is only as good as the list it was taken in. Each is kept with the list's
//! version (migration 0007: it moves, in the same transaction, whenever a pet joins, leaves
//! or is renamed in the list), read in the same snapshot as the page; a list whose version
//! moved forgets its bookmarks. The version lives in the database, so writes by another
//! process count too.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use rusqlite::types::Value;
use rusqlite::{Connection, Row, params_from_iter};

use super::super::filter::{Filter, Source};
use crate::error::Result;

/// The distance between bookmarks, in rows: the most a page steps over once its list has
/// been read that far. The API's default page size, so that every page a client paging
/// with the default asks for starts exactly at a bookmark (the desktop app pages by 25, so
/// its pages start 0, 5, 10 or 15 rows past one): at 1,000,000 pets that took a tenth off
/// a filtered page against every 100th row (118 against 137 µs of server time per page,
/// offsets up to 1,000), for five times the bookmarks, which `MAX_KEPT` bounds.
pub(super) const STRIDE: u64 = crate::domain::Page::DEFAULT_LIMIT as u64;

/// The most bookmarks kept in all, so memory stays bounded whatever clients ask for (a
/// bookmark is a name and an id, so this is under a megabyte). Past it, all are forgotten.
const MAX_KEPT: usize = 4096;

/// The bookmarks of one store's lists.
#[derive(Default)]
pub(crate) struct Bookmarks {
    lists: Mutex<Lists>,
}

#[derive(Default)]
struct Lists {
    by_list: HashMap<String, Marks>,
    kept: usize,
}

/// One list's bookmarks: the sort key of the row at each bookmarked position.
#[derive(Default)]
struct Marks {
    version: i64,
    at: BTreeMap<u64, Vec<Value>>,
}

/// Where a page starts: the rows from a bookmark on, as `arms` (each `filter` narrowed to
/// one index range, to be read in turn: see [`read`]), and the offset left to step over
/// from there.
pub(super) struct Start {
    pub arms: Vec<Filter>,
    pub offset: u64,
}

impl Bookmarks {
    /// Where the page at `offset` of the list (`filter` over `source` in `order`, whose
    /// version is `version`) starts: from the bookmark at the round position before it,
    /// taken now if this list has none there yet. `None` when the page is near enough to
    /// the list's start, or `order` is not one a bookmark can serve.
    pub(super) fn start(
        &self,
        conn: &Connection,
        source: Source<'_>,
        filter: &Filter,
        order: &str,
        offset: u64,
        version: i64,
    ) -> Result<Option<Start>> {
        let position = offset / STRIDE * STRIDE;
        let Some(key) = SortKey::of(order) else { return Ok(None) };
        if position == 0 {
            return Ok(None);
        }
        let list = format!("{}\u{1f}{}\u{1f}{order}\u{1f}{:?}", source.from, filter.sql(), filter.params);
        let values = match self.nearest(&list, version, position) {
            Some((at, values)) if at == position => values,
            nearest => {
                // Step from the nearest bookmark (or the start) to `position`, once.
                let (from, arms) = match nearest {
                    Some((at, values)) => (at, key.from(filter, &values)),
                    None => (0, vec![filter.clone()]),
                };
                let width = key.columns.len();
                let columns = key.columns.join(", ");
                let found = read(
                    conn,
                    Source { columns: &columns, ..source },
                    &arms,
                    order,
                    1,
                    position - from,
                    |r| (0..width).map(|i| r.get::<_, Value>(i)).collect::<rusqlite::Result<Vec<_>>>(),
                )?
                .pop();
                // The list is shorter than the caller counted: no page there to start from.
                let Some(values) = found else { return Ok(None) };
                self.keep(list, version, position, values.clone());
                values
            }
        };
        Ok(Some(Start { arms: key.from(filter, &values), offset: offset - position }))
    }

    /// The bookmark of `list` at the greatest position up to `position`, forgetting the
    /// list's bookmarks if its version moved.
    fn nearest(&self, list: &str, version: i64, position: u64) -> Option<(u64, Vec<Value>)> {
        let mut lists = self.lists.lock().unwrap_or_else(|p| p.into_inner());
        let Lists { by_list, kept } = &mut *lists;
        let marks = by_list.get_mut(list)?;
        if marks.version != version {
            *kept -= marks.at.len();
            by_list.remove(list);
            return None;
        }
        marks.at.range(..=position).next_back().map(|(at, values)| (*at, values.clone()))
    }

    fn keep(&self, list: String, version: i64, position: u64, values: Vec<Value>) {
        let mut lists = self.lists.lock().unwrap_or_else(|p| p.into_inner());
        if lists.kept >= MAX_KEPT {
            *lists = Lists::default();
        }
        let Lists { by_list, kept } = &mut *lists;
        let marks = by_list.entry(list).or_default();
        if marks.version != version {
            // Another read took bookmarks in another version of the list meanwhile: the
            // newer version wins.
            if marks.version > version {
                return;
            }
            *kept -= marks.at.len();
            *marks = Marks { version, at: BTreeMap::new() };
        }
        if marks.at.insert(position, values).is_none() {
            *kept += 1;
        }
    }
}

/// The columns a list is sorted by, all in one direction: what a bookmark holds.
struct SortKey<'a> {
    columns: Vec<&'a str>,
    descending: bool,
}

impl<'a> SortKey<'a> {
    /// `order`'s columns, or `None` unless it has one or two, going the same way (every
    /// list of pets: by id, or by name and then id).
    fn of(order: &'a str) -> Option<Self> {
        let terms: Vec<(&str, bool)> = order
            .split(',')
            .map(|term| {
                let term = term.trim();
                term.strip_suffix(" DESC").map_or((term, false), |column| (column.trim(), true))
            })
            .collect();
        let descending = terms.first()?.1;
        (terms.len() <= 2 && terms.iter().all(|(_, d)| *d == descending))
            .then(|| Self { columns: terms.into_iter().map(|(column, _)| column).collect(), descending })
    }

    /// The rows of `filter` from the one whose sort key is `values` on, as index ranges
    /// in order: `k = ? AND id >= ?`, then `k > ?` (for a descending list, `<=` and `<`).
    fn from(&self, filter: &Filter, values: &[Value]) -> Vec<Filter> {
        let (from, after) = if self.descending { ("<=", "<") } else { (">=", ">") };
        let arm = |clause: String, values: &[Value]| {
            let mut arm = filter.clone();
            arm.and(&clause, values.iter().cloned());
            arm
        };
        match (&self.columns[..], values) {
            ([column], [value]) => vec![arm(format!("{column} {from} ?"), std::slice::from_ref(value))],
            ([first, second], [a, b]) => vec![
                arm(format!("{first} = ? AND {second} {from} ?"), &[a.clone(), b.clone()]),
                arm(format!("{first} {after} ?"), std::slice::from_ref(a)),
            ],
            _ => unreachable!("SortKey::of takes one or two columns, and a bookmark holds one value each"),
        }
    }
}

/// `limit` rows of the source's columns from `offset` on, of the rows of `arms` taken in turn: each arm
/// is one index range of the list read in `order`, and the arms follow each other in the
/// list (see [`SortKey::from`]), so the rows are those of the first arm, then of the next.
/// Read one after the other as plain range scans rather than as one `UNION ALL` under
/// `ORDER BY`: SQLite ran that as two co-routines and compared every row to merge them,
/// a sixth of a page, while in a shop where many pets share a name the first arm (the rest
/// of the bookmark's name) nearly always fills the page by itself.
pub(super) fn read<T>(
    conn: &Connection,
    source: Source<'_>,
    arms: &[Filter],
    order: &str,
    limit: u64,
    offset: u64,
    mut row: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
) -> Result<Vec<T>> {
    let mut items = Vec::new();
    let mut skip = offset;
    for arm in arms {
        let want = limit - items.len() as u64;
        if want == 0 {
            break;
        }
        let read_before = items.len();
        let paging = [Value::from(want as i64), Value::from(skip as i64)];
        let mut statement = conn.prepare_cached(&arm.page_sql(source, order, false))?;
        for item in statement.query_map(params_from_iter(arm.params.iter().chain(&paging)), &mut row)? {
            items.push(item?);
        }
        if items.len() > read_before {
            skip = 0;
        } else if skip > 0 {
            // The arm ended before `skip` rows: the next arm skips what is left.
            let had: i64 = conn
                .prepare_cached(&format!(
                    "SELECT count(*) FROM (SELECT 1 FROM {} {} LIMIT ?)",
                    source.from,
                    arm.sql()
                ))?
                .query_row(params_from_iter(arm.params.iter().chain([&Value::from(skip as i64)])), |r| {
                    r.get(0)
                })?;
            skip -= had as u64;
        }
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use rusqlite::params;

    use super::*;
    use crate::domain::{CategoryId, Name, NewPet, Page, PetFilter, PetId, PetPatch, PetSort, PetStatus};
    use crate::store::{engine, pets};

    impl Bookmarks {
        fn kept(&self) -> usize {
            self.lists.lock().unwrap().kept
        }
    }

    /// 1,500 pets over two categories and two statuses, with five names between them: a
    /// bookmark's name is shared by hundreds of pets, on both sides of it.
    fn shop(dir: &tempfile::TempDir) -> Connection {
        let conn = engine::open_writer(&dir.path().join("marks.db")).unwrap();
        conn.execute_batch("BEGIN").unwrap();
        for name in ["Cats", "Dogs"] {
            conn.execute(
                "INSERT INTO categories (name, name_folded, created_at) VALUES (?1, ?2, '2026-11-22T00:00:00Z')",
                params![name, name.to_lowercase()],
            )
            .unwrap();
        }
        let mut rng = fastrand::Rng::with_seed(6);
        for _ in 0..1_500 {
            let new = NewPet {
                price: None,
                sku: None,
                name: Name::parse(["Bella", "Max", "luna", "Charlie", "Milo"][rng.usize(..5)]).unwrap(),
                category_id: Some(CategoryId::try_from(rng.i64(1..=2)).unwrap()),
                status: if rng.u8(..4) == 0 { PetStatus::Sold } else { PetStatus::Available },
                description: None,
            };
            pets::create(&conn, &new).unwrap();
        }
        conn.execute_batch("COMMIT").unwrap();
        conn
    }

    /// Every list a bookmark serves (by name or id, either way; with a category, a
    /// status, both or neither), paged through here with bookmarks and by SQLite's own
    /// `OFFSET`, must agree row for row.
    fn assert_pages_agree(conn: &Connection, bookmarks: &Bookmarks) {
        let sorts = [
            (PetSort::Name, "name_folded, id"),
            (PetSort::NameDesc, "name_folded DESC, id DESC"),
            (PetSort::Id, "id"),
            (PetSort::IdDesc, "id DESC"),
        ];
        for (sort, order) in sorts {
            for (category, status) in
                [(Some(1), Some("available")), (Some(2), None), (None, Some("sold")), (None, None)]
            {
                let filter = PetFilter {
                    statuses: status.map(|s| vec![s.parse::<PetStatus>().unwrap()]).unwrap_or_default(),
                    category_id: category.map(|c| CategoryId::try_from(c).unwrap()),
                    sort,
                    ..PetFilter::default()
                };
                let sql = format!(
                    "SELECT id FROM pets WHERE (?1 IS NULL OR category_id = ?1) AND (?2 IS NULL OR status = ?2)
                     ORDER BY {order} LIMIT ?3 OFFSET ?4"
                );
                for (limit, offset) in
                    [(20, 0), (20, 100), (20, 180), (7, 199), (20, 230), (100, 301), (20, 333), (3, 520)]
                {
                    let page = Page::new(limit, offset).unwrap();
                    let got: Vec<i64> = pets::list(conn, bookmarks, &filter, page)
                        .unwrap()
                        .items
                        .iter()
                        .map(|p| p.id.get())
                        .collect();
                    let want: Vec<i64> = conn
                        .prepare(&sql)
                        .unwrap()
                        .query_map(params![category, status, limit, offset], |r| r.get(0))
                        .unwrap()
                        .collect::<rusqlite::Result<_>>()
                        .unwrap();
                    assert_eq!(got, want, "{filter:?} {page:?}");
                }
            }
        }
    }

    #[test]
    fn pages_from_bookmarks_are_the_pages_of_the_list_through_every_kind_of_change() {
        let dir = tempfile::tempdir().unwrap();
        let conn = shop(&dir);
        let bookmarks = Bookmarks::default();
        assert_pages_agree(&conn, &bookmarks);
        assert!(bookmarks.kept() > 0, "the pages past the first stride took bookmarks");
        // Served from the bookmarks now, and still the same pages.
        assert_pages_agree(&conn, &bookmarks);

        let pet = |id: i64| PetId::try_from(id).unwrap();
        let rename = PetPatch { name: Some(Name::parse("Aaron").unwrap()), ..PetPatch::default() };
        pets::update(&conn, pet(700), &rename).unwrap();
        assert_pages_agree(&conn, &bookmarks);
        let sell = PetPatch { status: Some(PetStatus::Sold), ..PetPatch::default() };
        pets::update(&conn, pet(5), &sell).unwrap();
        assert_pages_agree(&conn, &bookmarks);
        let move_over =
            PetPatch { category_id: Some(Some(CategoryId::try_from(2).unwrap())), ..PetPatch::default() };
        pets::update(&conn, pet(6), &move_over).unwrap();
        assert_pages_agree(&conn, &bookmarks);
        pets::delete(&conn, pet(3)).unwrap();
        assert_pages_agree(&conn, &bookmarks);
        let new = NewPet {
            price: None,
            sku: None,
            name: Name::parse("Bella").unwrap(),
            category_id: CategoryId::try_from(1).ok(),
            status: PetStatus::Available,
            description: None,
        };
        pets::create(&conn, &new).unwrap();
        assert_pages_agree(&conn, &bookmarks);
    }

    #[test]
    fn a_bookmark_reads_two_index_ranges_not_every_pet_of_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let conn = shop(&dir);
        // The Pets screen's list: a category's available pets by name.
        let mut filter = Filter::default();
        filter.and_in("status", [Value::from("available".to_owned())]);
        filter.and("category_id = ?", [Value::from(1)]);
        let key = SortKey::of("name_folded, id").unwrap();
        let arms = key.from(&filter, &[Value::from("luna".to_owned()), Value::from(700)]);
        let plans: Vec<Vec<String>> = arms
            .iter()
            .map(|arm| {
                let sql = arm.page_sql(
                    Source { columns: "id, name", from: "pets", key: "id" },
                    "name_folded, id",
                    false,
                );
                let paging = [Value::from(20), Value::from(0)];
                conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
                    .unwrap()
                    .query_map(params_from_iter(arm.params.iter().chain(&paging)), |r| r.get(3))
                    .unwrap()
                    .collect::<rusqlite::Result<_>>()
                    .unwrap()
            })
            .collect();
        let index = "USING COVERING INDEX pets_by_category_status_name";
        assert_eq!(
            plans,
            [
                [format!("SEARCH pets {index} (category_id=? AND status=? AND name_folded=? AND id>?)")],
                [format!("SEARCH pets {index} (category_id=? AND status=? AND name_folded>?)")],
            ],
            "two index ranges, each read in order: no pet is stepped over and nothing is sorted"
        );
    }

    #[test]
    fn a_page_runs_on_into_the_next_arm_and_skips_across_an_arm_too_short() {
        let dir = tempfile::tempdir().unwrap();
        let conn = shop(&dir);
        let key = SortKey::of("name_folded, id").unwrap();
        // The last "max" of the list: the first arm holds one row, then come the milos.
        let last_max: i64 =
            conn.query_row("SELECT max(id) FROM pets WHERE name_folded = 'max'", [], |r| r.get(0)).unwrap();
        let arms = key.from(&Filter::default(), &[Value::from("max".to_owned()), Value::from(last_max)]);
        let ids = |limit, offset| {
            read(
                &conn,
                Source { columns: "id", from: "pets", key: "id" },
                &arms,
                "name_folded, id",
                limit,
                offset,
                |r| r.get::<_, i64>(0),
            )
            .unwrap()
        };
        let want = |limit: i64, offset: i64| -> Vec<i64> {
            conn.prepare(
                "SELECT id FROM pets WHERE (name_folded, id) >= ('max', ?1) ORDER BY name_folded, id LIMIT ?2 OFFSET ?3",
            )
            .unwrap()
            .query_map(params![last_max, limit, offset], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
        };
        for (limit, offset) in [(5, 0), (5, 1), (5, 3), (1, 0), (400, 0)] {
            assert_eq!(
                ids(limit, offset),
                want(limit as i64, offset as i64),
                "limit {limit} offset {offset}"
            );
        }
        assert_eq!(ids(5, 0).len(), 5, "the page runs on past the one max");
    }

    #[test]
    fn only_orders_of_one_or_two_columns_going_one_way_take_bookmarks() {
        assert!(SortKey::of("name_folded, id").is_some_and(|k| !k.descending));
        assert!(SortKey::of("name_folded DESC, id DESC").is_some_and(|k| k.descending));
        assert!(SortKey::of("id").is_some());
        assert!(SortKey::of("name_folded, id DESC").is_none());
        assert!(SortKey::of("stock, name_folded, id").is_none());
    }
}
