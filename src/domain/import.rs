//! A CSV of pets to import (`POST /imports/pets`), parsed at the edge into rows that are
//! valid on their own; what depends on the shop (categories that exist, barcodes already
//! taken) is the store's to check. Every refusal names the line and the column, so a clerk
//! can fix the spreadsheet and try again; one bad line refuses the whole file.

use std::collections::{HashMap, HashSet, VecDeque};
use std::io::Read;

use super::{CategoryId, Description, Name, NewPet, PetStatus, Price, Sku, StockLevel, quoted, undo_defuse};
use crate::error::{Error, Result};

/// Most lines of pets a file may hold (the header not counted).
pub const IMPORT_MAX_LINES: usize = 100_000;

/// The reason of the audit record of a pet's stock given by a file.
pub const IMPORT_REASON: &str = "imported";

/// The columns a file may have; `name` and `category` are required.
const COLUMNS: [&str; 7] = ["name", "category", "price", "sku", "status", "stock", "description"];

/// One pet of the file, as valid as it can be without the shop.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportRow {
    /// Its line in the file, the header being line 1.
    pub line: u64,
    pub name: Name,
    /// A category's name.
    pub category: Name,
    pub price: Option<Price>,
    pub sku: Option<Sku>,
    pub status: PetStatus,
    pub stock: Option<StockLevel>,
    pub description: Option<Description>,
}

/// What an import did, or would do (a dry run).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportReport {
    /// Pets created (or that would be).
    pub pets: u64,
    /// Categories made for the file, by name.
    pub categories_created: Vec<String>,
    /// Nothing was written: this is what the import would do.
    pub dry_run: bool,
}

/// A file checked against the shop, every row in line order, so the refusal names the
/// first bad line whatever the reason: each row's category found (or to be made, when asked),
/// each barcode new to the shop and to the rest of the file. The engines look up what the
/// file names in one go ([`ImportPlan::category_names`], [`ImportPlan::skus`]), make the new
/// categories, then write the pets; the same on both.
#[derive(Debug)]
pub struct ImportPlan<'r> {
    rows: &'r [ImportRow],
    /// Each row's category: one the shop has, or the index of one to make.
    categories: Vec<CategoryOf>,
    new_categories: Vec<Name>,
}

#[derive(Debug, Clone, Copy)]
enum CategoryOf {
    Existing(CategoryId),
    New(usize),
}

impl<'r> ImportPlan<'r> {
    /// The categories the file names, folded, each once.
    pub fn category_names(rows: &[ImportRow]) -> Vec<String> {
        let mut seen = HashSet::new();
        rows.iter().map(|r| r.category.folded()).filter(|n| seen.insert(n.clone())).collect()
    }

    /// The barcodes the file gives, folded.
    pub fn skus(rows: &[ImportRow]) -> Vec<String> {
        rows.iter().filter_map(|r| r.sku.as_ref().map(Sku::folded)).collect()
    }

    /// Checks `rows` against the shop's categories (by folded name) and the barcodes it
    /// has taken among the file's (folded).
    pub fn check(
        rows: &'r [ImportRow],
        existing: &HashMap<String, CategoryId>,
        taken: &HashSet<String>,
        create_categories: bool,
    ) -> Result<Self> {
        let mut new_categories: Vec<Name> = Vec::new();
        let mut made: HashMap<String, usize> = HashMap::new();
        let mut file_skus: HashMap<String, u64> = HashMap::new();
        let mut categories = Vec::with_capacity(rows.len());
        for row in rows {
            let folded = row.category.folded();
            let category = match (existing.get(&folded), made.get(&folded)) {
                (Some(id), _) => CategoryOf::Existing(*id),
                (None, Some(&i)) => CategoryOf::New(i),
                (None, None) if create_categories => {
                    made.insert(folded, new_categories.len());
                    new_categories.push(row.category.clone());
                    CategoryOf::New(new_categories.len() - 1)
                }
                (None, None) => return Err(no_category(row)),
            };
            if let Some(sku) = &row.sku {
                let folded = sku.folded();
                if taken.contains(&folded) {
                    return Err(refused_at(
                        row.line,
                        "sku",
                        format!("another pet already has the sku {:?}", sku.as_str()),
                    ));
                }
                if let Some(first) = file_skus.insert(folded, row.line) {
                    return Err(refused_at(
                        row.line,
                        "sku",
                        format!("{:?} is also on line {first}", sku.as_str()),
                    ));
                }
            }
            categories.push(category);
        }
        Ok(Self { rows, categories, new_categories })
    }

