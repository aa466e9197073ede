//! Invented player names for the demo's pairings (any likeness is a coincidence).

use rand::Rng;
use rand::seq::SliceRandom;

const FIRST: [&str; 24] = [
    "Ada", "Bruno", "Chiara", "Dmitri", "Elif", "Femi", "Greta", "Hugo", "Ines", "Jonas",
    "Kalinda", "Luca", "Mira", "Nikolai", "Oona", "Pablo", "Quinn", "Rosa", "Stellan", "Tamsin",
    "Umar", "Vera", "Wim", "Yara",
];

const LAST: [&str; 24] = [
    "Abernethy",
    "Brandt",
    "Castellano",
    "Dvorak",
    "Eriksen",
    "Fontaine",
    "Gallo",
    "Halvorsen",
    "Ilves",
    "Jansen",
    "Kowalczyk",
    "Lindqvist",
    "Moreau",
    "Novak",
    "Okafor",
    "Petrov",
    "Quintero",
    "Rahimi",
    "Sato",
    "Tanaka",
    "Ulrich",
    "Varga",
    "Whitlock",
    "Zeller",
];

/// `count` different names, shuffled.
pub fn players(count: usize, rng: &mut impl Rng) -> Vec<String> {
    let mut all: Vec<String> = FIRST
        .iter()
        .flat_map(|f| LAST.iter().map(move |l| format!("{f} {l}")))
        .collect();
    all.shuffle(rng);
    // Past 576 players a number keeps the names apart.
    (0..count)
        .map(|i| {
            all.get(i)
                .cloned()
                .unwrap_or_else(|| format!("Player {}", i + 1))
        })
        .collect()
}
