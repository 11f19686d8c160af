//! The app's language: English, German or Spanish, the system's or the one chosen in
//! Settings (`UiPreferences::language`). The window translates its own texts
//! (ui/src/locales); what the app shows outside the window, the notifications and the
//! native menu, is translated here. Every text is a `match` over `Language`, so a language
//! missing a text does not compile.

use serde::{Deserialize, Serialize};

/// A language the app speaks.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    #[default]
    En,
    De,
    Es,
}

/// The language chosen in Settings: the system's, or one whatever the system says.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LanguageChoice {
    #[default]
    System,
    En,
    De,
    Es,
}

impl Language {
    /// The language of a locale such as "de-AT", "es_ES.UTF-8" or "en"; None for one the app
    /// does not speak, and for the POSIX locale ("C", "POSIX") of a system with none set.
    fn of_locale(locale: &str) -> Option<Language> {
        let primary = locale.split(['-', '_', '.', '@']).next().unwrap_or_default();
        match primary.to_ascii_lowercase().as_str() {
            "en" => Some(Language::En),
            "de" => Some(Language::De),
            "es" => Some(Language::Es),
            _ => None,
        }
    }

    /// The first of `locales` (most preferred first) the app speaks; English otherwise.
    pub fn first_spoken<S: AsRef<str>>(locales: impl IntoIterator<Item = S>) -> Language {
        locales.into_iter().find_map(|l| Self::of_locale(l.as_ref())).unwrap_or_default()
    }

    /// The system's language, as the window's "System" choice finds it too.
    pub fn system() -> Language {
        Self::first_spoken(sys_locale::get_locales())
    }
}

impl LanguageChoice {
    /// The language this choice shows on this system.
    pub fn resolve(self) -> Language {
        match self {
            LanguageChoice::System => Language::system(),
            LanguageChoice::En => Language::En,
            LanguageChoice::De => Language::De,
            LanguageChoice::Es => Language::Es,
        }
    }
}

/// A pet as the notifications name it: "Nemo (#6)", as the window and the API's refusals do.
fn pet(name: &str, id: impl std::fmt::Display) -> String {
    format!("{name} (#{id})")
}

/// The low-stock notification (low_stock.rs).
impl Language {
    pub fn low_stock_title(self) -> &'static str {
        match self {
            Language::En => "Low stock",
            Language::De => "Niedriger Bestand",
            Language::Es => "Stock bajo",
        }
    }

    pub fn out_of_stock(self, name: &str, id: impl std::fmt::Display) -> String {
        let pet = pet(name, id);
        match self {
            Language::En => format!("{pet} is out of stock."),
            Language::De => format!("{pet} ist nicht mehr vorrätig."),
            Language::Es => format!("{pet} está agotado."),
        }
    }

    pub fn stock_left(
        self,
        name: &str,
        id: impl std::fmt::Display,
        left: impl std::fmt::Display,
        below: impl std::fmt::Display,
    ) -> String {
        let pet = pet(name, id);
        match self {
            Language::En => format!("{pet} has {left} left (low below {below})."),
            Language::De => format!("{pet}: noch {left} vorrätig (niedrig unter {below})."),
            Language::Es => format!("{pet}: quedan {left} (bajo por debajo de {below})."),
        }
    }
}

/// An entry of the native menu (menu.rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MenuText {
    About,
    Settings,
    Services,
    Hide,
    HideOthers,
    ShowAll,
    Quit,
    Edit,
    Undo,
    Redo,
    Cut,
    Copy,
    Paste,
    SelectAll,
    View,
    Pets,
    Orders,
    Sales,
    Inventory,
    Categories,
    FullScreen,
    Window,
    Minimize,
    Zoom,
    CloseWindow,
    Help,
    Shortcuts,
    ApiReference,
}

impl MenuText {
    pub const ALL: [MenuText; 28] = [
        MenuText::About,
        MenuText::Settings,
        MenuText::Services,
        MenuText::Hide,
        MenuText::HideOthers,
        MenuText::ShowAll,
        MenuText::Quit,
        MenuText::Edit,
        MenuText::Undo,
        MenuText::Redo,
        MenuText::Cut,
        MenuText::Copy,
        MenuText::Paste,
        MenuText::SelectAll,
        MenuText::View,
        MenuText::Pets,
        MenuText::Orders,
        MenuText::Sales,
        MenuText::Inventory,
        MenuText::Categories,
        MenuText::FullScreen,
        MenuText::Window,
        MenuText::Minimize,
        MenuText::Zoom,
        MenuText::CloseWindow,
        MenuText::Help,
        MenuText::Shortcuts,
        MenuText::ApiReference,
    ];
}