    /// The categories to make, in the order the file first names them.
    pub fn new_categories(&self) -> &[Name] {
        &self.new_categories
    }

    /// Each row with the pet it makes, given the ids of the categories made for it (in the
    /// order of [`ImportPlan::new_categories`]).
    pub fn pets<'p>(&'p self, made: &'p [CategoryId]) -> impl Iterator<Item = (&'r ImportRow, NewPet)> + 'p {
        self.rows.iter().zip(&self.categories).map(move |(row, category)| {
            let category = match *category {
                CategoryOf::Existing(id) => id,
                CategoryOf::New(i) => made[i],
            };
            let pet = NewPet {
                name: row.name.clone(),
                category_id: Some(category),
                status: row.status,
                description: row.description.clone(),
                price: row.price,
                sku: row.sku.clone(),
            };
            (row, pet)
        })
    }

    /// What the import does (or would do).
    pub fn report(&self, dry_run: bool) -> ImportReport {
        ImportReport {
            pets: self.rows.len() as u64,
            categories_created: self.new_categories.iter().map(|n| n.as_str().to_owned()).collect(),
            dry_run,
        }
    }

    /// A store's refusal of a row's pet, with its line.
    pub fn pet_refused(row: &ImportRow, e: Error) -> Error {
        Error::validation(format!("line {}: {}", row.line, e.message))
    }
}

fn no_category(row: &ImportRow) -> Error {
    refused_at(
        row.line,
        "category",
        format!(
            "there is no category named {:?}; add it first, or import with createCategories=true",
            row.category.as_str()
        ),
    )
}

/// A refusal naming where.
pub fn refused_at(line: u64, column: &str, why: impl std::fmt::Display) -> Error {
    Error::validation(format!("line {line}, column {column}: {why}"))
}

/// Parses `text` (UTF-8 CSV with a header row) into rows, or refuses it whole.
pub fn parse_pets_csv(text: &[u8]) -> Result<Vec<ImportRow>> {
    read_pets_csv(text)
}

