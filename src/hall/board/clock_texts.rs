//! The words the daemon writes on a DGT3000 (PAUSE, FLAG, ARBITER, …), in the hall's
//! language (`[web] language`, docs/OPERATIONS.md "Languages"). A DGT3000 takes 8 ASCII
//! characters in one text (dgt-protocol.md §5, command 0c: `c1..c8`; the 11 characters
//! often quoted are the Revelation II's command 0d), so these are a small catalogue of
//! their own, checked to fit, not the page's texts. (A DGT XL shows the first 6 on its
//! seven segments, in English and Spanish alike.)
//!
//! The display logic (`display.rs`) speaks in the English words, which are the keys; the
//! text is put in the hall's language where the clock's program is built.

/// The longest text the DGT3000 shows (its ASCII command's eight bytes).
pub const MAX_CHARS: usize = 8;

/// Every text the daemon shows on a clock, in English (the keys).
pub const KEYS: &[&str] = &[
    "SEALED", "ARBITER", "PAUSE", "FLAG", "DRAW", "ANNUL", "LEVER", "1-0", "0-1", "0-0",
];

/// (language, [(key, text)]). A language or a key not here is shown in English.
const CATALOGUE: &[(&str, &[(&str, &str)])] = &[(
    "es",
    &[
        // The sealed move (jugada secreta) is in its envelope: the game is adjourned.
        ("SEALED", "APLAZADA"),
        ("ARBITER", "ARBITRO"),
        ("PAUSE", "PAUSA"),
        ("FLAG", "BANDERA"),
        ("DRAW", "TABLAS"),
        ("ANNUL", "ANULADA"),
        ("LEVER", "PALANCA"),
    ],
)];

/// The clock's words in one language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ClockTexts {
    table: &'static [(&'static str, &'static str)],
}

impl ClockTexts {
    /// The texts of `language` (a code as `[web] language` has it); English for one
    /// without clock texts.
    pub fn of(language: &str) -> ClockTexts {
        let primary = language.split('-').next().unwrap_or("");
        let table = CATALOGUE
            .iter()
            .find(|(code, _)| *code == primary)
            .map(|(_, t)| *t)
            .unwrap_or(&[]);
        ClockTexts { table }
    }

    /// `text` (an English key) in this language.
    pub fn say<'a>(&self, text: &'a str) -> &'a str {
        self.table
            .iter()
            .find(|(k, _)| *k == text)
            .map_or(text, |(_, t)| t)
    }
}

/// The languages with clock texts of their own.
pub fn languages() -> impl Iterator<Item = &'static str> {
    CATALOGUE.iter().map(|(code, _)| *code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_clock_text_fits_the_dgt3000_display_in_ascii() {
        for lang in std::iter::once("en").chain(languages()) {
            let t = ClockTexts::of(lang);
            for key in KEYS {
                let said = t.say(key);
                assert!(
                    said.is_ascii() && !said.is_empty() && said.len() <= MAX_CHARS,
                    "{lang}: '{key}' is shown as '{said}': the clock takes 1 to {MAX_CHARS} ASCII characters"
                );
            }
        }
    }

    #[test]
    fn every_language_says_every_word_and_no_word_the_daemon_never_shows() {
        for (lang, table) in CATALOGUE {
            for key in KEYS {
                let scores = ["1-0", "0-1", "0-0"];
                assert!(
                    scores.contains(key) || table.iter().any(|(k, _)| k == key),
                    "{lang}: no text for '{key}' (it would be shown in English)"
                );
            }
            for (k, _) in *table {
                assert!(
                    KEYS.contains(k),
                    "{lang}: '{k}' is no text the daemon shows"
                );
            }
        }
    }

    #[test]
    fn a_spanish_hall_reads_its_clock_in_spanish_and_others_in_english() {
        assert_eq!(ClockTexts::of("es").say("PAUSE"), "PAUSA");
        assert_eq!(ClockTexts::of("es-ES").say("SEALED"), "APLAZADA");
        assert_eq!(ClockTexts::of("es").say("1-0"), "1-0");
        assert_eq!(ClockTexts::of("").say("PAUSE"), "PAUSE");
        assert_eq!(ClockTexts::of("pt").say("FLAG"), "FLAG");
    }

    /// The keys are the display logic's own words: a new word there must be added here.
    #[test]
    fn the_keys_are_every_text_the_display_logic_writes() {
        let src = include_str!("display.rs");
        let mut written: Vec<&str> = src
            .split("Some(\"")
            .skip(1)
            .filter_map(|s| s.split('"').next())
            .collect();
        written.push(super::super::display::LEVER_TEXT);
        for w in written {
            assert!(
                KEYS.contains(&w),
                "display.rs shows '{w}', which is not in KEYS"
            );
        }
    }
}