impl Language {
    /// An entry of the menu in this language ("…" where the entry opens something to fill in).
    pub fn menu(self, text: MenuText) -> &'static str {
        use Language::*;
        use MenuText::*;
        match (text, self) {
            (About, En) => "About Petstore",
            (About, De) => "Über Petstore",
            (About, Es) => "Acerca de Petstore",
            (Settings, En) => "Settings…",
            (Settings, De) => "Einstellungen …",
            (Settings, Es) => "Ajustes…",
            (Services, En) => "Services",
            (Services, De) => "Dienste",
            (Services, Es) => "Servicios",
            (Hide, En) => "Hide Petstore",
            (Hide, De) => "Petstore ausblenden",
            (Hide, Es) => "Ocultar Petstore",
            (HideOthers, En) => "Hide Others",
            (HideOthers, De) => "Andere ausblenden",
            (HideOthers, Es) => "Ocultar otros",
            (ShowAll, En) => "Show All",
            (ShowAll, De) => "Alle einblenden",
            (ShowAll, Es) => "Mostrar todo",
            (Quit, En) => "Quit Petstore",
            (Quit, De) => "Petstore beenden",
            (Quit, Es) => "Salir de Petstore",
            (Edit, En) => "Edit",
            (Edit, De) => "Bearbeiten",
            (Edit, Es) => "Edición",
            (Undo, En) => "Undo",
            (Undo, De) => "Widerrufen",
            (Undo, Es) => "Deshacer",
            (Redo, En) => "Redo",
            (Redo, De) => "Wiederholen",
            (Redo, Es) => "Rehacer",
            (Cut, En) => "Cut",
            (Cut, De) => "Ausschneiden",
            (Cut, Es) => "Cortar",
            (Copy, En) => "Copy",
            (Copy, De) => "Kopieren",
            (Copy, Es) => "Copiar",
            (Paste, En) => "Paste",
            (Paste, De) => "Einsetzen",
            (Paste, Es) => "Pegar",
            (SelectAll, En) => "Select All",
            (SelectAll, De) => "Alles auswählen",
            (SelectAll, Es) => "Seleccionar todo",
            (View, En) => "View",
            (View, De) => "Darstellung",
            (View, Es) => "Visualización",
            (Pets, En) => "Pets",
            (Pets, De) => "Tiere",
            (Pets, Es) => "Mascotas",
            (Orders, En) => "Orders",
            (Orders, De) => "Bestellungen",
            (Orders, Es) => "Pedidos",
            (Sales, En) => "Sales",
            (Sales, De) => "Umsatz",
            (Sales, Es) => "Ventas",
            (Inventory, En) => "Inventory",
            (Inventory, De) => "Bestand",
            (Inventory, Es) => "Inventario",
            (Categories, En) => "Categories",
            (Categories, De) => "Kategorien",
            (Categories, Es) => "Categorías",
            (FullScreen, En) => "Enter Full Screen",
            (FullScreen, De) => "Vollbildmodus aktivieren",
            (FullScreen, Es) => "Pantalla completa",
            (Window, En) => "Window",
            (Window, De) => "Fenster",
            (Window, Es) => "Ventana",
            (Minimize, En) => "Minimize",
            (Minimize, De) => "Im Dock ablegen",
            (Minimize, Es) => "Minimizar",
            (Zoom, En) => "Zoom",
            (Zoom, De) => "Zoomen",
            (Zoom, Es) => "Zoom",
            (CloseWindow, En) => "Close Window",
            (CloseWindow, De) => "Fenster schließen",
            (CloseWindow, Es) => "Cerrar ventana",
            (Help, En) => "Help",
            (Help, De) => "Hilfe",
            (Help, Es) => "Ayuda",
            (Shortcuts, En) => "Keyboard Shortcuts",
            (Shortcuts, De) => "Tastenkürzel",
            (Shortcuts, Es) => "Atajos de teclado",
            (ApiReference, En) => "API Reference",
            (ApiReference, De) => "API-Referenz",
            (ApiReference, Es) => "Referencia de la API",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_systems_first_spoken_language_is_chosen() {
        assert_eq!(Language::first_spoken(["de-AT", "en-US"]), Language::De);
        assert_eq!(Language::first_spoken(["fr-FR", "es_ES.UTF-8"]), Language::Es);
        assert_eq!(Language::first_spoken(["C"]), Language::En, "no language set");
        assert_eq!(Language::first_spoken(["POSIX", "de"]), Language::De);
        assert_eq!(Language::first_spoken(["fr", "it"]), Language::En, "none spoken");
        assert_eq!(Language::first_spoken(Vec::<String>::new()), Language::En);
    }

    #[test]
    fn a_chosen_language_wins_over_the_systems() {
        assert_eq!(LanguageChoice::De.resolve(), Language::De);
        assert_eq!(LanguageChoice::Es.resolve(), Language::Es);
        assert_eq!(LanguageChoice::En.resolve(), Language::En);
    }

    #[test]
    fn every_menu_entry_differs_from_englishs_where_the_words_do() {
        // A copied English text left in another language is the mistake a match cannot catch;
        // the entries the languages share ("Zoom", the app's own name) are listed.
        let shared = [MenuText::Zoom];
        for text in MenuText::ALL {
            let en = Language::En.menu(text);
            assert!(!en.is_empty());
            for language in [Language::De, Language::Es] {
                let other = language.menu(text);
                if shared.contains(&text) && language == Language::Es {
                    continue;
                }
                assert_ne!(other, en, "{text:?} in {language:?}");
            }
        }
    }

    #[test]
    fn the_notifications_name_the_pet_in_every_language() {
        for language in [Language::En, Language::De, Language::Es] {
            assert!(language.out_of_stock("Nemo", 6).contains("Nemo (#6)"));
            let left = language.stock_left("Nemo", 6, 2, 5);
            assert!(left.contains("Nemo (#6)") && left.contains('2') && left.contains('5'), "{left}");
        }
    }
}
