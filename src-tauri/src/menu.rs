//! The native menu bar, in the app's language. macOS has one for every app, outside the
//! window (and its Edit menu is what makes Cmd+C and Cmd+V work in the window); Windows and
//! Linux windows get none, so the whole 960x600 window stays the shop's, whose own
//! navigation and shortcuts do the same. The entries that act on the shop are sent to the
//! window as the `menu` event with the entry's id (ui/src/lib/menu.ts acts on them).

use tauri::menu::{AboutMetadata, Menu, MenuBuilder, MenuEvent, MenuItemBuilder, SubmenuBuilder};
use tauri::{AppHandle, Emitter, Manager, Runtime};

use crate::language::{Language, MenuText};

/// The event the window receives, with the id of the entry chosen.
pub const EVENT: &str = "menu";

/// The entries the window acts on: their ids, which ui/src/lib/menu.ts reads, and texts.
const WINDOW_ENTRIES: [(&str, MenuText); 8] = [
    ("pets", MenuText::Pets),
    ("orders", MenuText::Orders),
    ("sales", MenuText::Sales),
    ("inventory", MenuText::Inventory),
    ("categories", MenuText::Categories),
    ("settings", MenuText::Settings),
    ("shortcuts", MenuText::Shortcuts),
    ("api-reference", MenuText::ApiReference),
];

fn entry<R: Runtime, M: Manager<R>>(
    app: &M,
    language: Language,
    id: &str,
) -> tauri::Result<tauri::menu::MenuItem<R>> {
    let (_, text) = WINDOW_ENTRIES.iter().find(|(i, _)| *i == id).expect("a listed entry");
    let item = MenuItemBuilder::new(language.menu(*text)).id(id);
    // The platform's shortcut for an app's settings.
    let item = if id == "settings" { item.accelerator("CmdOrCtrl+,") } else { item };
    item.build(app)
}

/// The menu bar in `language`.
pub fn build<R: Runtime, M: Manager<R>>(app: &M, language: Language) -> tauri::Result<Menu<R>> {
    let text = |t| language.menu(t);
    let about = AboutMetadata {
        name: Some("Petstore".into()),
        version: Some(app.package_info().version.to_string()),
        ..Default::default()
    };
    let app_menu = SubmenuBuilder::new(app, "Petstore")
        .about_with_text(text(MenuText::About), Some(about))
        .separator()
        .item(&entry(app, language, "settings")?)
        .separator()
        .services_with_text(text(MenuText::Services))
        .separator()
        .hide_with_text(text(MenuText::Hide))
        .hide_others_with_text(text(MenuText::HideOthers))
        .show_all_with_text(text(MenuText::ShowAll))
        .separator()
        .quit_with_text(text(MenuText::Quit))
        .build()?;
    let edit = SubmenuBuilder::new(app, text(MenuText::Edit))
        .undo_with_text(text(MenuText::Undo))
        .redo_with_text(text(MenuText::Redo))
        .separator()
        .cut_with_text(text(MenuText::Cut))
        .copy_with_text(text(MenuText::Copy))
        .paste_with_text(text(MenuText::Paste))
        .select_all_with_text(text(MenuText::SelectAll))
        .build()?;
    let mut view = SubmenuBuilder::new(app, text(MenuText::View));
    for id in ["pets", "orders", "sales", "inventory", "categories"] {
        view = view.item(&entry(app, language, id)?);
    }
    let view = view.separator().fullscreen_with_text(text(MenuText::FullScreen)).build()?;
    let window = SubmenuBuilder::new(app, text(MenuText::Window))
        .minimize_with_text(text(MenuText::Minimize))
        .maximize_with_text(text(MenuText::Zoom))
        .separator()
        .close_window_with_text(text(MenuText::CloseWindow))
        .build()?;
    let help = SubmenuBuilder::new(app, text(MenuText::Help))
        .item(&entry(app, language, "shortcuts")?)
        .item(&entry(app, language, "api-reference")?)
        .build()?;
    MenuBuilder::new(app).items(&[&app_menu, &edit, &view, &window, &help]).build()
}

/// Shows the menu bar in `language`, where the platform has one (macOS): at start, and
/// again when Settings change the language.
pub fn show<R: Runtime>(app: &AppHandle<R>, language: Language) {
    if !cfg!(target_os = "macos") {
        return;
    }
    if let Err(e) = build(app, language).and_then(|menu| app.set_menu(menu)) {
        tracing::warn!("the menu bar could not be set: {e}");
    }
}

/// Passes an entry the window acts on to it.
pub fn on_event<R: Runtime>(app: &AppHandle<R>, event: MenuEvent) {
    let id = event.id().as_ref();
    if WINDOW_ENTRIES.iter().any(|(i, _)| *i == id)
        && let Err(e) = app.emit(EVENT, id)
    {
        tracing::warn!("the menu's {id} did not reach the window: {e}");
    }
}

#[cfg(test)]
mod tests {
    use tauri::menu::MenuItemKind;

    use super::*;

    /// The texts of a menu's entries, submenus first with their entries after them.
    fn texts<R: Runtime>(items: Vec<MenuItemKind<R>>) -> Vec<String> {
        let mut out = Vec::new();
        for item in items {
            match item {
                MenuItemKind::Submenu(s) => {
                    out.push(s.text().unwrap());
                    out.extend(texts(s.items().unwrap()));
                }
                MenuItemKind::MenuItem(i) => out.push(i.text().unwrap()),
                MenuItemKind::Predefined(p) => out.push(p.text().unwrap()),
                _ => {}
            }
        }
        out
    }

    #[test]
    fn the_menu_is_in_the_language_shown() {
        let app = tauri::test::mock_app();
        let german = texts(build(&app, Language::De).unwrap().items().unwrap());
        for text in ["Bearbeiten", "Kopieren", "Tiere", "Bestellungen", "Einstellungen …", "Tastenkürzel"]
        {
            assert!(german.iter().any(|t| t == text), "{text} not in {german:?}");
        }
        assert!(!german.iter().any(|t| t == "Copy" || t == "Orders"), "{german:?}");
        let spanish = texts(build(&app, Language::Es).unwrap().items().unwrap());
        assert!(spanish.iter().any(|t| t == "Pedidos"), "{spanish:?}");
    }

    #[test]
    fn every_entry_the_window_acts_on_is_in_the_menu() {
        let app = tauri::test::mock_app();
        let menu = build(&app, Language::En).unwrap();
        for (id, _) in WINDOW_ENTRIES {
            assert!(menu.get(id).is_some() || find(&menu.items().unwrap(), id), "{id}");
        }
    }

    fn find<R: Runtime>(items: &[MenuItemKind<R>], id: &str) -> bool {
        items.iter().any(|item| match item {
            MenuItemKind::Submenu(s) => s.get(id).is_some() || find(&s.items().unwrap(), id),
            other => other.id() == id,
        })
    }
}
