use petstore::domain::{Category, CategoryId, NewCategory, Operation, Paged};
use tauri::State;

use super::PageQuery;
use crate::error::CommandResult;
use crate::input::Input;
use crate::shell::Shell;

#[tauri::command]
pub async fn list_categories(
    shell: State<'_, Shell>,
    page: Input<Option<PageQuery>>,
) -> CommandResult<Paged<Category>> {
    let page = page.0.unwrap_or_default().parse()?;
    Ok(shell.current().list_categories(page).await?)
}

#[tauri::command]
pub async fn create_category(
    shell: State<'_, Shell>,
    category: Input<NewCategory>,
) -> CommandResult<Category> {
    Ok(shell.acting(Operation::CreateCategory).await?.create_category(category.0).await?)
}

#[tauri::command]
pub async fn replace_category(
    shell: State<'_, Shell>,
    id: Input<CategoryId>,
    category: Input<NewCategory>,
) -> CommandResult<Category> {
    Ok(shell.acting(Operation::EditCategory).await?.replace_category(id.0, category.0).await?)
}

#[tauri::command]
pub async fn delete_category(shell: State<'_, Shell>, id: Input<CategoryId>) -> CommandResult<()> {
    Ok(shell.acting(Operation::DeleteCategory).await?.delete_category(id.0).await?)
}
