use petstore::domain::{
    CategoryId, Name, NewPet, Paged, Pet, PetFilter, PetId, PetPatch, PetSort, PetStatus, Sku,
};
use serde::Deserialize;
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
        let name_contains = match self.q.as_deref().map(str::trim).filter(|q| !q.is_empty()) {
            Some(q) => Some(Name::parse(q).map_err(CommandError::validation)?),
            None => None,
        };
        let sort = match self.sort.as_deref() {
            Some(sort) => sort.parse().map_err(CommandError::validation)?,
            None => PetSort::default(),
        };
        let filter = PetFilter {
            statuses: self.statuses,
            category_id: self.category_id,
            name_contains,
            ids: self.ids,
            sku: self.sku,
            sort,
        };
        Ok((filter, self.page.parse()?))
    }
}

#[tauri::command]
pub async fn list_pets(shell: State<'_, Shell>, query: Input<PetQuery>) -> CommandResult<Paged<Pet>> {
    let (filter, page) = query.0.parse()?;
    Ok(shell.current().list_pets(filter, page).await?)
}

#[tauri::command]
pub async fn create_pet(shell: State<'_, Shell>, pet: Input<NewPet>) -> CommandResult<Pet> {
    Ok(shell.current().create_pet(pet.0).await?)
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
    Ok(shell.current().replace_pet(id.0, pet.0).await?)
}

#[tauri::command]
pub async fn update_pet(
    shell: State<'_, Shell>,
    id: Input<PetId>,
    patch: Input<PetPatch>,
) -> CommandResult<Pet> {
    Ok(shell.current().update_pet(id.0, patch.0).await?)
}

#[tauri::command]
pub async fn delete_pet(shell: State<'_, Shell>, id: Input<PetId>) -> CommandResult<()> {
    Ok(shell.current().delete_pet(id.0).await?)
}
