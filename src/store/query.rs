//! A small builder for the dynamic `WHERE` of list filters, keeping values as bound
//! parameters (never spliced into SQL).

use rusqlite::types::Value;

#[derive(Default)]
pub(super) struct Filter {
    clauses: Vec<String>,
    pub params: Vec<Value>,
}

impl Filter {
    /// Adds `clause`, in which each `?` is bound to the next of `values`.
    pub fn and(&mut self, clause: &str, values: impl IntoIterator<Item = Value>) {
        self.clauses.push(clause.to_owned());
        self.params.extend(values);
    }

    /// Adds `column IN (?, ?, ...)` for a non-empty list of values.
    pub fn and_in(&mut self, column: &str, values: impl IntoIterator<Item = Value>) {
        let values: Vec<Value> = values.into_iter().collect();
        if values.is_empty() {
            return;
        }
        let marks = vec!["?"; values.len()].join(", ");
        self.and(&format!("{column} IN ({marks})"), values);
    }

    pub fn sql(&self) -> String {
        if self.clauses.is_empty() { String::new() } else { format!("WHERE {}", self.clauses.join(" AND ")) }
    }
}

/// Escapes `%`, `_` and `\` so user text in a `LIKE ... ESCAPE '\'` matches literally.
pub(super) fn like_contains(text: &str) -> String {
    let mut pattern = String::with_capacity(text.len() + 2);
    pattern.push('%');
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}