/// Reads a CSV file of pets (UTF-8 with a header row) from `input` into rows, or refuses it
/// whole, as it arrives: the file's text is never held whole, only the rows it makes and
/// the record being read. An error of `input` that carries an [`Error`] (a body too large,
/// one that broke off) is answered as that error.
pub fn read_pets_csv(input: impl Read) -> Result<Vec<ImportRow>> {
    let mut reader =
        csv::ReaderBuilder::new().has_headers(true).flexible(false).from_reader(LineCounter::new(input));
    let headers = reader.headers().map_err(|e| unreadable(e, 1))?.clone();
    let mut index = [None; COLUMNS.len()];
    for (i, header) in headers.iter().enumerate() {
        let header = header.trim().trim_start_matches('\u{feff}');
        let Some(known) = COLUMNS.iter().position(|c| c.eq_ignore_ascii_case(header)) else {
            return Err(Error::validation(format!(
                "line 1: the column {} is not a column of a pet; the columns are {}",
                quoted(header),
                COLUMNS.join(", ")
            )));
        };
        if index[known].replace(i).is_some() {
            return Err(refused_at(1, header, "is there twice"));
        }
    }
    for (required, i) in COLUMNS.iter().zip(index).take(2) {
        if i.is_none() {
            return Err(Error::validation(format!(
                "line 1: the column {required} is missing (name and category are required)"
            )));
        }
    }
    let mut rows = Vec::new();
    let mut record = csv::StringRecord::new();
    loop {
        let starts_at = reader.position().byte();
        let read = reader.read_record(&mut record);
        // Counted once the record has been read, so that its first bytes have been seen.
        let line = reader.get_mut().line_at(starts_at);
        if !read.map_err(|e| unreadable(e, line))? {
            break;
        }
        if record.iter().all(|cell| cell.trim().is_empty()) {
            continue;
        }
        if rows.len() == IMPORT_MAX_LINES {
            return Err(Error::validation(format!(
                "a file may hold at most {IMPORT_MAX_LINES} pets; line {line} is one more"
            )));
        }
        // An empty cell means "not given". The `'` an export put before a cell that would
        // run as a formula comes off first, so that an export imported again keeps its names.
        let cell = |column: usize| {
            index[column].and_then(|i| record.get(i)).map(|c| undo_defuse(c).trim()).filter(|c| !c.is_empty())
        };
        let name = Name::parse(cell(0).unwrap_or("")).map_err(|why| refused_at(line, "name", why))?;
        let category = Name::parse(cell(1).unwrap_or("")).map_err(|why| refused_at(line, "category", why))?;
        let price = cell(2).map(Price::parse).transpose().map_err(|why| refused_at(line, "price", why))?;
        let sku = cell(3).map(Sku::parse).transpose().map_err(|why| refused_at(line, "sku", why))?;
        let status = cell(4)
            .map(str::parse)
            .transpose()
            .map_err(|why| refused_at(line, "status", why))?
            .unwrap_or_default();
        let stock = cell(5)
            .map(|s| {
                s.parse::<i64>()
                    .map_err(|_| format!("stock must be a whole number, got {}", quoted(s)))
                    .and_then(StockLevel::try_from)
            })
            .transpose()
            .map_err(|why| refused_at(line, "stock", why))?;
        let description = cell(6)
            .map(Description::parse)
            .transpose()
            .map_err(|why| refused_at(line, "description", why))?;
        rows.push(ImportRow { line, name, category, price, sku, status, stock, description });
    }
    Ok(rows)
}

/// A CSV reader's failure on `line`: the input's own error as it is, else what was wrong
/// with the text (never the text itself, which may be megabytes of one cell).
fn unreadable(e: csv::Error, line: u64) -> Error {
    let why = match e.into_kind() {
        csv::ErrorKind::Io(io) => {
            let message = io.to_string();
            return match io.into_inner().map(|inner| inner.downcast::<Error>()) {
                Some(Ok(error)) => *error,
                _ => Error::validation(format!("the file could not be read: {message}")),
            };
        }
        csv::ErrorKind::Utf8 { .. } => "the file is not UTF-8 text; save it as CSV UTF-8".to_owned(),
        csv::ErrorKind::UnequalLengths { expected_len, len, .. } => {
            format!("{len} cells where the header has {expected_len}")
        }
        other => format!("{other:?}"),
    };
    Error::validation(format!("line {line}: {why}"))
}

/// The input of the CSV reader, counting the lines a record begins on in the text itself
/// (a quoted cell may span lines). It keeps the bytes read since the last record began:
/// the record being read and what the reader has read ahead.
struct LineCounter<R> {
    input: R,
    /// Bytes from `kept_from` on, as read.
    kept: VecDeque<u8>,
    kept_from: u64,
    /// Line feeds before `kept_from`.
    lines_before: u64,
}

impl<R: Read> LineCounter<R> {
    fn new(input: R) -> Self {
        Self { input, kept: VecDeque::new(), kept_from: 0, lines_before: 0 }
    }

    /// The line of the record that begins at byte `at`, or just after: the reader's position
    /// may point at the line end before a record, or at empty lines it skips, so those are
    /// passed first. Positions only move on, and what lies before one is forgotten.
    fn line_at(&mut self, at: u64) -> u64 {
        let skip =
            usize::try_from(at.saturating_sub(self.kept_from)).unwrap_or(usize::MAX).min(self.kept.len());
        let ends = self.kept.iter().skip(skip).take_while(|b| matches!(b, b'\r' | b'\n')).count();
        let passed = skip + ends;
        self.lines_before += self.kept.drain(..passed).filter(|b| *b == b'\n').count() as u64;
        self.kept_from += passed as u64;
        self.lines_before + 1
    }
}

