//! `browser_press_key`: presses a key (with modifiers) as a keyboard would. The key names
//! are `KeyboardEvent.key` names; [`Chord::parse`] is the one reading of them, so the relay
//! refuses an unknown key before any browser sees it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::fields::Element;
use super::{About, Category, ReadsAs};

pub const ABOUT: About = About {
    label: "Press key",
    category: Category::Interact,
    description: "Presses a key with real keyDown/keyUp events to the focused element (or to xpath's element, focused first): \"Enter\", \"Escape\", \"Tab\", \"ArrowDown\", \"PageDown\", \"a\"; modifiers joined with +: \"Control+a\", \"Shift+Tab\". An unknown key name is INVALID_PARAMS.",
    waits_for: None,
    reads_as: ReadsAs::Json,
    example: None,
};

/// The most presses one action makes.
pub const MAX_REPEAT: u32 = 100;

crate::element_params!(
    xpath = "The element to focus first (any XPath); the focused element when absent.",
    /// A KeyboardEvent.key name, with modifiers (Alt, Control, Meta, Shift) joined by +.
    pub key: String,
    /// How many times to press it (1 to 100).
    #[serde(default)]
    #[schemars(extend("default" = 1))]
    #[schemars(range(min = 1, max = MAX_REPEAT))]
    pub repeat: Option<u32>,
);

crate::tab_action_params!(
    dialog,
    observe,
    check = |p| {
        Chord::parse(&p.key)?;
        Element::named(&p.xpath, &p.r#ref)?;
        match p.repeat {
            Some(n) if n == 0 || n > MAX_REPEAT => Err(format!("repeat must be 1 to {MAX_REPEAT}, not {n}")),
            _ => Ok(()),
        }
    }
);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// Always true.
    pub pressed: bool,
}

/// One key as CDP's `Input.dispatchKeyEvent` takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    /// `KeyboardEvent.key`.
    pub key: String,
    /// `KeyboardEvent.code`.
    pub code: String,
    /// The Windows virtual key code Chromium maps editing commands from.
    pub key_code: u32,
    /// What the key types, if anything.
    pub text: Option<String>,
}

/// A modifier key and its bit in CDP's `modifiers` field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Modifier {
    pub key: Key,
    pub bit: u32,
}

/// A key with the modifiers held while it is pressed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chord {
    pub modifiers: Vec<Modifier>,
    /// CDP's bit field: Alt 1, Control 2, Meta 4, Shift 8.
    pub modifier_bits: u32,
    pub key: Key,
}

/// Named keys: (name, code, virtual key code, text typed).
const NAMED: &[(&str, &str, u32, Option<&str>)] = &[
    ("Enter", "Enter", 13, Some("\r")),
    ("Escape", "Escape", 27, None),
    ("Tab", "Tab", 9, None),
    ("Backspace", "Backspace", 8, None),
    ("Delete", "Delete", 46, None),
    ("Insert", "Insert", 45, None),
    (" ", "Space", 32, Some(" ")),
    ("ArrowUp", "ArrowUp", 38, None),
    ("ArrowDown", "ArrowDown", 40, None),
    ("ArrowLeft", "ArrowLeft", 37, None),
    ("ArrowRight", "ArrowRight", 39, None),
    ("Home", "Home", 36, None),
    ("End", "End", 35, None),
    ("PageUp", "PageUp", 33, None),
    ("PageDown", "PageDown", 34, None),
    ("F1", "F1", 112, None),
    ("F2", "F2", 113, None),
    ("F3", "F3", 114, None),
    ("F4", "F4", 115, None),
    ("F5", "F5", 116, None),
    ("F6", "F6", 117, None),
    ("F7", "F7", 118, None),
    ("F8", "F8", 119, None),
    ("F9", "F9", 120, None),
    ("F10", "F10", 121, None),
    ("F11", "F11", 122, None),
    ("F12", "F12", 123, None),
];

/// Modifiers: (name, code, virtual key code, bit).
const MODIFIERS: &[(&str, &str, u32, u32)] = &[
    ("Alt", "AltLeft", 18, 1),
    ("Control", "ControlLeft", 17, 2),
    ("Meta", "MetaLeft", 91, 4),
    ("Shift", "ShiftLeft", 16, 8),
];

