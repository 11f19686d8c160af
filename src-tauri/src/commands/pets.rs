use petstore::ErrorCode;
use petstore::domain::{
    CategoryId, Name, NewPet, Operation, Paged, Pet, PetFilter, PetId, PetPatch, PetSort, PetStatus, Sku,
};
use serde::{Deserialize, Serialize};
use tauri::State;

use super::PageQuery;
use crate::error::{CommandError, CommandResult};
use crate::input::Input;
use crate::shell::Shell;

/// The Pets screen's filters: category, status chips, name search, sort and page.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PetQuery {
    #[serde(default)]
    pub statuses: Vec<PetStatus>,
    #[serde(default)]
    pub category_id: Option<CategoryId>,
    /// Part of the name; blank means no search.
    #[serde(default)]
    pub q: Option<String>,
    /// The loose search: in the name with one typo allowed (from 4 characters), or in the
    /// description; blank means none.
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default)]
    pub search: Option<String>,
    /// A barcode, as a scanner typed it: the pet with it.
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default)]
    pub sku: Option<Sku>,
    #[serde(default)]
    pub ids: Vec<PetId>,
    /// `name`, `-name`, `id` or `-id`.
    #[serde(default)]
    pub sort: Option<String>,
    #[serde(flatten)]
    pub page: PageQuery,
}

impl PetQuery {
    fn parse(self) -> CommandResult<(PetFilter, petstore::domain::Page)> {
        let name_contains = search_text(self.q.as_deref())?;
        let search = search_text(self.search.as_deref())?;
        let sort = match self.sort.as_deref() {
            Some(sort) => sort.parse().map_err(CommandError::validation)?,
            None => PetSort::default(),
        };
        let filter = PetFilter {
            statuses: self.statuses,
            category_id: self.category_id,
            name_contains,
            search,
            ids: self.ids,
            sku: self.sku,
            sort,
        };
        Ok((filter, self.page.parse()?))
    }
}

/// A search text as the screen sent it: blank means none.
fn search_text(text: Option<&str>) -> CommandResult<Option<Name>> {
    match text.map(str::trim).filter(|text| !text.is_empty()) {
        Some(text) => Ok(Some(Name::parse(text).map_err(CommandError::validation)?)),
        None => Ok(None),
    }
}

#[tauri::command]
pub async fn list_pets(shell: State<'_, Shell>, query: Input<PetQuery>) -> CommandResult<Paged<Pet>> {
    let (filter, page) = query.0.parse()?;
    Ok(shell.current().list_pets(filter, page).await?)
}

/// A row of the Pets screen: the pet with its stock, so a page costs the window one call
/// rather than one for the page and one per row for its stock.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PetRow {
    #[serde(flatten)]
    #[cfg_attr(feature = "ts", ts(flatten))]
    pub pet: Pet,
    /// How many are in stock; null when the pet was deleted between the list and the read
    /// of its stock (the change event that follows takes the row away).
    pub stock: Option<i64>,
}

/// The Pets screen's page: [`list_pets`] with each pet's stock, read here, beside the
/// store (the core's pet has no stock: the REST API keeps it at /store/inventory).
#[tauri::command]
pub async fn list_pet_rows(shell: State<'_, Shell>, query: Input<PetQuery>) -> CommandResult<Paged<PetRow>> {
    let (filter, page) = query.0.parse()?;
    let backend = shell.current();
    let pets = backend.list_pets(filter, page).await?;
    let stocks =
        futures_util::future::join_all(pets.items.iter().map(|pet| backend.get_inventory(pet.id))).await;
    let mut items = Vec::with_capacity(pets.items.len());
    for (pet, stock) in pets.items.into_iter().zip(stocks) {
        let stock = match stock {
            Ok(item) => Some(item.quantity),
            Err(e) if e.code == ErrorCode::NotFound => None,
            Err(e) => return Err(e.into()),
        };
        items.push(PetRow { pet, stock });
    }
    Ok(Paged { items, total: pets.total })
}

#[tauri::command]
pub async fn create_pet(shell: State<'_, Shell>, pet: Input<NewPet>) -> CommandResult<Pet> {
    Ok(shell.acting(Operation::CreatePet).await?.create_pet(pet.0).await?)
}

#[tauri::command]
pub async fn get_pet(shell: State<'_, Shell>, id: Input<PetId>) -> CommandResult<Pet> {
    Ok(shell.current().get_pet(id.0).await?)
}

#[tauri::command]
pub async fn replace_pet(
    shell: State<'_, Shell>,
    id: Input<PetId>,
    pet: Input<NewPet>,
) -> CommandResult<Pet> {
    Ok(shell.acting(Operation::EditPet).await?.replace_pet(id.0, pet.0).await?)
}

#[tauri::command]
pub async fn update_pet(
    shell: State<'_, Shell>,
    id: Input<PetId>,
    patch: Input<PetPatch>,
) -> CommandResult<Pet> {
    Ok(shell.acting(Operation::EditPet).await?.update_pet(id.0, patch.0).await?)
}

#[tauri::command]
pub async fn delete_pet(shell: State<'_, Shell>, id: Input<PetId>) -> CommandResult<()> {
    Ok(shell.acting(Operation::DeletePet).await?.delete_pet(id.0).await?)
}