impl<R: Read> Read for LineCounter<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.input.read(buf)?;
        self.kept.extend(&buf[..n]);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_read_by_its_header_and_empty_cells_are_not_given() {
        let rows = parse_pets_csv(
            "Name,category,price,stock\r\nRex,Dogs,249.00,3\r\n\"Bella, the second\",Cats,,\r\n,,,\r\n"
                .as_bytes(),
        )
        .unwrap();
        assert_eq!(rows.len(), 2, "an empty line is skipped");
        assert_eq!(
            (rows[0].line, rows[0].name.as_str(), rows[0].price.map(|p| p.cents())),
            (2, "Rex", Some(24_900))
        );
        assert_eq!(rows[0].stock.map(StockLevel::get), Some(3));
        assert_eq!((rows[1].name.as_str(), rows[1].price, rows[1].stock), ("Bella, the second", None, None));
        assert_eq!(rows[1].status, PetStatus::Available);
    }

    #[test]
    fn a_bad_line_is_named_with_its_column() {
        let refused = |text: &str| parse_pets_csv(text.as_bytes()).unwrap_err().message;
        assert_eq!(
            refused("name,category,price\nRex,Dogs,12.5\n").split(':').next(),
            Some("line 2, column price")
        );
        assert!(refused("name,category\nRex,Dogs\n,Cats\n").starts_with("line 3, column name"));
        assert!(refused("name,category,stock\nRex,Dogs,-1\n").starts_with("line 2, column stock"));
        assert!(refused("name,category,colour\nRex,Dogs,red\n").contains("colour"));
        assert!(refused("name,price\nRex,1.00\n").contains("category is missing"));
        assert!(refused("name,category\nRex,Dogs,extra\n").starts_with("line 2"));
        assert!(refused("name,category,status\nRex,Dogs,lost\n").starts_with("line 2, column status"));
    }

    /// A reader that hands out one byte at a time, as a slow client's body arrives.
    struct Trickle<'a>(&'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let Some((first, rest)) = self.0.split_first() else { return Ok(0) };
            if buf.is_empty() {
                return Ok(0);
            }
            buf[0] = *first;
            self.0 = rest;
            Ok(1)
        }
    }

    #[test]
    fn lines_are_counted_the_same_however_the_file_arrives() {
        let file = "name,category,description\r\n\r\nRex,Dogs,\"two\nlines\"\r\n\n\nTom,Cats,\r\nBad,,x\n";
        let whole = parse_pets_csv(file.as_bytes()).unwrap_err();
        let trickled = read_pets_csv(Trickle(file.as_bytes())).unwrap_err();
        assert!(whole.message.starts_with("line 8, column category"), "{}", whole.message);
        assert_eq!(trickled, whole);
        let good = &file[..file.find("Bad").unwrap()];
        let lines: Vec<u64> =
            read_pets_csv(Trickle(good.as_bytes())).unwrap().iter().map(|r| r.line).collect();
        assert_eq!(lines, [3, 7]);
    }

    #[test]
    fn a_huge_bad_cell_is_quoted_in_a_few_dozen_characters() {
        for column in ["price", "status", "stock"] {
            let file = format!("name,category,{column}\nRex,Dogs,{}\n", "\u{1}".repeat(10_000_000));
            let refused = parse_pets_csv(file.as_bytes()).unwrap_err().message;
            assert!(refused.starts_with(&format!("line 2, column {column}")), "{column}: {:.80}", refused);
            assert!(refused.len() < 500, "{column}: a refusal of {} bytes", refused.len());
            assert!(refused.contains("…"), "{refused}");
        }
        let header = format!("name,category,{}\n", "x".repeat(10_000_000));
        assert!(parse_pets_csv(header.as_bytes()).unwrap_err().message.len() < 500);
    }

    #[test]
    fn text_that_is_not_utf8_is_refused_with_its_line() {
        let refused = parse_pets_csv(b"name,category\nRex,Dogs\nT\xffm,Cats\n").unwrap_err().message;
        assert!(refused.starts_with("line 3: the file is not UTF-8"), "{refused}");
    }
}