/// Printable keys that are not letters or digits: (key, code, virtual key code).
const PUNCTUATION: &[(char, &str, u32)] = &[
    ('-', "Minus", 189),
    ('=', "Equal", 187),
    ('[', "BracketLeft", 219),
    (']', "BracketRight", 221),
    (';', "Semicolon", 186),
    ('\'', "Quote", 222),
    (',', "Comma", 188),
    ('.', "Period", 190),
    ('/', "Slash", 191),
    ('\\', "Backslash", 220),
    ('`', "Backquote", 192),
];

impl Key {
    fn named(name: &str) -> Option<Self> {
        if name == "Space" {
            return Self::named(" ");
        }
        let &(key, code, key_code, text) = NAMED.iter().find(|(n, ..)| *n == name)?;
        Some(Key {
            key: key.into(),
            code: code.into(),
            key_code,
            text: text.map(str::to_owned),
        })
    }

    fn printable(name: &str) -> Option<Self> {
        let mut chars = name.chars();
        let (c, None) = (chars.next()?, chars.next()) else {
            return None;
        };
        let (code, key_code) = if c.is_ascii_alphabetic() {
            (
                format!("Key{}", c.to_ascii_uppercase()),
                c.to_ascii_uppercase() as u32,
            )
        } else if c.is_ascii_digit() {
            (format!("Digit{c}"), c as u32)
        } else if let Some(&(_, code, key_code)) = PUNCTUATION.iter().find(|(p, ..)| *p == c) {
            (code.to_owned(), key_code)
        } else {
            // Any other character types itself; no physical key stands for it.
            (String::new(), 0)
        };
        Some(Key {
            key: c.to_string(),
            code,
            key_code,
            text: Some(c.to_string()),
        })
    }
}

impl Chord {
    /// Reads `"Control+Shift+ArrowLeft"`, `"a"`, `"+"` (the plus key itself).
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut parts: Vec<&str> = text.split('+').collect();
        // "+" alone, or after a "+", is the plus key: "Control++" splits into
        // ["Control", "", ""].
        if text == "+" || text.ends_with("++") {
            parts.truncate(parts.len().saturating_sub(2));
            parts.push("+");
        }
        let (last, held) = parts.split_last().ok_or_else(|| "key is empty".to_owned())?;
        if last.is_empty() {
            return Err(format!("{text:?} names no key after its modifiers"));
        }
        let key = Key::named(last).or_else(|| Key::printable(last)).ok_or_else(|| {
            format!("unknown key {last:?}: use a KeyboardEvent.key name (Enter, Escape, Tab, ArrowDown, PageDown, a, ...) with modifiers joined by + (Control+a)")
        })?;
        let mut modifiers = Vec::new();
        let mut modifier_bits = 0;
        for name in held {
            let &(key, code, key_code, bit) =
                MODIFIERS.iter().find(|(n, ..)| n == name).ok_or_else(|| {
                    format!("unknown modifier {name:?} in {text:?}: use Alt, Control, Meta or Shift")
                })?;
            modifier_bits |= bit;
            let key = Key {
                key: key.into(),
                code: code.into(),
                key_code,
                text: None,
            };
            modifiers.push(Modifier { key, bit });
        }
        Ok(Chord {
            modifiers,
            modifier_bits,
            key,
        })
    }

    /// What the key types with these modifiers: nothing while Control, Alt or Meta is held (a
    /// shortcut), the shifted letter with Shift.
    pub fn text(&self) -> Option<String> {
        if self.modifier_bits & 0b0111 != 0 {
            return None;
        }
        let text = self.key.text.clone()?;
        Some(if self.modifier_bits & 8 != 0 {
            text.to_uppercase()
        } else {
            text
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chords_read_as_a_person_writes_them() {
        let c = Chord::parse("Control+a").unwrap();
        assert_eq!(
            (c.modifier_bits, c.key.code.as_str(), c.text()),
            (2, "KeyA", None)
        );
        let s = Chord::parse("Shift+Tab").unwrap();
        assert_eq!((s.modifier_bits, s.key.key_code), (8, 9));
        assert_eq!(Chord::parse("Enter").unwrap().text().as_deref(), Some("\r"));
        assert_eq!(Chord::parse("Shift+b").unwrap().text().as_deref(), Some("B"));
        assert_eq!(Chord::parse("+").unwrap().key.key, "+");
        assert_eq!(Chord::parse("Control++").unwrap().key.key, "+");
        for bad in ["", "Enterr", "Hyper+a", "Control+", "ab"] {
            assert!(Chord::parse(bad).is_err(), "{bad:?}");
        }
    }
}
