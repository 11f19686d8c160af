// No console window behind the app on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    petstore_desktop::prepare_process();
    petstore_desktop::run_app(tauri::Builder::default())
        .run(tauri::generate_context!())
        .expect("Petstore could not start its window");
}
