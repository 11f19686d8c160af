//! Realistic demo data, the same on every engine: the categories, and an endless run of
//! pets with plausible names, statuses and stock. `seed` on each engine loads them.

use crate::domain::{Name, PetStatus};

/// The demo categories: name, description, and the breeds their pets are named after.
pub const CATEGORIES: &[(&str, &str, &[&str])] = &[
    ("Dogs", "Puppies and grown dogs", &["Beagle", "Labrador", "Poodle", "Terrier", "Collie", "Spaniel"]),
    ("Cats", "Kittens and cats", &["Tabby", "Siamese", "Persian", "Maine Coon", "Ragdoll"]),
    ("Birds", "Budgies, canaries and parrots", &["Budgie", "Canary", "Cockatiel", "Lovebird", "Finch"]),
    ("Fish", "Freshwater and marine fish", &["Goldfish", "Guppy", "Tetra", "Betta", "Molly", "Koi"]),
    ("Reptiles", "Lizards, snakes and turtles", &["Gecko", "Bearded Dragon", "Corn Snake", "Tortoise"]),
    ("Small animals", "Rabbits, guinea pigs and hamsters", &["Rabbit", "Guinea Pig", "Hamster", "Ferret"]),
];

const NAMES: &[&str] = &[
    "Bella", "Max", "Luna", "Charlie", "Lucy", "Cooper", "Daisy", "Milo", "Lola", "Rocky", "Coco", "Bailey",
    "Sadie", "Buddy", "Molly", "Tucker", "Stella", "Bear", "Zoe", "Duke", "Nala", "Oscar", "Ruby", "Teddy",
    "Rosie", "Leo", "Pepper", "Ziggy", "Olive", "Finn", "Élise", "Mochi", "Biscuit", "Pickles", "Nemo",
    "Sunny", "Kiwi", "Mango", "Peanut", "Shadow", "Ginger", "Smokey", "Willow",
];

/// How often the progress callback hears about it.
pub const PROGRESS_EVERY: u64 = 10_000;

/// A demo pet; `category` indexes [`CATEGORIES`].
pub struct DemoPet {
    pub name: Name,
    pub category: usize,
    pub status: PetStatus,
    pub stock: i64,
}

/// Demo pets, the same run every time (a fixed seed), so two seeded databases match.
pub fn pets() -> impl Iterator<Item = DemoPet> {
    let mut rng = fastrand::Rng::with_seed(0x5eed);
    std::iter::repeat_with(move || {
        let category = rng.usize(..CATEGORIES.len());
        let breed = CATEGORIES[category].2[rng.usize(..CATEGORIES[category].2.len())];
        let name = Name::parse(&format!("{} the {breed}", NAMES[rng.usize(..NAMES.len())]))
            .expect("demo names are valid");
        // Like a real shop: most pets in stock, some sold out. Pending pets come from open
        // orders, which the seed does not invent.
        let (status, stock) = match rng.u8(..10) {
            0 => (PetStatus::Sold, 0),
            _ => (PetStatus::Available, rng.i64(1..=25)),
        };
        DemoPet { name, category, status, stock }
    })
}
